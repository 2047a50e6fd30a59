"""Screening topics: a partial relation's queue, kept so that screening it survives a restart.

A topic is one partial relation of one schema (its :func:`curation.store.decisions.relation_key`). When it is
first screened, the served search's candidates are kept here in their order then (the static order), each with
what its card and the learner need without searching again: the hit's stages and concepts (JSON text, as
:func:`curation.review.provenance.hit_provenance` writes them, plus rank and scores) and its evidence row
(floats; NaN where unknown). The grades are not here: they are the decisions of that relation (the decisions
table), so they feed everything a decision feeds.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import duckdb

from curation.errors import CurationError
from curation.schemas import RelationSchema
from curation.store.base import transaction
from curation.store.decisions import relation_key, relation_values

STRATEGIES = ("highest", "uncertain")  # curation.screening.learner.Strategy's values

SQL_ADD_TOPIC = """
INSERT INTO screening_topics (schema_name, entity_key, query_entities, query, version, mode, concepts,
                              evidence_names, strategy, created_by)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (schema_name, entity_key) DO NOTHING RETURNING entity_key
"""
SQL_ADD_CANDIDATES = """
INSERT INTO screening_candidates (schema_name, entity_key, position, pmid, hit, evidence)
SELECT ?, ?, unnest(?), unnest(?), unnest(?), unnest(?)
"""
SQL_GET_TOPIC = """
SELECT schema_name, entity_key, query_entities, query, version, mode, concepts, evidence_names, strategy, created_by,
       CAST(created_at AS VARCHAR), CAST(updated_at AS VARCHAR)
FROM screening_topics WHERE schema_name = ? AND entity_key = ?
"""
SQL_LIST_CANDIDATES = """
SELECT pmid, hit, evidence FROM screening_candidates WHERE schema_name = ? AND entity_key = ? ORDER BY position
"""
SQL_COUNT_CANDIDATES = "SELECT count(*) FROM screening_candidates WHERE schema_name = ? AND entity_key = ?"
SQL_SET_STRATEGY = """
UPDATE screening_topics SET strategy = ?, updated_at = now() WHERE schema_name = ? AND entity_key = ?
"""
SQL_TOUCH = "UPDATE screening_topics SET updated_at = now() WHERE schema_name = ? AND entity_key = ?"
SQL_DELETE_CANDIDATES = "DELETE FROM screening_candidates WHERE schema_name = ? AND entity_key = ?"
SQL_DELETE_TOPIC = "DELETE FROM screening_topics WHERE schema_name = ? AND entity_key = ?"


@dataclass(frozen=True)
class Topic:
    """A topic as kept.

    Attributes:
        schema, key: the schema's name and the relation's key (together the topic's identity).
        values: the filled query slots.
        query: the query text the search read; version, mode: what served it.
        concepts: the query's slots as linked (JSON text).
        evidence_names: the columns of the candidates' evidence rows.
        strategy: which unread candidate comes next (:data:`STRATEGIES`).
        created_at, updated_at: when it was first screened, and last graded or changed.
    """

    schema: str
    key: str
    values: Mapping[str, str]
    query: str
    version: str
    mode: str
    concepts: str
    evidence_names: tuple[str, ...]
    strategy: str
    created_by: str
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class Candidate:
    """One candidate of a topic, in the static order.

    Attributes:
        pmid: the document.
        hit: the search's hit (rank, scores, group, stages, concepts) as JSON text.
        evidence: its evidence row (NaN: not known), or None when the topic keeps none.
    """

    pmid: str
    hit: str
    evidence: tuple[float, ...] | None = None


def _check_strategy(strategy: str) -> None:
    if strategy not in STRATEGIES:
        raise CurationError(f"unknown screening strategy '{strategy}'; use one of {', '.join(STRATEGIES)}")


def _evidence_json(row: Sequence[float] | None) -> str | None:
    if row is None:
        return None
    return json.dumps([None if math.isnan(float(v)) else float(v) for v in row])


def _evidence_row(text: str | None) -> tuple[float, ...] | None:
    if text is None:
        return None
    return tuple(math.nan if v is None else float(v) for v in json.loads(text))


def add_topic(con: duckdb.DuckDBPyConnection, schema: RelationSchema, values: Mapping[str, str], query: str,
              version: str, mode: str, concepts: str, evidence_names: Sequence[str], candidates: Sequence[Candidate],
              strategy: str = "highest", created_by: str = "") -> bool:
    """Keep a topic's queue (its candidates in the static order), in one transaction; False when the topic was
    kept already (another session's first screening came first), and then nothing changes.

    Raises:
        CurationError: no query slot filled, an unknown strategy, or a PMID listed twice.
    """
    query_values = relation_values(schema, values)
    if not query_values:
        raise CurationError(f"fill in at least one of {list(schema.query_types)} to screen a topic")
    _check_strategy(strategy)
    pmids = [c.pmid for c in candidates]
    if len(set(pmids)) != len(pmids):
        raise CurationError("a screening topic lists each candidate once")
    key = relation_key(schema, query_values)
    with transaction(con):
        added = con.execute(SQL_ADD_TOPIC, [schema.name, key, json.dumps(query_values, sort_keys=True), query,
                                            version, mode, concepts, json.dumps(list(evidence_names)), strategy,
                                            created_by]).fetchall()
        if added and candidates:
            con.execute(SQL_ADD_CANDIDATES, [schema.name, key, list(range(len(candidates))), pmids,
                                             [c.hit for c in candidates],
                                             [_evidence_json(c.evidence) for c in candidates]])
    return bool(added)


def get_topic(con: duckdb.DuckDBPyConnection, schema: RelationSchema, values: Mapping[str, str]) -> Topic | None:
    """The kept topic of a partial relation (None: it was never screened)."""
    rows = con.execute(SQL_GET_TOPIC, [schema.name, relation_key(schema, relation_values(schema, values))]).fetchall()
    if not rows:
        return None
    name, key, entities, query, version, mode, concepts, names, strategy, by, created, updated = rows[0]
    return Topic(name, key, json.loads(entities), query, version, mode, concepts, tuple(json.loads(names)), strategy,
                 by, created, updated)


def list_candidates(con: duckdb.DuckDBPyConnection, topic: Topic) -> list[Candidate]:
    """A topic's candidates in the static order."""
    return [Candidate(pmid, hit, _evidence_row(evidence))
            for pmid, hit, evidence in con.execute(SQL_LIST_CANDIDATES, [topic.schema, topic.key]).fetchall()]


def count_candidates(con: duckdb.DuckDBPyConnection, topic: Topic) -> int:
    """How many candidates a topic's queue holds."""
    return int(con.execute(SQL_COUNT_CANDIDATES, [topic.schema, topic.key]).fetchall()[0][0])


def set_strategy(con: duckdb.DuckDBPyConnection, topic: Topic, strategy: str) -> None:
    """Change which unread candidate of the topic comes next."""
    _check_strategy(strategy)
    con.execute(SQL_SET_STRATEGY, [strategy, topic.schema, topic.key])


def touch_topic(con: duckdb.DuckDBPyConnection, topic: Topic) -> None:
    """Note that the topic was just screened (its ``updated_at``)."""
    con.execute(SQL_TOUCH, [topic.schema, topic.key])


def delete_topic(con: duckdb.DuckDBPyConnection, topic: Topic) -> None:
    """Forget a topic's queue (its grades, being decisions, stay); the next screening searches again."""
    with transaction(con):
        con.execute(SQL_DELETE_CANDIDATES, [topic.schema, topic.key])
        con.execute(SQL_DELETE_TOPIC, [topic.schema, topic.key])
