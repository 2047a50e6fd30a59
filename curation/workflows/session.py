"""What every page asks of the store: whether there is a corpus, the schemas, the counts the sidebar shows.

Pages reach the domain through ``curation.workflows`` only (the import contract); these are the small
questions every page shares, answered from the connection the page holds.
"""

from __future__ import annotations

import duckdb

from curation import store
from curation.schemas import RelationSchema, resolve_schema
from curation.store.reconcile import Notice, acknowledge_notice, open_notices

DEFAULT_SCHEMA = "PO"
MAX_CURATOR_NAME = store.MAX_CURATOR  # characters of a curator's name (a longer one is refused with the reason)


def corpus_size(con: duckdb.DuckDBPyConnection) -> int:
    """How many abstracts the store holds (0: the pages point to the Knowledge base page)."""
    return store.content_counts(con)[0]


def content_fingerprint(con: duckdb.DuckDBPyConnection) -> tuple[int, int, int]:
    """Changes when documents, imported KB records or synonyms are added (to refresh cached resources)."""
    return store.content_counts(con)


def store_counts(con: duckdb.DuckDBPyConnection) -> dict[str, object]:
    """KB records, abstracts, decisions, ... by table (the sidebar's and the Knowledge base page's figures)."""
    return store.stats(con)


def schemas(con: duckdb.DuckDBPyConnection) -> list[RelationSchema]:
    """The relation schemas the store knows (built-in and user-defined)."""
    return store.list_schemas(con)


def current_schema(con: duckdb.DuckDBPyConnection, name: str | None) -> RelationSchema:
    """The schema chosen in the sidebar, or the default one before a choice is made.

    Raises:
        SchemaError: ``name`` is not a schema of this store.
    """
    return resolve_schema(name or DEFAULT_SCHEMA, store.list_schemas(con))


def schema_or_first(con: duckdb.DuckDBPyConnection, name: str) -> RelationSchema:
    """The schema named ``name``, else the store's first (a selection that no longer exists)."""
    known = store.list_schemas(con)
    return next((s for s in known if s.name == name), known[0])


def store_notices(con: duckdb.DuckDBPyConnection) -> list[Notice]:
    """What the store's last opening repaired from the decision journal, or found wrong with it, that no
    curator has acknowledged yet (every page shows these until someone clicks them away)."""
    return open_notices(con)


def acknowledge(con: duckdb.DuckDBPyConnection, notice_id: int, who: str) -> None:
    """Mark a notice read; it stays in the store (``store_notices``) with who read it."""
    acknowledge_notice(con, notice_id, who)


def curator_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a curator's name (None: it can; "" is no curator yet, not a problem)."""
    if len(name) > MAX_CURATOR_NAME:
        return f"The curator name has {len(name):,} characters; at most {MAX_CURATOR_NAME}: shorten it."
    return None
