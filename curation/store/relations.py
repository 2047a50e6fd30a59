"""Relation pairs: what the relation scorer said about each co-mentioned concept pair of a document.

``relation_pairs`` holds, per annotated document, every pair of distinct concepts it mentions (one row a
pair, the two sides in a fixed order), the probability that the document relates them (NULL when no relation
scorer was active) and the offsets of the sentence that relates them best. ``relation_scored`` records which
scorer scored each document, so a new scorer re-scores only what it has not scored; ``relation_scorers``
lists the scorer folders the store has seen, one active. Pairs are written when a document is annotated (the
same transaction as its annotations) and dropped whenever its annotations are replaced without them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import duckdb
import pyarrow as pa

#: the scorer name recorded for documents paired while no relation scorer was active
UNSCORED = "co-mention"


class PairRow(NamedTuple):
    """One row of ``relation_pairs`` (what :mod:`curation.relations.stored_pairs` computes)."""

    pmid: str
    concept_a: str
    kind_a: str
    name_a: str
    concept_b: str
    kind_b: str
    name_b: str
    score: float | None
    same_sentence: bool
    evidence_start: int
    evidence_end: int


SQL_DELETE_PAIRS = "DELETE FROM relation_pairs WHERE pmid IN (SELECT unnest(?))"
SQL_DELETE_SCORED = "DELETE FROM relation_scored WHERE pmid IN (SELECT unnest(?))"
SQL_INSERT_PAIRS = """
INSERT INTO relation_pairs SELECT pmid, concept_a, kind_a, name_a, concept_b, kind_b, name_b, score, same_sentence,
                                  evidence_start, evidence_end FROM incoming_pairs
"""
SQL_INSERT_SCORED = "INSERT INTO relation_scored (pmid, scorer, pairs) SELECT pmid, scorer, pairs FROM incoming_scored"
_COLUMNS = ("pmid, concept_a, kind_a, name_a, concept_b, kind_b, name_b, score, same_sentence, evidence_start, "
            "evidence_end")
# The pairs of some documents that join one of some concepts (of a kind) to any concept of another kind, either
# side first.
SQL_PAIRS_WITH = f"""
SELECT {_COLUMNS} FROM relation_pairs
WHERE pmid IN (SELECT unnest(?))
  AND ((kind_a = ? AND concept_a IN (SELECT unnest(?)) AND kind_b = ?)
    OR (kind_b = ? AND concept_b IN (SELECT unnest(?)) AND kind_a = ?))
ORDER BY pmid, concept_a, concept_b
"""
SQL_PAIRS_OF = (f"SELECT {_COLUMNS} FROM relation_pairs WHERE pmid IN (SELECT unnest(?)) "
                "ORDER BY pmid, concept_a, concept_b")
# Annotated documents the scorer has not scored since their annotations were written.
SQL_UNSCORED = """
SELECT a.pmid FROM annotated_documents a LEFT JOIN relation_scored s ON s.pmid = a.pmid
WHERE (s.pmid IS NULL OR s.scorer <> ?) ORDER BY a.pmid
"""
# Every concept of one kind on either side of a stored pair, with a name it was stored under: the candidates a
# missing-slot suggestion of that kind can offer.
SQL_PAIR_CONCEPTS = """
SELECT concept, min(name) FROM (
    SELECT concept_a AS concept, name_a AS name FROM relation_pairs WHERE kind_a = ?
    UNION ALL SELECT concept_b, name_b FROM relation_pairs WHERE kind_b = ?
) GROUP BY concept ORDER BY concept
"""
SQL_SCORERS = "SELECT scorer, count(*) FROM relation_scored GROUP BY scorer ORDER BY 2 DESC, 1"
SQL_COUNT_UNSCORED = """
SELECT count(*) FROM annotated_documents a LEFT JOIN relation_scored s ON s.pmid = a.pmid
WHERE s.pmid IS NULL OR s.scorer <> ?
"""


def replace_relation_pairs(con: duckdb.DuckDBPyConnection, scorer: str, pmids: Sequence[str],
                           rows: Sequence[PairRow]) -> int:
    """Replace the pairs of ``pmids`` with ``rows`` and record ``scorer`` as theirs. Call inside a transaction.

    Every document of ``pmids`` is recorded as scored (one with no pair too); every row's PMID must be one of
    them. Returns how many pairs were written.
    """
    pmids = list(dict.fromkeys(pmids))
    if not pmids:
        return 0
    unknown = {r.pmid for r in rows} - set(pmids)
    if unknown:
        raise ValueError(f"pairs for documents not being replaced: {sorted(unknown)[:5]}")
    per_doc = dict.fromkeys(pmids, 0)
    for row in rows:
        per_doc[row.pmid] += 1
    columns = list(zip(*rows, strict=True)) if rows else [[] for _ in PairRow._fields]
    incoming = pa.table({
        "pmid": pa.array(columns[0], pa.string()), "concept_a": pa.array(columns[1], pa.string()),
        "kind_a": pa.array(columns[2], pa.string()), "name_a": pa.array(columns[3], pa.string()),
        "concept_b": pa.array(columns[4], pa.string()), "kind_b": pa.array(columns[5], pa.string()),
        "name_b": pa.array(columns[6], pa.string()), "score": pa.array(columns[7], pa.float64()),
        "same_sentence": pa.array(columns[8], pa.bool_()), "evidence_start": pa.array(columns[9], pa.int32()),
        "evidence_end": pa.array(columns[10], pa.int32()),
    })
    scored = pa.table({"pmid": pmids, "scorer": [scorer] * len(pmids),
                       "pairs": pa.array([per_doc[p] for p in pmids], pa.int32())})
    con.execute(SQL_DELETE_PAIRS, [pmids])
    con.execute(SQL_DELETE_SCORED, [pmids])
    con.register("incoming_pairs", incoming)
    con.register("incoming_scored", scored)
    try:
        con.execute(SQL_INSERT_PAIRS)
        con.execute(SQL_INSERT_SCORED)
    finally:
        con.unregister("incoming_pairs")
        con.unregister("incoming_scored")
    return len(rows)


def list_relation_pairs(con: duckdb.DuckDBPyConnection, pmids: Sequence[str], kind: str | None = None,
                        concepts: Sequence[str] = (), other_kind: str | None = None) -> list[PairRow]:
    """The stored pairs of some documents; with ``kind``, ``concepts`` and ``other_kind``, only those joining one
    of ``concepts`` (of ``kind``) to a concept of ``other_kind`` (either side first), in one query."""
    pmids = list(dict.fromkeys(pmids))
    if not pmids:
        return []
    if kind is None:
        rows = con.execute(SQL_PAIRS_OF, [pmids]).fetchall()
    else:
        concepts = list(concepts)
        rows = con.execute(SQL_PAIRS_WITH, [pmids, kind, concepts, other_kind, kind, concepts, other_kind]).fetchall()
    return [PairRow(*row) for row in rows]


def list_pair_concepts(con: duckdb.DuckDBPyConnection, kind: str) -> list[tuple[str, str]]:
    """(concept id, a name it was stored under) of every concept of ``kind`` in the stored pairs, by id."""
    return [(c, n) for c, n in con.execute(SQL_PAIR_CONCEPTS, [kind, kind]).fetchall()]


def list_unscored_documents(con: duckdb.DuckDBPyConnection, scorer: str) -> list[str]:
    """Annotated documents whose pairs ``scorer`` has not written (never paired, or by another scorer), sorted."""
    return [p for (p,) in con.execute(SQL_UNSCORED, [scorer]).fetchall()]


def count_unscored_documents(con: duckdb.DuckDBPyConnection, scorer: str) -> int:
    """How many annotated documents ``scorer`` has not scored (one count, no list)."""
    return int(con.execute(SQL_COUNT_UNSCORED, [scorer]).fetchone()[0])


def list_relation_scorers(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Scorer → how many documents its pairs stand for, most first."""
    return dict(con.execute(SQL_SCORERS).fetchall())


# --- the scorers ------------------------------------------------------------------------------------------------

SQL_REGISTER_SCORER = """
INSERT INTO relation_scorers (path, name) VALUES (?, ?) ON CONFLICT (path) DO UPDATE SET name = excluded.name
"""
SQL_ACTIVATE_SCORER = "UPDATE relation_scorers SET active = (path = ?) WHERE active <> (path = ?)"
SQL_ACTIVE_SCORER = "SELECT path, name FROM relation_scorers WHERE active"
SQL_DEACTIVATE_SCORERS = "UPDATE relation_scorers SET active = false WHERE active"


def set_active_relation_scorer(con: duckdb.DuckDBPyConnection, path: str, name: str) -> None:
    """Record the scorer folder at ``path`` and make it the only active one. Call inside a transaction."""
    con.execute(SQL_REGISTER_SCORER, [path, name])
    con.execute(SQL_ACTIVATE_SCORER, [path, path])


def clear_active_relation_scorer(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(SQL_DEACTIVATE_SCORERS)


def get_active_relation_scorer(con: duckdb.DuckDBPyConnection) -> tuple[str, str] | None:
    """(path, name) of the active relation scorer, or None."""
    rows = con.execute(SQL_ACTIVE_SCORER).fetchall()
    return (rows[0][0], rows[0][1]) if rows else None
