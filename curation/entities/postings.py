"""The concept index read by concept: which documents mention a linked query concept, and where; and read by
document (:func:`stored_annotations`: a hit's entity spans).

Two sources with one interface (:class:`PostingsSource`): the store's ``annotations`` table
(:class:`StorePostings`, what the app and the CLI search) and annotations held in memory
(:class:`MemoryPostings`, what the benchmark searches: it never opens a store).
:func:`concept_query` turns a linked :class:`~curation.entities.query.QueryConcept` into what the
retrieval package searches (:class:`index.concepts.ConceptQuery`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Protocol

import duckdb

from curation.entities.annotation import Annotation
from curation.entities.query import QueryConcept
from curation.entities.variants import variant_keys, variant_matches
from curation.store.annotations import (
    ConceptDocuments,
    Posting,
    list_annotated_texts,
    list_annotations,
    list_concept_documents,
    list_concept_postings,
)
from index.concepts import ConceptQuery

# An alias's weight in the expanded lexical query (the typed and canonical names weigh 1); chosen on dev by
# bench/retrieval.py (0.25, 0.5 and 1 tried).
ALTERNATIVE_WEIGHT = 0.25


class PostingsSource(Protocol):
    """Reads the concept index by concept."""

    def postings(self, kind: str, concept_ids: Sequence[str], texts: Sequence[str] = ()) -> list[Posting]: ...

    def documents(
        self, kind: str, concept_ids: Sequence[str], texts: Sequence[str] = ()
    ) -> ConceptDocuments: ...

    def texts(self, kind: str) -> Sequence[str]: ...


class StorePostings:
    """The store's concept index (one query per concept)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con

    def postings(self, kind: str, concept_ids: Sequence[str], texts: Sequence[str] = ()) -> list[Posting]:
        return list_concept_postings(self.con, kind, concept_ids, texts)

    def documents(self, kind: str, concept_ids: Sequence[str], texts: Sequence[str] = ()) -> ConceptDocuments:
        return list_concept_documents(self.con, kind, concept_ids, texts)

    def texts(self, kind: str) -> Sequence[str]:
        return list_annotated_texts(self.con, kind)


class MemoryPostings:
    """Annotations held in memory (pmid → annotations), read the same way."""

    def __init__(self, annotations: Mapping[str, Iterable[Annotation]]) -> None:
        self._by_concept: dict[tuple[str, str], list[Posting]] = defaultdict(list)
        self._by_text: dict[tuple[str, str], list[Posting]] = defaultdict(list)
        for pmid, found in annotations.items():
            for a in found:
                posting = Posting(pmid, a.start, a.end, a.source, a.concept_id, a.text)
                if a.concept_id:
                    self._by_concept[(a.type, a.concept_id)].append(posting)
                self._by_text[(a.type, a.text)].append(posting)

    def postings(self, kind: str, concept_ids: Sequence[str], texts: Sequence[str] = ()) -> list[Posting]:
        rows = {p for c in concept_ids for p in self._by_concept.get((kind, c), ())}
        rows.update(p for t in texts for p in self._by_text.get((kind, t), ()))
        return sorted(rows, key=lambda p: (p.pmid, p.start, p.source, p.end))

    def documents(self, kind: str, concept_ids: Sequence[str], texts: Sequence[str] = ()) -> ConceptDocuments:
        return documents_of(self.postings(kind, concept_ids, texts))

    def texts(self, kind: str) -> Sequence[str]:
        return sorted({t for (k, t) in self._by_text if k == kind})


@lru_cache(maxsize=65536)
def _keys(text: str) -> tuple[str, ...]:
    return tuple(variant_keys(text))


def variant_texts(source: PostingsSource, keys: Sequence[str]) -> list[str]:
    """The variant mention texts of the concept index that denote one of ``keys`` (codons: any change there)."""
    return [t for t in source.texts("variant") if any(variant_matches(q, k) for q in keys for k in _keys(t))]


def documents_of(rows: Iterable[Posting]) -> ConceptDocuments:
    """Postings in (pmid, start, source, end) order per document: what the store's read does in SQL."""
    spans: dict[str, list[tuple[int, int]]] = defaultdict(list)
    how: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        if (row.start, row.end) not in spans[row.pmid]:
            spans[row.pmid].append((row.start, row.end))
        how[row.pmid].add(row.source)
    return ConceptDocuments(dict(spans), {pmid: ", ".join(sorted(s)) for pmid, s in how.items()})


def _slot_read(concept: QueryConcept, source: PostingsSource) -> tuple[str, Sequence[str], Sequence[str]]:
    """(kind, concept ids, texts) that read one slot's mentions: a linked concept's (a variant's: the texts that
    denote its key), or, for an unlinked name, those written exactly as typed."""
    if concept.linked and concept.kind == "variant":
        return "variant", (), variant_texts(source, concept.concept_ids)
    if concept.linked:
        return concept.kind, concept.concept_ids, ()
    return concept.kind, (), (concept.typed,)


def slot_postings(concept: QueryConcept, source: PostingsSource) -> list[Posting]:
    """The stored mentions of one slot, one row each."""
    return source.postings(*_slot_read(concept, source))


def slot_documents(concept: QueryConcept, source: PostingsSource) -> ConceptDocuments:
    """The stored mentions of one slot, per document."""
    return source.documents(*_slot_read(concept, source))


def concept_query(
    concept: QueryConcept, source: PostingsSource, alternative_weight: float = ALTERNATIVE_WEIGHT
) -> ConceptQuery:
    """What the retrieval package searches for one slot: its weighted forms and its postings.

    A linked concept's postings are the stored mentions of its concepts (a variant's: of the texts that
    denote its key); an unlinked name's are the stored mentions written exactly as typed.
    """
    found = slot_documents(concept, source)
    first = {concept.typed.casefold(), concept.canonical.casefold()}
    forms = tuple((f, 1.0 if f.casefold() in first else alternative_weight) for f in concept.forms)
    return ConceptQuery(concept.slot, concept.canonical or concept.typed, forms, found.spans, found.sources)


def stored_annotations(con: duckdb.DuckDBPyConnection, pmids: Sequence[str]) -> dict[str, list[Annotation]]:
    """The concept index's annotations of these documents, in one query; unannotated documents are absent."""
    return {pmid: [Annotation(r.start, r.end, r.text, r.entity_type, r.concept_id, r.canonical, r.confidence,
                              r.source) for r in rows]
            for pmid, rows in list_annotations(con, pmids).items()}
