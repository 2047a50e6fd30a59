"""Frozen dataclasses to and from the JSON files the app writes and reads back, strictly.

:func:`decode` builds a dataclass from parsed JSON by its type annotations: every field must
be present (unless its metadata says ``optional``: a key older files lack, read as the
default), no other key may be, and every value must have the annotated type (an int is
accepted where a float is expected; a bool is never a number). A problem raises ``error``
naming the file (``where``) and the field (``training.report.kb``). :func:`encode` is the
inverse (``dataclasses.asdict``); files are written with :func:`curation.files.write_atomic`.

Supported annotations: ``str``, ``int``, ``float``, ``bool``, ``object`` (any JSON value, kept
as is), ``X | None``, ``Literal[...]``, ``tuple[X, ...]``, ``tuple[X, Y]``, ``Mapping[str, X]``
and nested dataclasses. The manifest (:mod:`curation.versions.manifest`) and the job result
(:mod:`curation.jobs.result`) are read and written through here.
"""

from __future__ import annotations

import functools
import json
import types
import typing
from collections.abc import Mapping
from dataclasses import MISSING, asdict, fields, is_dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args, get_origin, get_type_hints

T = TypeVar("T")

#: ``field(metadata=OPTIONAL)``: the key may be absent from a file (files written before it existed).
OPTIONAL = {"optional": True}


def check_format(data: Mapping[str, object], newest: int, where: str, error: type[Exception], what: str,
                 hint: str = "") -> int:
    """The ``format`` of a decoded file (1 when absent), refused when invalid or newer than ``newest``.

    ``what`` names the kind of file in the message ("manifest", "result"); ``hint`` is appended to the
    message of a newer format (what to do about it).
    """
    version = data.get("format", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise error(f"{where}: field 'format' must be a positive integer, got {version!r}")
    if version > newest:
        raise error(f"{where}: {what} format {version} was written by a newer version of the app "
                    f"(this one reads format {newest}){hint}")
    return version


def decode(cls: type[T], data: object, where: str, error: type[Exception], prefix: str = "") -> T:
    """``cls`` from parsed JSON ``data``.

    Raises:
        error: ``data`` is not an object, a required key is missing, an unknown key is present
            or a value has the wrong type; the message names ``where`` and the field.
    """
    if not isinstance(data, dict):
        raise error(f"{where}: {_name(prefix) or 'the file'} must be a JSON object, got {_kind(data)}")
    hints = _hints(cls)
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        listed = ", ".join(f"'{prefix}{key}'" for key in unknown)
        raise error(f"{where}: unknown field{'s' if len(unknown) > 1 else ''} {listed}")
    values = {}
    for name, spec in known.items():
        if name not in data:
            if spec.metadata.get("optional") and (spec.default is not MISSING or spec.default_factory is not MISSING):
                continue
            raise error(f"{where}: field '{prefix}{name}' is missing")
        values[name] = _value(hints[name], data[name], where, f"{prefix}{name}", error)
    try:
        return cls(**values)
    except (TypeError, ValueError) as exc:  # a dataclass's own checks (__post_init__)
        raise error(f"{where}: {_name(prefix) or 'the file'} is invalid ({exc})") from None


@functools.cache
def _hints(cls: type) -> dict[str, object]:
    return get_type_hints(cls)


def encode(obj: object) -> dict[str, Any]:
    """The JSON object of a dataclass (tuples become lists when dumped)."""
    return asdict(obj)


def load_json(path: Path, error: type[Exception], what: str) -> object:
    """Parsed JSON of ``path``.

    Raises:
        FileNotFoundError: there is no such file (the caller says what that means).
        error: the file cannot be read or is not JSON (the message names it and says it is ``what``).
    """
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise error(f"{path} is corrupted ({exc}); the {what} cannot be used") from None
    except OSError as exc:
        raise error(f"{path} cannot be read ({exc.strerror or exc}); the {what} cannot be used") from None


def _value(tp: object, value: object, where: str, name: str, error: type[Exception]) -> object:
    origin, args = get_origin(tp), get_args(tp)
    if tp is object or tp is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        if len(options) != 1:
            raise TypeError(f"unsupported annotation {tp} for {name}")
        return _value(options[0], value, where, name, error)
    if origin is Literal:
        if not any(value == a and type(value) is type(a) for a in args):
            raise error(f"{where}: field '{name}' must be one of {', '.join(map(repr, args))}, got {value!r}")
        return value
    if isinstance(tp, type) and is_dataclass(tp):
        return decode(tp, value, where, error, prefix=f"{name}.")
    if tp is bool:
        return _check(value, isinstance(value, bool), "true or false", where, name, error)
    if tp is int:
        return _check(value, isinstance(value, int) and not isinstance(value, bool), "an integer", where, name, error)
    if tp is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return float(_check(value, ok, "a number", where, name, error))
    if tp is str:
        return _check(value, isinstance(value, str), "a string", where, name, error)
    if origin is tuple:
        _check(value, isinstance(value, list), "a list", where, name, error)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_value(args[0], v, where, f"{name}[{i}]", error) for i, v in enumerate(value))
        if len(value) != len(args):
            raise error(f"{where}: field '{name}' must be a list of {len(args)} items, got {len(value)}")
        pairs = enumerate(zip(args, value, strict=True))
        return tuple(_value(a, v, where, f"{name}[{i}]", error) for i, (a, v) in pairs)
    if origin in (Mapping, dict):
        _check(value, isinstance(value, dict), "a JSON object", where, name, error)
        return {key: _value(args[1], v, where, f"{name}.{key}", error) for key, v in value.items()}
    raise TypeError(f"unsupported annotation {tp} for {name}")


def _check(value: object, ok: bool, expected: str, where: str, name: str, error: type[Exception]) -> object:
    if not ok:
        raise error(f"{where}: field '{name}' must be {expected}, got {_kind(value)}")
    return value


def _kind(value: object) -> str:
    if value is None:
        return "null"
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
             dict: "an object"}
    shown = repr(value) if isinstance(value, bool | int | float | str) and len(repr(value)) <= 40 else ""
    return f"{names.get(type(value), type(value).__name__)}{f' ({shown})' if shown else ''}"


def _name(prefix: str) -> str:
    return f"field '{prefix[:-1]}'" if prefix else ""
