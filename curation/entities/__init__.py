"""entities."""
