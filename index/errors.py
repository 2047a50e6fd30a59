"""Errors the retrieval package raises on purpose; each message is meant for a person."""

from __future__ import annotations


class RetrievalError(Exception):
    """Base class for every error this package raises on purpose (a missing index, an unreachable model, ...)."""
