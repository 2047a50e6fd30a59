"""Saved queries: a curator's partial relation, watched for abstracts added since the curator last looked.

A saved query keeps the typed values and, per slot, the concept ids its search linked them to; "new since
your last look" counts the documents added after ``last_seen_at`` whose stored annotations (the concept
index) name a concept of every linked slot — an SQL count, no search run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import duckdb

from curation.errors import CurationError

MAX_SAVED = 200  # per curator

SQL_SAVE = """
INSERT INTO saved_queries (curator, schema_name, query_entities, concepts) VALUES (?, ?, ?, ?)
ON CONFLICT (curator, schema_name, query_entities) DO UPDATE SET concepts = excluded.concepts
RETURNING query_id
"""
SQL_LIST = """
SELECT query_id, curator, schema_name, query_entities, concepts, CAST(created_at AS VARCHAR),
       CAST(last_seen_at AS VARCHAR)
FROM saved_queries WHERE curator = ? AND schema_name = ? ORDER BY query_id
"""
SQL_COUNT = "SELECT count(*) FROM saved_queries WHERE curator = ?"
SQL_SEEN = "UPDATE saved_queries SET last_seen_at = now() WHERE query_id = ? AND curator = ?"
SQL_DELETE = "DELETE FROM saved_queries WHERE query_id = ? AND curator = ?"
SQL_NEW_DOCUMENTS = "SELECT pmid FROM documents WHERE added_at > CAST(? AS TIMESTAMPTZ)"
SQL_NEW_WITH_CONCEPT = """
SELECT DISTINCT a.pmid FROM annotations a JOIN documents d USING (pmid)
WHERE d.added_at > CAST(? AS TIMESTAMPTZ) AND a.concept_id IN (SELECT unnest(?))
"""


@dataclass(frozen=True)
class SavedQuery:
    query_id: int
    curator: str
    schema: str
    values: Mapping[str, str]
    concepts: Mapping[str, Sequence[str]]  # slot → linked concept ids ([] when the slot was not linked)
    created_at: str
    last_seen_at: str


def save_query(con: duckdb.DuckDBPyConnection, curator: str, schema: str, values: Mapping[str, str],
               concepts: Mapping[str, Sequence[str]]) -> int:
    """Save (or refresh the concepts of) a curator's partial relation; returns its id.

    Raises:
        CurationError: no curator, nothing typed, or the curator already keeps :data:`MAX_SAVED` queries.
    """
    curator = " ".join(curator.split())
    typed = {k: v.strip() for k, v in values.items() if v and v.strip()}
    if not curator:
        raise CurationError("enter your name as curator before saving a query")
    if not typed:
        raise CurationError("type at least one entity before saving the query")
    if con.execute(SQL_COUNT, [curator]).fetchall()[0][0] >= MAX_SAVED:
        raise CurationError(f"you keep {MAX_SAVED} saved queries already; remove some first")
    linked = {k: sorted(set(v)) for k, v in concepts.items() if k in typed}
    return con.execute(SQL_SAVE, [curator, schema, json.dumps(typed, sort_keys=True),
                                  json.dumps(linked, sort_keys=True)]).fetchall()[0][0]


def list_saved_queries(con: duckdb.DuckDBPyConnection, curator: str, schema: str) -> list[SavedQuery]:
    rows = con.execute(SQL_LIST, [" ".join(curator.split()), schema]).fetchall()
    return [SavedQuery(qid, who, name, json.loads(values), json.loads(concepts), created, seen)
            for qid, who, name, values, concepts, created, seen in rows]


def mark_seen(con: duckdb.DuckDBPyConnection, query_id: int, curator: str) -> None:
    con.execute(SQL_SEEN, [query_id, " ".join(curator.split())])


def delete_saved_query(con: duckdb.DuckDBPyConnection, query_id: int, curator: str) -> None:
    con.execute(SQL_DELETE, [query_id, " ".join(curator.split())])


def new_since_last_look(con: duckdb.DuckDBPyConnection, saved: SavedQuery) -> list[str]:
    """PMIDs added after the curator last looked that name a concept of every linked slot (every new
    document when no slot was linked: the search will sort them out)."""
    linked = [ids for ids in saved.concepts.values() if ids]
    if not linked:
        return [row[0] for row in con.execute(SQL_NEW_DOCUMENTS, [saved.last_seen_at]).fetchall()]
    found: set[str] | None = None
    for ids in linked:
        pmids = {row[0] for row in con.execute(SQL_NEW_WITH_CONCEPT, [saved.last_seen_at, list(ids)]).fetchall()}
        found = pmids if found is None else found & pmids
    return sorted(found or ())
