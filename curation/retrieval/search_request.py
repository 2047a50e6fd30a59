"""A relation asked for by a command (flags or a line of a ``--queries`` file), checked against the store's schemas
and dictionaries: the schema and slots spelt as the schema spells them, each typed name checked, an applied concept
id known; a problem names its place (the flag, or the file, line and field) for a person.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from curation.entities.query import MAX_TYPED_CHARS, RULE_KINDS, QueryError, check_typed
from curation.entities.variants import variant_keys
from curation.errors import CurationError, InputError
from curation.schemas import RelationSchema

__all__ = ["DEFAULT_TOP", "FLAGS", "MAX_TOP", "SearchRequest", "Where", "check_applied", "resolve"]

MAX_TOP = 1000  # hits per relation
DEFAULT_TOP = 20


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
