"""Documents, gold annotations, synonyms."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import duckdb
import pyarrow as pa

from curation.records import Document, Mention, Relation, Synonym
from curation.store.base import SQL_COUNT, _scalar

SQL_MERGE_DOCUMENTS = """
INSERT INTO documents (pmid, title, abstract, journal, year, authors, pub_types, sources)
SELECT pmid, title, abstract, journal, year, authors, pub_types, [source] FROM incoming
ON CONFLICT (pmid) DO UPDATE SET
    title = CASE WHEN documents.title = '' THEN excluded.title ELSE documents.title END,
    abstract = CASE WHEN documents.abstract = '' THEN excluded.abstract ELSE documents.abstract END,
    journal = CASE WHEN documents.journal = '' THEN excluded.journal ELSE documents.journal END,
    year = coalesce(documents.year, excluded.year),
    authors = CASE WHEN coalesce(documents.authors, '') = '' THEN excluded.authors ELSE documents.authors END,
    pub_types = CASE WHEN len(coalesce(documents.pub_types, [])) = 0 THEN excluded.pub_types
                ELSE documents.pub_types END,
    sources = list_distinct(list_concat(documents.sources, excluded.sources))
"""
SQL_EXISTING_DOCS = "SELECT count(*) FROM documents WHERE pmid IN (SELECT pmid FROM incoming)"
SQL_INSERT_MENTIONS = "INSERT OR IGNORE INTO mentions SELECT * FROM incoming_mentions"
SQL_INSERT_RELATIONS = "INSERT OR IGNORE INTO relations SELECT * FROM incoming_relations"
SQL_DOCUMENT_COLUMNS = "pmid, title, abstract, journal, year, sources, coalesce(authors, ''), coalesce(pub_types, [])"
SQL_GET_DOCUMENTS = f"SELECT {SQL_DOCUMENT_COLUMNS} FROM documents WHERE pmid IN (SELECT unnest(?))"
SQL_ALL_DOCUMENTS = f"SELECT {SQL_DOCUMENT_COLUMNS} FROM documents ORDER BY pmid"
SQL_MENTIONS_FOR = """
SELECT pmid, start_offset, end_offset, text, mention_type, concept_id, source FROM mentions
WHERE pmid IN (SELECT unnest(?)) ORDER BY pmid, start_offset, end_offset
"""
SQL_ALL_MENTIONS = (
    "SELECT pmid, start_offset, end_offset, text, mention_type, concept_id, source FROM mentions "
    "ORDER BY pmid, start_offset"
)
SQL_ALL_RELATIONS = (
    "SELECT pmid, relation_type, concept1, concept2, novelty, source FROM relations ORDER BY pmid, relation_type"
)

SQL_INSERT_SYNONYMS = (
    "INSERT OR IGNORE INTO synonyms (kind, concept_id, name, source, canonical, species) "
    "SELECT kind, concept_id, name, source, canonical, species FROM incoming"
)
SQL_LIST_SYNONYMS = (
    "SELECT concept_id, kind, name, source, canonical, species FROM synonyms WHERE (? IS NULL OR kind = ?) "
    "ORDER BY kind, concept_id, name"
)



# --- corpus -------------------------------------------------------------------------------


def add_documents(con: duckdb.DuckDBPyConnection, documents: Sequence[Document]) -> tuple[int, int]:
    """Merge documents by PMID with their gold mentions and relations. Call inside :func:`transaction`.

    A PMID already present keeps its text (filled in only where it was empty), gains the new
    source, and gains any mentions and relations it did not have: the same abstract from two
    corpora becomes one document with both corpora's annotations.

    Returns:
        (added, already present) document counts.
    """
    merged: dict[str, Document] = {}
    for doc in documents:
        merged.setdefault(doc.pmid, doc)
    if not merged:
        return 0, 0
    docs = list(merged.values())
    incoming = pa.table(
        {
            "pmid": [d.pmid for d in docs],
            "title": [d.title for d in docs],
            "abstract": [d.abstract for d in docs],
            "journal": [d.journal for d in docs],
            "year": pa.array([d.year for d in docs], pa.int32()),
            "authors": [d.authors for d in docs],
            "pub_types": pa.array([list(d.pub_types) for d in docs], pa.list_(pa.string())),
            "source": [d.source for d in docs],
        }
    )
    mentions = [m for d in documents for m in d.mentions]
    relations = [r for d in documents for r in d.relations]
    incoming_mentions = pa.table(
        {
            "pmid": [m.pmid for m in mentions],
            "start_offset": pa.array([m.start for m in mentions], pa.int32()),
            "end_offset": pa.array([m.end for m in mentions], pa.int32()),
            "text": [m.text for m in mentions],
            "mention_type": [m.type for m in mentions],
            "concept_id": [m.concept_id for m in mentions],
            "source": [m.source for m in mentions],
        }
    )
    incoming_relations = pa.table(
        {
            "pmid": [r.pmid for r in relations],
            "relation_type": [r.type for r in relations],
            "concept1": [r.concept1 for r in relations],
            "concept2": [r.concept2 for r in relations],
            "novelty": [r.novelty for r in relations],
            "source": [r.source for r in relations],
        }
    )
    con.register("incoming", incoming)
    con.register("incoming_mentions", incoming_mentions)
    con.register("incoming_relations", incoming_relations)
    try:
        existing = _scalar(con, SQL_EXISTING_DOCS)
        con.execute(SQL_MERGE_DOCUMENTS)
        con.execute(SQL_INSERT_MENTIONS)
        con.execute(SQL_INSERT_RELATIONS)
    finally:
        for name in ("incoming", "incoming_mentions", "incoming_relations"):
            con.unregister(name)
    return len(docs) - existing, existing


def _document(row: tuple, mentions: Iterable[Mention] = ()) -> Document:
    pmid, title, abstract, journal, year, sources, authors, pub_types = row
    return Document(
        pmid=pmid,
        title=title,
        abstract=abstract,
        source=",".join(sources),
        mentions=tuple(mentions),
        journal=journal,
        year=year,
        authors=authors,
        pub_types=tuple(pub_types),
    )


def get_documents(
    con: duckdb.DuckDBPyConnection, pmids: Sequence[str], with_mentions: bool = False
) -> list[Document]:
    """Documents for the given PMIDs, in the order asked (unknown PMIDs are left out)."""
    pmids = list(pmids)
    rows = {row[0]: row for row in con.execute(SQL_GET_DOCUMENTS, [pmids]).fetchall()}
    mentions: dict[str, list[Mention]] = {}
    if with_mentions and rows:
        for m in con.execute(SQL_MENTIONS_FOR, [list(rows)]).fetchall():
            mentions.setdefault(m[0], []).append(Mention(*m))
    return [_document(rows[p], mentions.get(p, ())) for p in pmids if p in rows]


def iter_documents(con: duckdb.DuckDBPyConnection, batch: int = 2000) -> Iterator[Document]:
    """Every document, by PMID (without mentions)."""
    cursor = con.cursor()
    cursor.execute(SQL_ALL_DOCUMENTS)
    while rows := cursor.fetchmany(batch):
        yield from (_document(row) for row in rows)


def list_mentions(con: duckdb.DuckDBPyConnection) -> list[Mention]:
    """Every gold mention in the store."""
    return [Mention(*row) for row in con.execute(SQL_ALL_MENTIONS).fetchall()]


def list_relations(con: duckdb.DuckDBPyConnection) -> list[Relation]:
    """Every gold document-level relation in the store."""
    return [Relation(*row) for row in con.execute(SQL_ALL_RELATIONS).fetchall()]


# --- synonyms -----------------------------------------------------------------------------


def add_synonyms(con: duckdb.DuckDBPyConnection, synonyms: Iterable[Synonym]) -> int:
    """Add dictionary entries (existing ones are kept); returns how many were new."""
    rows = {(s.entity_type, s.concept_id, s.name): s for s in synonyms}
    if not rows:
        return 0
    values = list(rows.values())
    incoming = pa.table(
        {
            "kind": [s.entity_type for s in values],
            "concept_id": [s.concept_id for s in values],
            "name": [s.name for s in values],
            "source": [s.source for s in values],
            "canonical": [s.canonical for s in values],
            "species": [s.species for s in values],
        }
    )
    before = _scalar(con, SQL_COUNT["synonyms"])
    con.register("incoming", incoming)
    try:
        con.execute(SQL_INSERT_SYNONYMS)
    finally:
        con.unregister("incoming")
    return _scalar(con, SQL_COUNT["synonyms"]) - before


def list_synonyms(con: duckdb.DuckDBPyConnection, kind: str | None = None) -> list[Synonym]:
    return [
        Synonym(concept_id=c, entity_type=k, name=n, source=s, canonical=canon, species=sp)
        for c, k, n, s, canon, sp in con.execute(SQL_LIST_SYNONYMS, [kind, kind]).fetchall()
    ]
