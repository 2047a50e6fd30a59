"""versions."""
