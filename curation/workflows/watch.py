"""Saved queries that watch the literature: save a partial relation, see what was added since your last look.

The Curate page saves the relation it searched with the concepts the search linked each slot to; the
saved list says, per query, how many abstracts were added since the curator last opened it that name
those concepts (:func:`curation.store.saved.new_since_last_look`); opening one marks it seen and shows those.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import duckdb

from curation import access
from curation.access import Action, Who
from curation.store.saved import (
    SavedQuery,
    delete_saved_query,
    list_saved_queries,
    mark_seen,
    new_since_last_look,
    save_query,
)


@dataclass(frozen=True)
class Watched:
    saved: SavedQuery
    new: tuple[str, ...]  # PMIDs added since the last look that name the query's concepts

    def label(self) -> str:
        relation = " · ".join(f"{slot} = {value}" for slot, value in self.saved.values.items())
        news = f"{len(self.new)} new since your last look" if self.new else "nothing new since your last look"
        return f"{relation} — {news}"


def save_search(con: duckdb.DuckDBPyConnection, curator: Who, schema: str, values: Mapping[str, str],
                concepts: Sequence) -> int:
    """Save the searched relation with each slot's linked concepts (the search's ``QueryConcept``s).

    Raises:
        CurationError: no curator, nothing typed, too many saved queries.
    """
    identity = access.require(con, curator, Action.SAVE_QUERY)
    linked = {c.slot: list(c.concept_ids) for c in concepts if getattr(c, "status", "") == "linked"}
    return save_query(con, identity.name, schema, values, linked)


def watched(con: duckdb.DuckDBPyConnection, curator: str, schema: str) -> list[Watched]:
    """The curator's saved queries of ``schema`` with what is new for each."""
    if not curator.strip():
        return []
    saved = list_saved_queries(con, curator, schema)
    return [Watched(s, tuple(new_since_last_look(con, s))) for s in saved]


def open_watched(con: duckdb.DuckDBPyConnection, item: Watched, curator: Who) -> tuple[dict[str, str], tuple[str, ...]]:
    """Mark the query seen; returns its values and the PMIDs that were new (what the page opens on).

    Raises:
        AccessDeniedError: ``curator`` may not save queries (marking one seen is a write).
    """
    identity = access.require(con, curator, Action.SAVE_QUERY)
    mark_seen(con, item.saved.query_id, identity.name)
    return dict(item.saved.values), item.new


def remove_watched(con: duckdb.DuckDBPyConnection, query_id: int, curator: Who) -> None:
    """Stop watching a saved query (the curator's own)."""
    identity = access.require(con, curator, Action.SAVE_QUERY)
    delete_saved_query(con, query_id, identity.name)
