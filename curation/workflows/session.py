"""What every page asks of the store: whether there is a corpus, the schemas, the counts the sidebar shows.

Pages reach the domain through ``curation.workflows`` only (the import contract); these are the small
questions every page shares, answered from the connection the page holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from curation import access
from curation.access import Action, Who
from curation.schemas import RelationSchema, resolve_schema
from curation.store.base import content_counts, list_schemas, stats
from curation.store.decisions import MAX_CURATOR
from curation.store.reconcile import Notice, acknowledge_notice, open_notices
from curation.workflows import retrain, versions

DEFAULT_SCHEMA = "PO"
MAX_CURATOR_NAME = MAX_CURATOR  # characters of a curator's name (a longer one is refused with the reason)


def corpus_size(con: duckdb.DuckDBPyConnection) -> int:
    """How many abstracts the store holds (0: the pages point to the Knowledge base page)."""
    return content_counts(con)[0]


def content_fingerprint(con: duckdb.DuckDBPyConnection) -> tuple[int, int, int]:
    """Changes when documents, imported KB records or synonyms are added (to refresh cached resources)."""
    return content_counts(con)


def store_counts(con: duckdb.DuckDBPyConnection) -> dict[str, object]:
    """KB records, abstracts, decisions, ... by table (the sidebar's and the Knowledge base page's figures)."""
    return stats(con)


def schemas(con: duckdb.DuckDBPyConnection) -> list[RelationSchema]:
    """The relation schemas the store knows (built-in and user-defined)."""
    return list_schemas(con)


def current_schema(con: duckdb.DuckDBPyConnection, name: str | None) -> RelationSchema:
    """The schema chosen in the sidebar, or the default one before a choice is made.

    Raises:
        SchemaError: ``name`` is not a schema of this store.
    """
    return resolve_schema(name or DEFAULT_SCHEMA, list_schemas(con))


def schema_or_first(con: duckdb.DuckDBPyConnection, name: str) -> RelationSchema:
    """The schema named ``name``, else the store's first (a selection that no longer exists)."""
    known = list_schemas(con)
    return next((s for s in known if s.name == name), known[0])


def store_notices(con: duckdb.DuckDBPyConnection) -> list[Notice]:
    """What the store's last opening repaired from the decision journal, or found wrong with it, that no
    curator has acknowledged yet (every page shows these until someone clicks them away)."""
    return open_notices(con)


def may_dismiss_notices(con: duckdb.DuckDBPyConnection, who: Who) -> bool:
    """Whether ``who`` is shown the notices' "Got it" (a dismissed notice is hidden from everyone)."""
    return access.allowed(con, who, Action.DISMISS_NOTICES)


def acknowledge(con: duckdb.DuckDBPyConnection, notice_id: int, who: Who) -> None:
    """Mark a notice read; it stays in the store (``store_notices``) with who read it.

    Raises:
        AccessDeniedError: ``who`` may not dismiss notices (on a team store, maintainers only).
    """
    identity = access.require(con, who, Action.DISMISS_NOTICES)
    acknowledge_notice(con, notice_id, identity.name)


def curator_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a curator's name (None: it can; "" is no curator yet, not a problem)."""
    if len(name) > MAX_CURATOR_NAME:
        return f"The curator name has {len(name):,} characters; at most {MAX_CURATOR_NAME}: shorten it."
    return None


@dataclass(frozen=True)
class SidebarView:
    """What the sidebar shows on every page under the curator's name.

    Attributes:
        schemas: the store's relation schemas by name (the schema picker's choices).
        store_line: the store's KB records, abstracts and decisions.
        model_line: the active model version of the schema in use, or what serves without one.
        job_line: the queued or running background job ("" when none).
    """

    schemas: tuple[str, ...]
    store_line: str
    model_line: str
    job_line: str = ""


def store_line(con: duckdb.DuckDBPyConnection) -> str:
    """The store's KB records, abstracts and decisions, in one line (the sidebar's, and the load's progress)."""
    counts = stats(con)
    return (f"Store: {counts['kb_records']:,} KB records · {counts['documents']:,} abstracts · "
            f"{counts['decisions']:,} decisions")


def model_line(con: duckdb.DuckDBPyConnection, schema: str, active: str) -> str:
    """What ranks ``schema``'s searches, in the words every page uses: the active version, the newest version built
    for the schema when none is active, an untrained version of another schema, or BM25 alone (found without loading
    anything)."""
    from curation.config import load_settings
    from curation.versions import serving as served

    planned = served.planned_version(con, load_settings().models_dir, served.serving_key(con, schema))
    if planned == served.BM25_ONLY:
        return f"Model: BM25 alone (no model version built for {schema} covers this store's abstracts)"
    if planned == active:
        return f"Model: {planned} (active)"
    if active:  # the active one cannot serve (it no longer covers the store, or its files are damaged)
        return f"Model: {planned} (the active {active} cannot serve; see Train & evaluate)"
    if built_for := served.shared_base(con, schema, planned):
        return (f"Model: {planned} (the untrained base encoder, built for {built_for}; none built for {schema} yet: "
                f"Train & evaluate builds one)")
    return f"Model: {planned} (the newest version built for {schema}; none activated)"


def sidebar_view(con: duckdb.DuckDBPyConnection, schema: str | None,
                 before_activate: Callable[[Path], None] | None = None, *, who: Who = "") -> SidebarView:
    """The sidebar's figures for the schema in use (``schema``; None, or one the store has not: the store's first).

    The current job is brought up to date first (:func:`curation.workflows.retrain.current_job`, with
    ``before_activate``): finished, and its version swapped in, when done and ``who`` may.
    """
    names = tuple(s.name for s in list_schemas(con))
    if schema not in names:  # none chosen, or an address naming one the store has not: the first
        schema = names[0] if names else ""
    active = versions.active_version(con, schema)
    job = retrain.current_job(con, before_activate=before_activate, who=who)
    return SidebarView(
        names,
        store_line(con),
        model_line(con, schema, active.version if active else ""),
        retrain.status_line(job) if job is not None else "",
    )

