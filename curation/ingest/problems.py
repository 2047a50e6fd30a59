"""Collecting row problems: strict mode raises at the first one, lenient mode keeps going."""

from __future__ import annotations

from pathlib import Path

from curation.errors import InputError


class Problems:
    """Where a loader reports a bad row, a part of a file it leaves out, or a row it reads with a warning.

    In strict mode (the default) the first problem raises :class:`InputError`, so the
    caller's transaction is rolled back and nothing is half-written. In lenient mode the
    row is skipped and the message kept for the summary. A loader whose records stand on their
    own (a PubTator document) skips a bad one in either mode (:meth:`skip`), and keeps a row it
    reads other than as written with a warning (:meth:`warn`).

    Args:
        path: the file being read (used in every message).
        lenient: skip bad rows instead of failing.
    """

    def __init__(self, path: str | Path, lenient: bool = False) -> None:
        self.path = str(path)
        self.lenient = lenient
        self.skipped: list[str] = []
        self.warnings: list[str] = []

    def report(self, line: int | None, field: str | None, problem: str) -> None:
        """Report one bad row. Raises unless lenient."""
        error = InputError(self.path, line, field, problem)
        if not self.lenient:
            raise error
        self.skipped.append(error.describe())

    def skip(self, line: int | None, field: str | None, problem: str) -> None:
        """A record left out on its own, strict or lenient (the file's other records are read)."""
        self.skipped.append(InputError(self.path, line, field, problem).describe())

    def warn(self, line: int | None, field: str | None, problem: str) -> None:
        """A record kept, read other than as written (``problem`` says how)."""
        self.warnings.append(InputError(self.path, line, field, problem).describe())

    def fail(self, line: int | None, field: str | None, problem: str) -> InputError:
        """A problem that makes the whole file unreadable, lenient or not (raise the result)."""
        return InputError(self.path, line, field, problem)
