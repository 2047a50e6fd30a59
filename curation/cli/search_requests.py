"""The relations a ``search`` or ``suggest`` command is asked for, read from flags or a JSON lines file; they are
checked against the store's schemas and dictionaries by :mod:`curation.workflows.search` (:func:`resolve`,
:func:`check_applied`).

Every problem is a message naming its place (a flag of the command line, or a line and field of the file),
raised before anything is loaded or printed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from curation.errors import CurationError, InputError
from curation.workflows.search import MAX_TOP, SearchRequest, Where

QUERY_FIELDS = ("schema", "entities", "top", "id", "apply")


def parse_pairs(pairs: Sequence[str], flag: str) -> dict[str, str]:
    """``["Gene=BRAF", ...]`` → {"Gene": "BRAF"}; a pair without '=', an empty side or a slot given twice stops."""
    out: dict[str, str] = {}
    for pair in pairs:
        slot, sep, value = pair.partition("=")
        slot, value = slot.strip(), value.strip()
        shown = pair if len(pair) <= 60 else pair[:57] + "..."
        if not sep:
            raise CurationError(f"{flag} '{shown}': write SLOT=NAME, e.g. {flag} Gene=BRAF")
        if not slot:
            raise CurationError(f"{flag} '{shown}': no slot before '='; write SLOT=NAME, e.g. {flag} Gene=BRAF")
        if not value:
            raise CurationError(f"{flag} {slot}: the value is empty; write {slot}=NAME")
        if slot in out:
            raise CurationError(f"{flag} {slot} is given twice; give one name per slot")
        out[slot] = value
    return out


def read_queries(path: Path, default_schema: str | None, default_top: int) -> list[SearchRequest]:
    """The relations of a JSON lines file, one object per line (blank lines skipped).

    Raises:
        InputError: the file is missing or unreadable, or a line is not a relation; names the line and field.
    """
    requests = []
    number = 0
    try:
        with open(path, encoding="utf-8") as handle:
            for number, text in enumerate(handle, start=1):
                if text.strip():
                    requests.append(_request(text, default_schema, default_top, Where(path, number)))
    except FileNotFoundError:
        raise InputError(str(path), None, None, "no such file; give a JSON lines file of relations") from None
    except IsADirectoryError:
        raise InputError(str(path), None, None, "is a folder; give a JSON lines file of relations") from None
    except UnicodeDecodeError as exc:
        raise InputError(str(path), number + 1, None, f"not UTF-8 text ({exc.reason})") from None
    if not requests:
        raise InputError(str(path), None, None, 'no relations; write one JSON object a line, e.g. '
                         '{"schema": "PO", "entities": {"Gene": "BRAF", "Variant": "V600E"}}')
    return requests


def _request(text: str, default_schema: str | None, default_top: int, where: Where) -> SearchRequest:
    try:
        row = json.loads(text.strip())
    except json.JSONDecodeError as exc:
        raise where.error(None, f"not JSON ({exc.msg}, column {exc.colno})") from None
    if not isinstance(row, dict):
        raise where.error(None, 'not a JSON object; write e.g. {"schema": "PO", "entities": {"Gene": "BRAF"}}')
    unknown = [k for k in row if k not in QUERY_FIELDS]
    if unknown:
        raise where.error(str(unknown[0])[:60], f"unknown field; a relation has {', '.join(QUERY_FIELDS)}")
    schema = row.get("schema", default_schema)
    if schema is None:
        raise where.error("schema", 'missing; add "schema": "PO" to the line or pass --schema')
    if not isinstance(schema, str) or not schema.strip():
        raise where.error("schema", "must be a schema name such as \"PO\"")
    if "entities" not in row:
        raise where.error("entities", 'missing; write e.g. "entities": {"Gene": "BRAF", "Variant": "V600E"}')
    values = _names(row["entities"], "entities", where)
    if not values:
        raise where.error("entities", "empty; give at least one slot and name")
    top = row.get("top", default_top)
    if isinstance(top, bool) or not isinstance(top, int):
        raise where.error("top", f"must be a whole number of hits (1 to {MAX_TOP})")
    ident = row.get("id")
    if ident is not None and (isinstance(ident, bool) or not isinstance(ident, str | int)):
        raise where.error("id", "must be a string or a whole number")
    applied = _names(row.get("apply", {}), "apply", where)
    return SearchRequest(schema.strip(), values, top, applied, ident, where.line)


def _names(value: Any, name: str, where: Where) -> dict[str, str]:
    if not isinstance(value, dict):
        raise where.error(name, 'must be an object of slot → name, e.g. {"Gene": "BRAF"}')
    for slot, typed in value.items():
        if not isinstance(typed, str):
            raise where.error(name, "must be a string", slot)
        if not typed.strip():
            raise where.error(name, "is empty; give a name or leave the slot out", slot)
    return {slot.strip(): typed for slot, typed in value.items()}
