"""The relations a ``search`` or ``suggest`` command is asked for: read from flags or a JSON lines file, then
checked against the store's schemas and dictionaries.

Every problem is a message naming its place (a flag of the command line, or a line and field of the file),
raised before anything is loaded or printed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curation.entities.query import MAX_TYPED_CHARS, RULE_KINDS, QueryError, check_typed
from curation.entities.variants import variant_keys
from curation.errors import CurationError, InputError
from curation.schemas import RelationSchema

MAX_TOP = 1000  # hits per relation
DEFAULT_TOP = 20
QUERY_FIELDS = ("schema", "entities", "top", "id", "apply")


@dataclass(frozen=True)
class SearchRequest:
    """One relation to search, as given (checked against the store's schemas by :func:`resolve`).

    Attributes:
        schema: the schema name.
        values: slot → typed name.
        top: how many hits.
        applied: slot → concept id chosen among the suggestions.
        id: the caller's id (JSON lines), or None.
        line: the line of the ``--queries`` file (None for ``--entity``).
    """

    schema: str
    values: Mapping[str, str]
    top: int = DEFAULT_TOP
    applied: Mapping[str, str] = field(default_factory=dict)
    id: str | int | None = None
    line: int | None = None


FLAGS = {"schema": "--schema", "entities": "--entity", "apply": "--apply", "top": "--top"}  # field -> its flag


class Where:
    """Names the place of a problem: a flag of the command line, or a field of a line of the file."""

    def __init__(self, path: Path | None = None, line: int | None = None) -> None:
        self.path, self.line = path, line

    def name(self, field_name: str, slot: str = "") -> str:
        """How a person knows the field: ``entities.Gene`` in a file, ``--entity`` on the command line."""
        if self.path is None:
            return FLAGS.get(field_name, field_name)
        return f"{field_name}.{slot[:60]}" if slot else field_name

    def error(self, field_name: str | None, problem: str, slot: str = "") -> CurationError:
        where = self.name(field_name, slot) if field_name else None
        if self.path is None:
            return CurationError(f"{where}: {problem}" if where else problem)
        return InputError(str(self.path), self.line, where, problem)


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


# --- checking them against the store ------------------------------------------------------------


def resolve(request: SearchRequest, schemas: Mapping[str, RelationSchema], where: Where
            ) -> tuple[RelationSchema, SearchRequest]:
    """The request's schema, and the request with its slots spelt as the schema spells them.

    Raises:
        CurationError: an unknown schema or slot, the answer slot given, a name too long, a top out of range.
    """
    found = {name.casefold(): s for name, s in schemas.items()}.get(request.schema.casefold())
    if found is None:
        raise where.error("schema", f"unknown schema '{request.schema[:60]}'; this store knows {', '.join(schemas)} "
                          "(add one with `python -m curation add-schemas`)")
    if not 1 <= request.top <= MAX_TOP:
        raise where.error("top", f"{request.top} hits asked; ask for 1 to {MAX_TOP}")
    values = {}
    for slot, typed in request.values.items():
        spelt = _slot(found, slot, "entities", where)
        if spelt in values:
            raise where.error("entities", f"{spelt} is given twice; give one name per slot", spelt)
        try:
            values[spelt] = check_typed(spelt, typed)
        except QueryError as exc:
            raise where.error("entities", str(exc), spelt) from None
    applied = {}
    for slot, concept in request.applied.items():
        spelt = _slot(found, slot, "apply", where)
        if spelt in applied:
            raise where.error("apply", f"{spelt} is applied twice; apply one concept per slot", spelt)
        if spelt not in values:
            raise where.error("apply", f"{spelt} is applied but not typed; give its name too "
                                       f"({where.name('entities', spelt)})", spelt)
        if len(concept) > MAX_TYPED_CHARS:
            raise where.error("apply", f"a concept id has at most {MAX_TYPED_CHARS} characters", spelt)
        applied[spelt] = concept.strip()
    return found, SearchRequest(found.name, values, request.top, applied, request.id, request.line)


def _slot(schema: RelationSchema, slot: str, field_name: str, where: Where) -> str:
    for name in schema.query_types:
        if name.casefold() == slot.casefold():
            return name
    if slot.casefold() == schema.answer.casefold():
        raise where.error(field_name, f"{schema.answer} is what a {schema.name} search looks for, not a slot to "
                                      f"fill; fill {', '.join(schema.query_types)}", slot)
    raise where.error(field_name, f"'{slot[:60]}' is not a slot of {schema.name}; its slots are "
                                  f"{', '.join(schema.query_types)}", slot)


def check_applied(request: SearchRequest, schema: RelationSchema, lexicon, where: Where) -> None:
    """An applied concept id the dictionaries (or, for a variant, the notation rules) do not know stops."""
    for slot, concept in request.applied.items():
        kind = schema.kind(slot)
        known = bool(variant_keys(concept)) if kind == "variant" else (
            kind in RULE_KINDS or kind == "generic" or bool(lexicon.canonical(kind, concept)))
        if not known:
            raise where.error("apply", f"no {kind} concept has the id '{concept[:60]}'; apply one of the ids the "
                                       f"search lists as alternatives for {slot}", slot)
