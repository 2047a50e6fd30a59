"""The concept index: every document's annotations, which annotator made them, and the entity models.

``annotations`` holds one row per mention of a document (offsets into ``Document.text``): the
gold mentions of an annotated corpus (source ``gold``) and what an annotator found (``recogniser``,
``dictionary``, ``rule``). ``annotated_documents`` records, per document, which annotator version
wrote its rows, when, and over how many characters of text, so that a new annotator (a recogniser
activated) re-annotates only what is stale. ``entity_models`` lists the recognisers and linkers
the store has seen and which one of each kind is active.

The gold ``mentions`` table is left alone: it alone feeds the lexicon and training snapshots, so
predicted mentions never become training data.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import duckdb
import numpy as np
import pyarrow as pa


class AnnotationRow(NamedTuple):
    """One row of ``annotations`` (the store's plain form of ``curation.entities.annotation.Annotation``)."""

    pmid: str
    start: int
    end: int
    text: str
    entity_type: str
    concept_id: str
    canonical: str
    confidence: float
    source: str
    annotator: str


@dataclass(frozen=True)
class EntityModelRow:
    """One row of ``entity_models``: a recogniser or linker folder the store has seen."""

    kind: str
    path: str
    name: str
    active: bool
    registered_at: str


SQL_DELETE_ANNOTATIONS = "DELETE FROM annotations WHERE pmid IN (SELECT pmid FROM incoming_records)"
SQL_DELETE_PAIRS = "DELETE FROM relation_pairs WHERE pmid IN (SELECT pmid FROM incoming_records)"
SQL_DELETE_SCORED = "DELETE FROM relation_scored WHERE pmid IN (SELECT pmid FROM incoming_records)"
SQL_INSERT_ANNOTATIONS = """
INSERT INTO annotations (pmid, start_offset, end_offset, text, entity_type, concept_id, canonical, confidence,
                         source, annotator)
SELECT pmid, start_offset, end_offset, text, entity_type, concept_id, canonical, confidence, source, annotator
FROM incoming_annotations
"""
SQL_UPSERT_RECORDS = """
INSERT INTO annotated_documents (pmid, annotator, text_chars, annotations, annotated_at)
SELECT pmid, annotator, text_chars, annotations, now() FROM incoming_records
ON CONFLICT (pmid) DO UPDATE SET annotator = excluded.annotator, text_chars = excluded.text_chars,
    annotations = excluded.annotations, annotated_at = excluded.annotated_at
"""
SQL_ANNOTATIONS_FOR = """
SELECT a.pmid, a.start_offset, a.end_offset, a.text, a.entity_type, a.concept_id, a.canonical, a.confidence,
       a.source, a.annotator
FROM annotations a
WHERE a.pmid IN (SELECT unnest(?)) ORDER BY a.pmid, a.start_offset, a.end_offset, a.source
"""
# The concept index read by concept: every mention of some concepts (or, for variants, of some texts). Two branches,
# not one OR: each filter alone lets DuckDB skip the row groups whose min/max rule it out, which the table's concept
# order (sort_concept_index) makes nearly all of them; an OR of the two reads every row group.
SQL_CONCEPT_POSTINGS = """
SELECT pmid, start_offset, end_offset, source, concept_id, text FROM annotations
WHERE entity_type = ? AND concept_id IN (SELECT unnest(?))
UNION
SELECT pmid, start_offset, end_offset, source, concept_id, text FROM annotations
WHERE entity_type = ? AND text IN (SELECT unnest(?))
ORDER BY pmid, start_offset, source, end_offset
"""
# Per document, for concept_query: its distinct spans in the order the rows above give them (start, then the span's
# first source, then end), and its distinct sources. Flat rows: DuckDB's ordered and DISTINCT list aggregates, and
# lists fetched into Python, cost more than the Python rows they replace.
SQL_CONCEPT_HITS = """
WITH hits AS (
    SELECT pmid, start_offset, end_offset, source FROM annotations
    WHERE entity_type = ? AND concept_id IN (SELECT unnest(?))
    UNION ALL
    SELECT pmid, start_offset, end_offset, source FROM annotations
    WHERE entity_type = ? AND text IN (SELECT unnest(?))
)
"""
SQL_CONCEPT_SPANS = SQL_CONCEPT_HITS + """SELECT pmid, start_offset, end_offset FROM hits
GROUP BY pmid, start_offset, end_offset ORDER BY pmid, start_offset, min(source), end_offset"""
SQL_CONCEPT_SOURCES = SQL_CONCEPT_HITS + "SELECT DISTINCT pmid, source FROM hits ORDER BY pmid, source"
# The concept order: kinds together; variants (read by text) by text, the other kinds (read by concept) by concept.
SQL_SORT_ANNOTATIONS = (
    """CREATE TEMP TABLE sorted_annotations AS SELECT * FROM annotations
    ORDER BY entity_type, CASE WHEN entity_type = 'variant' THEN text ELSE concept_id END, text, pmid""",
    "DELETE FROM annotations",
    "INSERT INTO annotations SELECT * FROM sorted_annotations",
    "DROP TABLE sorted_annotations",
)
SQL_DISTINCT_TEXTS = "SELECT DISTINCT text FROM annotations WHERE entity_type = ? ORDER BY text"
SQL_DISTINCT_CONCEPTS = """
SELECT concept_id, count(DISTINCT pmid) FROM annotations WHERE entity_type = ? AND concept_id <> ''
GROUP BY concept_id ORDER BY 2 DESC, 1
"""
SQL_ANNOTATED_AMONG = "SELECT pmid FROM annotated_documents WHERE pmid IN (SELECT unnest(?))"
# A document is stale when it has no record, was annotated by another annotator, its text changed
# length (a title filled in later shifts every offset), or it gained gold mentions since.
SQL_STALE = """
SELECT d.pmid FROM documents d
LEFT JOIN annotated_documents r ON r.pmid = d.pmid
LEFT JOIN (SELECT pmid, count(*) AS n FROM mentions GROUP BY pmid) m ON m.pmid = d.pmid
LEFT JOIN (SELECT pmid, count(*) AS n FROM annotations WHERE source = 'gold' GROUP BY pmid) g ON g.pmid = d.pmid
WHERE (? OR d.pmid IN (SELECT unnest(?)))
  AND (NOT ? OR r.pmid IS NULL OR r.annotator <> ?
       OR r.text_chars <> length(CASE WHEN d.title = '' THEN d.abstract ELSE d.title || ' ' || d.abstract END)
       OR coalesce(m.n, 0) <> coalesce(g.n, 0))
ORDER BY d.pmid
"""
SQL_ANNOTATION_COUNTS = "SELECT source, count(*) FROM annotations GROUP BY source ORDER BY source"
SQL_ANNOTATIONS_PER_DOCUMENT = "SELECT pmid, annotations FROM annotated_documents"
SQL_ANNOTATORS = "SELECT annotator, count(*) FROM annotated_documents GROUP BY annotator ORDER BY 2 DESC, 1"

SQL_REGISTER_MODEL = """
INSERT INTO entity_models (kind, path, name) VALUES (?, ?, ?)
ON CONFLICT (kind, path) DO UPDATE SET name = excluded.name
"""
SQL_MODEL_COLUMNS = "kind, path, name, active, CAST(registered_at AS VARCHAR)"
SQL_ACTIVATE_MODEL = "UPDATE entity_models SET active = (path = ?) WHERE kind = ? AND active <> (path = ?)"
SQL_DEACTIVATE_MODELS = "UPDATE entity_models SET active = false WHERE kind = ? AND active"
SQL_ACTIVE_MODEL = f"SELECT {SQL_MODEL_COLUMNS} FROM entity_models WHERE kind = ? AND active"
SQL_LIST_MODELS = (
    f"SELECT {SQL_MODEL_COLUMNS} FROM entity_models WHERE (? IS NULL OR kind = ?) ORDER BY kind, registered_at DESC"
)


def replace_annotations(
    con: duckdb.DuckDBPyConnection,
    annotator: str,
    texts: dict[str, int],
    rows: Sequence[AnnotationRow],
) -> int:
    """Replace the annotations of some documents and record who made them. Call inside a transaction.

    Args:
        annotator: the annotator version (``Annotator.version``) recorded for each document.
        texts: PMID → ``len(Document.text)`` for every document annotated (one with no mention too).
        rows: their annotations (gold ones included); every PMID must be a key of ``texts``.

    Returns:
        How many annotation rows were written.
    """
    if not texts:
        return 0
    unknown = {r.pmid for r in rows} - set(texts)
    if unknown:
        raise ValueError(f"annotations for documents not being replaced: {sorted(unknown)[:5]}")
    per_doc: dict[str, int] = dict.fromkeys(texts, 0)
    for row in rows:
        per_doc[row.pmid] += 1
    pmids = list(texts)
    records = pa.table(
        {
            "pmid": pmids,
            "annotator": [annotator] * len(pmids),
            "text_chars": pa.array([texts[p] for p in pmids], pa.int32()),
            "annotations": pa.array([per_doc[p] for p in pmids], pa.int32()),
        }
    )
    incoming = pa.table(
        {
            "pmid": [r.pmid for r in rows],
            "start_offset": pa.array([r.start for r in rows], pa.int32()),
            "end_offset": pa.array([r.end for r in rows], pa.int32()),
            "text": [r.text for r in rows],
            "entity_type": [r.entity_type for r in rows],
            "concept_id": [r.concept_id for r in rows],
            "canonical": [r.canonical for r in rows],
            "confidence": pa.array([float(r.confidence) for r in rows], pa.float64()),
            "source": [r.source for r in rows],
            "annotator": [r.annotator for r in rows],
        }
    )
    con.register("incoming_records", records)
    con.register("incoming_annotations", incoming)
    try:
        con.execute(SQL_DELETE_ANNOTATIONS)
        con.execute(SQL_DELETE_PAIRS)  # their relation pairs were of the old annotations
        con.execute(SQL_DELETE_SCORED)
        con.execute(SQL_INSERT_ANNOTATIONS)
        con.execute(SQL_UPSERT_RECORDS)
    finally:
        con.unregister("incoming_records")
        con.unregister("incoming_annotations")
    return len(rows)


def list_annotations(con: duckdb.DuckDBPyConnection, pmids: Sequence[str]) -> dict[str, list[AnnotationRow]]:
    """Stored annotations of the given documents, in text order, in one query.

    Only documents that were annotated are keys (one annotated with no mention maps to ``[]``);
    a document never annotated is absent, so the caller can tell the two apart.
    """
    pmids = list(dict.fromkeys(pmids))
    if not pmids:
        return {}
    out: dict[str, list[AnnotationRow]] = {p: [] for (p,) in con.execute(SQL_ANNOTATED_AMONG, [pmids]).fetchall()}
    for row in con.execute(SQL_ANNOTATIONS_FOR, [pmids]).fetchall():
        if row[0] in out:
            out[row[0]].append(AnnotationRow(*row))
    return out


class Posting(NamedTuple):
    """One mention of a concept in a document (a row of the concept index read by concept)."""

    pmid: str
    start: int
    end: int
    source: str
    concept_id: str
    text: str


def main_diseases(con: duckdb.DuckDBPyConnection, pmids: Sequence[str]) -> dict[str, str]:
    """PMID → the disease its annotations name most often (canonical name when linked; ties by name)."""
    found: dict[str, str] = {}
    for pmid, rows in list_annotations(con, pmids).items():
        counts = Counter(r.canonical or r.text for r in rows
                         if r.entity_type.lower() in ("disease", "diseaseorphenotypicfeature"))
        if counts:
            found[pmid] = min(counts, key=lambda name: (-counts[name], name))
    return found


def list_concept_postings(
    con: duckdb.DuckDBPyConnection, entity_type: str, concept_ids: Sequence[str] = (), texts: Sequence[str] = ()
) -> list[Posting]:
    """Every stored mention of ``entity_type`` whose concept is one of ``concept_ids`` or whose text is one of
    ``texts``, in document and text order (one query)."""
    if not concept_ids and not texts:
        return []
    rows = con.execute(SQL_CONCEPT_POSTINGS, [entity_type, list(concept_ids), entity_type, list(texts)]).fetchall()
    return [Posting(*row) for row in rows]


class ConceptDocuments(NamedTuple):
    """A concept's postings per document: where each document mentions it and how it was found there."""

    spans: dict[str, list[tuple[int, int]]]  # pmid -> distinct (start, end), by start
    sources: dict[str, str]  # pmid -> its distinct sources, sorted, joined by ", " ("dictionary, gold")


def list_concept_documents(
    con: duckdb.DuckDBPyConnection, entity_type: str, concept_ids: Sequence[str] = (), texts: Sequence[str] = ()
) -> ConceptDocuments:
    """:func:`list_concept_postings` per document, deduplicated and grouped in SQL (two queries, read as arrays):
    the same documents in the same order, the same spans in the same order, the same sources."""
    if not concept_ids and not texts:
        return ConceptDocuments({}, {})
    args = [entity_type, list(concept_ids), entity_type, list(texts)]
    spans = con.execute(SQL_CONCEPT_SPANS, args).fetchnumpy()
    pairs = list(zip(spans["start_offset"].tolist(), spans["end_offset"].tolist(), strict=True))
    sources = con.execute(SQL_CONCEPT_SOURCES, args).fetchnumpy()
    found = sources["source"].tolist()
    return ConceptDocuments(
        {pmid: pairs[a:b] for pmid, a, b in _runs(spans["pmid"])},
        {pmid: ", ".join(found[a:b]) for pmid, a, b in _runs(sources["pmid"])},
    )


def _runs(pmids: np.ndarray) -> list[tuple[str, int, int]]:
    """(pmid, first, end) of each run of equal values in ``pmids`` (sorted, so one run per pmid)."""
    if not len(pmids):
        return []
    edges = np.flatnonzero(np.concatenate(([True], pmids[1:] != pmids[:-1], [True]))).tolist()  # (runs + 1,)
    names = pmids.tolist()
    return [(names[a], a, b) for a, b in zip(edges, edges[1:], strict=False)]


def sort_concept_index(con: duckdb.DuckDBPyConnection) -> int:
    """Rewrite ``annotations`` in concept order (kind, then concept; variants by text) so that reading one concept's
    postings skips the row groups of the others (DuckDB keeps each row group's min/max). Call inside a transaction
    after a large annotation run; rows written later append unsorted and are read in full until the next sort.

    Returns:
        How many rows were rewritten.
    """
    for statement in SQL_SORT_ANNOTATIONS:
        con.execute(statement)
    return int(con.execute("SELECT count(*) FROM annotations").fetchone()[0])


def list_annotated_texts(con: duckdb.DuckDBPyConnection, entity_type: str) -> list[str]:
    """The distinct mention texts the concept index holds for one kind (variants: what codon and notation
    queries are matched against)."""
    return [t for (t,) in con.execute(SQL_DISTINCT_TEXTS, [entity_type]).fetchall()]


def list_annotated_concepts(con: duckdb.DuckDBPyConnection, entity_type: str) -> list[tuple[str, int]]:
    """(concept id as stored, documents mentioning it) for one kind, most mentioned first."""
    return [(c, n) for c, n in con.execute(SQL_DISTINCT_CONCEPTS, [entity_type]).fetchall()]


def list_stale_documents(
    con: duckdb.DuckDBPyConnection, annotator: str, pmids: Sequence[str] | None = None, stale_only: bool = True
) -> list[str]:
    """PMIDs to (re-)annotate with ``annotator``, sorted.

    Args:
        annotator: the annotator version that would annotate them.
        pmids: only among these documents (None: every document of the store).
        stale_only: False returns every document asked for, stale or not.
    """
    every = pmids is None
    return [p for (p,) in con.execute(SQL_STALE, [every, list(pmids or []), stale_only, annotator]).fetchall()]


def annotation_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Annotation rows by source (gold, recogniser, dictionary, rule)."""
    return dict(con.execute(SQL_ANNOTATION_COUNTS).fetchall())


def annotations_per_document(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """PMID → how many annotations its last annotation wrote, for every annotated document."""
    return dict(con.execute(SQL_ANNOTATIONS_PER_DOCUMENT).fetchall())


def list_annotators(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Annotator version → how many documents it annotated, most first."""
    return dict(con.execute(SQL_ANNOTATORS).fetchall())


# --- entity models --------------------------------------------------------------------------


def _model(row: tuple) -> EntityModelRow:
    kind, path, name, active, registered = row
    return EntityModelRow(kind, path, name, bool(active), registered)


def insert_entity_model(con: duckdb.DuckDBPyConnection, kind: str, path: str, name: str) -> None:
    """Record a recogniser or linker folder (its name is updated when the store already knows the path)."""
    con.execute(SQL_REGISTER_MODEL, [kind, path, name])


def set_active_entity_model(con: duckdb.DuckDBPyConnection, kind: str, path: str) -> None:
    """Mark the model at ``path`` active and every other model of ``kind`` inactive (one statement)."""
    con.execute(SQL_ACTIVATE_MODEL, [path, kind, path])


def clear_active_entity_model(con: duckdb.DuckDBPyConnection, kind: str) -> None:
    """Mark no model of ``kind`` active (the app then annotates with dictionaries)."""
    con.execute(SQL_DEACTIVATE_MODELS, [kind])


def get_active_entity_model(con: duckdb.DuckDBPyConnection, kind: str) -> EntityModelRow | None:
    rows = con.execute(SQL_ACTIVE_MODEL, [kind]).fetchall()
    return _model(rows[0]) if rows else None


def list_entity_models(con: duckdb.DuckDBPyConnection, kind: str | None = None) -> list[EntityModelRow]:
    """Recorded models, by kind, newest first."""
    return [_model(row) for row in con.execute(SQL_LIST_MODELS, [kind, kind]).fetchall()]
