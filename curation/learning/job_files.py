"""What a learner and the app exchange through a job folder, read back the same way by every learner: its request
(``request.json``) as its dataclass, and a JSON lines file the worker wrote for the app (a header, then one line a
document, e.g. a recogniser's ``annotations.jsonl``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import asdict, fields
from pathlib import Path
from typing import ClassVar, Self, TypeVar

from curation.errors import CurationError

T = TypeVar("T")


class JobRequest:
    """A job's request dataclass as ``request.json``: :meth:`to_dict` its fields, :meth:`from_dict` read back
    checked (:data:`WHAT`: how an error message names it)."""

    WHAT: ClassVar[str] = "request"

    def to_dict(self) -> dict:
        return asdict(self)  # type: ignore[call-overload]

    @classmethod
    def from_dict(cls, data: dict, where: str | None = None) -> Self:
        return request_from_dict(cls, data, where or cls.WHAT)


def request_from_dict(cls: type[T], data: dict, where: str) -> T:
    """``data`` as the request dataclass ``cls``.

    Raises:
        CurationError: an unknown field, or a value the dataclass refuses (the message starts with ``where``).
    """
    unknown = sorted(set(data) - {f.name for f in fields(cls)})  # type: ignore[arg-type]
    if unknown:
        raise CurationError(f"{where}: unknown fields {unknown}")
    try:
        return cls(**data)
    except TypeError as exc:
        raise CurationError(f"{where}: {exc}") from None


def read_worker_lines(path: Path, header_key: str, what: str, parse: Callable[[dict], T]
                      ) -> tuple[str, Iterator[T]]:
    """A JSON lines file a worker wrote for the app: the header's ``header_key`` and its lines, each parsed by
    ``parse`` (read lazily; ``parse`` raises KeyError, TypeError or ValueError for a bad line).

    Raises:
        CurationError: the file is missing, its header is not one, or (while iterating) a line is corrupted;
            the message names the file and line.
    """
    path = Path(path)
    try:
        handle = path.open(encoding="utf-8")
    except FileNotFoundError:
        raise CurationError(f"{path}: the worker's {what} are missing") from None
    try:
        header = str(json.loads(handle.readline() or "{}")[header_key])
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        handle.close()
        raise CurationError(f"{path}, line 1: not a {what} file ({exc})") from None

    def lines() -> Iterator[T]:
        with handle:
            for number, line in enumerate(handle, start=2):
                try:
                    yield parse(json.loads(line))
                except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                    raise CurationError(f"{path}, line {number}: corrupted ({exc})") from None

    return header, lines()
