"""Moved to :mod:`curation.learning.recogniser.shipped` (the recogniser's home); these names stay here for bench/,
which imports them from this path."""

from __future__ import annotations

from curation.learning.recogniser.shipped import SHIPPED, shipped_recogniser

__all__ = ["SHIPPED", "shipped_recogniser"]
