"""Errors meant for a person: what was wrong, where, and what to do."""

from __future__ import annotations

from index.errors import RetrievalError


class CurationError(Exception):
    """Base class for every error this package raises on purpose."""


class InputError(CurationError):
    """A problem in an input file, named by file, line and field.

    Args:
        path: the file (or upload name) being read.
        line: 1-based line (or record) number, when known.
        field: the column / field / element that is wrong, when known.
        problem: what is wrong and, where possible, what to do about it.
    """

    def __init__(self, path: str, line: int | None, field: str | None, problem: str) -> None:
        self.path = str(path)
        self.line = line
        self.field = field
        self.problem = problem
        super().__init__(self.describe())

    def describe(self) -> str:
        where = self.path
        if self.line is not None:
            where += f", line {self.line}"
        if self.field:
            where += f", field '{self.field}'"
        return f"{where}: {self.problem}"


class EmptyFileError(InputError):
    """A file that was read whole and holds no records (nothing, or a header line only)."""

    def __init__(self, path: str) -> None:
        super().__init__(path, None, None, "the file has no records (nothing, or a header line only); nothing was "
                                           "imported from it: check that it is the file meant")


class AccessDeniedError(CurationError):
    """Team mode: the person's roles do not allow what they tried; nothing was written."""


class SignInExpiredError(AccessDeniedError):
    """Team mode: the person's sign-in ended (it expired, or they signed out) before a write; nothing was written."""


class SchemaError(CurationError):
    """An unknown or malformed relation schema."""


class StoreLockedError(CurationError):
    """The DuckDB file is held read-write by another process."""


class StoreDamagedError(CurationError):
    """The DuckDB file or its write-ahead log cannot be read (``python -m curation recover``)."""


class StoreUncheckpointedError(CurationError):
    """A read-only open found a write-ahead log its last writer left unapplied; the store needs a read-write
    open first (:func:`curation.store.opening.open_store`)."""


class NetworkError(CurationError):
    """A remote service (NCBI, CIViC) could not be reached."""


#: Every error raised on purpose with a message for a person, from this package or from the retrieval
#: package (``index`` cannot import this module, so its errors have their own base): what pages, the CLI
#: and the worker catch to show a message instead of a traceback.
USER_ERRORS: tuple[type[Exception], ...] = (CurationError, RetrievalError)
