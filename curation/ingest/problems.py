"""Collecting row problems: strict mode raises at the first one, lenient mode keeps going."""

from __future__ import annotations

from pathlib import Path

from curation.errors import InputError


class Problems:
    """Where a loader reports a bad row.

    In strict mode (the default) the first problem raises :class:`InputError`, so the
    caller's transaction is rolled back and nothing is half-written. In lenient mode the
    row is skipped and the message kept for the summary.

    Args:
        path: the file being read (used in every message).
        lenient: skip bad rows instead of failing.
    """

    def __init__(self, path: str | Path, lenient: bool = False) -> None:
        self.path = str(path)
        self.lenient = lenient
        self.skipped: list[str] = []

    def report(self, line: int | None, field: str | None, problem: str) -> None:
        """Report one bad row. Raises unless lenient."""
        error = InputError(self.path, line, field, problem)
        if not self.lenient:
            raise error
        self.skipped.append(error.describe())

    def fail(self, line: int | None, field: str | None, problem: str) -> InputError:
        """A problem that makes the whole file unreadable, lenient or not (raise the result)."""
        return InputError(self.path, line, field, problem)
