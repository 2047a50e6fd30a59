"""Relation schemas while the app runs: add, edit and remove them (Knowledge base page), and ``CURATION_SCHEMAS``.

A schema is checked whole before it is saved (:func:`curation.schemas.schema_from_dict`: names, slots, templates,
kinds), and the page previews the query each template makes. What the store already holds of a schema decides what
may change: its KB records, decisions and screening topics name its entity types, so a schema in use keeps its name,
entity types and answer (templates, kinds, columns, description and species may change), and only an unused schema
is removed. PO and PTM are built in and never change.

``CURATION_SCHEMAS`` (a TOML file of ``[[schema]]`` tables) is read whenever the store is opened for writing (the
app's start, and every command that writes): its schemas are saved into the store under the same rules, so every
page and command, read-only ones included, knows them from then on. Before any such opening, read-only commands
read the file themselves (:func:`known_schemas`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import duckdb

from curation import access
from curation.access import Action, Who
from curation.errors import SchemaError
from curation.schemas import BUILTIN, KINDS, SPECIES, RelationSchema, load_schemas, schema_from_dict
from curation.store.base import add_schema, list_schemas, remove_schema, schema_use, transaction

__all__ = ["KINDS", "SPECIES", "SchemaDraft", "apply_schema_file", "delete_schema", "draft", "known_schemas",
           "save_schema", "schema_in_use"]


@dataclass(frozen=True)
class SchemaDraft:
    """A schema typed on the page, checked: the schema (None: ``error`` says why) and each template's query for
    example values (the slot names in angle brackets)."""

    schema: RelationSchema | None
    error: str
    examples: tuple[tuple[str, str], ...] = ()  # (template, the query it makes)


def _lines(text: str, sep: str) -> list[str]:
    return [part.strip() for part in text.replace("\n", sep).split(sep) if part.strip()]


def draft(name: str, entity_types: str, answer: str, templates: str, kinds: Mapping[str, str],
          description: str = "", species: str = "human") -> SchemaDraft:
    """Check a schema as the page's form gives it: entity types comma-separated, one template per line, a kind per
    entity type (absent: "generic")."""
    types = _lines(entity_types, ",")
    data = {"name": name.strip(), "entity_types": types, "answer": answer.strip(),
            "templates": _lines(templates, "\n"), "kinds": {t: kinds.get(t, "generic") for t in types},
            "columns": {**{t: t.lower().replace(" ", "_") for t in types}, "pmid": "pmid"},
            "description": description.strip(), "species": species}
    try:
        schema = schema_from_dict(data, where="schema")
    except SchemaError as exc:
        return SchemaDraft(None, str(exc))
    example = {t: f"<{t}>" for t in schema.query_types}
    shown = []
    for template in schema.templates:
        one = RelationSchema(schema.name, schema.entity_types, schema.answer, (template,))
        shown.append((template, one.render_query(example)))
    return SchemaDraft(schema, "", tuple(shown))


def schema_in_use(con: duckdb.DuckDBPyConnection, name: str) -> dict[str, int]:
    """What the store holds of schema ``name`` (KB records, decisions, screening topics; only those it has)."""
    return schema_use(con, name)


def _in_use_text(use: Mapping[str, int]) -> str:
    return ", ".join(f"{n} {what}" for what, n in use.items())


def _check_change(con: duckdb.DuckDBPyConnection, schema: RelationSchema, replacing: str, where: str) -> None:
    """Raise SchemaError if saving ``schema`` over ``replacing`` would change what the store's rows of it name."""
    if schema.name in BUILTIN or replacing in BUILTIN:
        raise SchemaError(f"{where}: {schema.name if schema.name in BUILTIN else replacing} is built in and cannot "
                          "change; save yours under another name")
    stored = {s.name: s for s in list_schemas(con)}
    if not replacing and schema.name in stored:
        raise SchemaError(f"{where}: a schema named {schema.name} exists; edit it, or choose another name")
    old = stored.get(replacing)
    use = schema_in_use(con, replacing) if old is not None else {}
    if not use:
        return
    if schema.name != replacing:
        raise SchemaError(f"{where}: {replacing} cannot be renamed: the store has {_in_use_text(use)} of it")
    if (schema.entity_types, schema.answer) != (old.entity_types, old.answer):
        raise SchemaError(f"{where}: the entity types and answer of {replacing} cannot change: the store has "
                          f"{_in_use_text(use)} of it (templates, kinds and the description may)")


def save_schema(con: duckdb.DuckDBPyConnection, who: Who, schema: RelationSchema, replacing: str = "") -> None:
    """Save ``schema``, new (``replacing`` "") or in place of the schema named ``replacing`` (see the module docstring).

    Raises:
        AccessDenied: ``who`` may not import into the store.
        SchemaError: the change is not allowed; the message says why.
    """
    access.require(con, who, Action.IMPORT)
    with transaction(con):
        _check_change(con, schema, replacing, f"schema {schema.name}")
        if replacing and replacing != schema.name:
            remove_schema(con, replacing)
        add_schema(con, schema)


def delete_schema(con: duckdb.DuckDBPyConnection, who: Who, name: str) -> None:
    """Remove the unused, user-defined schema ``name``.

    Raises:
        AccessDenied: ``who`` may not import into the store.
        SchemaError: built in, unknown, or in use (the message counts what uses it).
    """
    access.require(con, who, Action.IMPORT)
    if name in BUILTIN:
        raise SchemaError(f"{name} is built in and cannot be removed")
    with transaction(con):
        use = schema_in_use(con, name)
        if use:
            raise SchemaError(f"{name} cannot be removed: the store has {_in_use_text(use)} of it")
        if not remove_schema(con, name):
            raise SchemaError(f"no schema named {name} in this store")


def apply_schema_file(con: duckdb.DuckDBPyConnection, path: str | Path) -> list[str]:
    """Save the schemas of a ``CURATION_SCHEMAS`` file into the store (new ones added, changed ones replaced under
    :func:`save_schema`'s rules); returns their names. Nothing is saved when any of them fails.

    Raises:
        SchemaError: the file cannot be read, or one of its schemas is malformed or not allowed (named).
    """
    schemas = load_schemas(path)
    stored = {s.name: s for s in list_schemas(con)}
    with transaction(con):
        for schema in schemas:
            if stored.get(schema.name) == schema:
                continue
            _check_change(con, schema, schema.name if schema.name in stored else "", f"{path}: schema {schema.name}")
            add_schema(con, schema)
    return [s.name for s in schemas]


def known_schemas(con: duckdb.DuckDBPyConnection, path: str | Path | None) -> list[RelationSchema]:
    """The store's schemas, and those of a ``CURATION_SCHEMAS`` file it does not hold yet (a read-only command
    before any write opened the store).

    Raises:
        SchemaError: the file cannot be read or a schema in it is malformed (named).
    """
    stored = list_schemas(con)
    if not path:
        return stored
    names = {s.name for s in stored}
    return stored + [s for s in load_schemas(path) if s.name not in names]


def add_schemas(con: duckdb.DuckDBPyConnection, who: Who, path: str | Path) -> list[RelationSchema]:
    """Add (or replace) the schemas of a TOML file (``python -m curation add-schemas``), all in one transaction.

    Raises:
        AccessDenied: ``who`` may not import into the store.
        SchemaError: the file cannot be read or a schema in it is malformed (named).
    """
    access.require(con, who, Action.IMPORT)
    schemas = load_schemas(path)
    with transaction(con):
        for schema in schemas:
            add_schema(con, schema)
    return schemas


def schema_file_note(con: duckdb.DuckDBPyConnection, path: Path | None) -> tuple[bool, str]:
    """What the Knowledge base page says about ``CURATION_SCHEMAS``: (fine, text); "" when it is not set."""
    if path is None:
        return True, ""
    try:
        schemas = load_schemas(path)
    except SchemaError as exc:
        return False, f"CURATION_SCHEMAS is not applied: {exc}"
    stored = {s.name: s for s in list_schemas(con)}
    names = [s.name for s in schemas]
    if off := [s.name for s in schemas if stored.get(s.name) != s]:
        return False, (f"CURATION_SCHEMAS ({path}): {', '.join(off)} not saved as the file has them (a schema of "
                       "this store that is in use cannot change that way); the app's log says why")
    return True, f"CURATION_SCHEMAS ({path}): {', '.join(names)} saved in this store"
