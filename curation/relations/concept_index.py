"""Filling the concept index: a document's annotations and its scored relation pairs, written together.

The concept index is the store's ``annotations`` table (:mod:`curation.store.annotations`): each document's gold
mentions (source "gold") and what an :class:`~curation.entities.annotation.Annotator` found in it, written once
when the document is ingested (:func:`annotate_new`) or when a new recogniser is activated (re-annotation), never
when a page is viewed. Each document's co-mentioned concept pairs are scored by the relation scorer
(:func:`curation.relations.stored_pairs.pair_rows`) and stored in the same transaction, which is why this lives in
relations/. Each batch of documents is written in its own transaction: a batch that fails leaves the documents
ingested, unannotated (the Curate page then highlights them from the dictionaries in memory) and named in the
report, and the next re-annotation picks them up, since they are still stale.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import duckdb

from curation.entities.annotation import Annotation, Annotator
from curation.entities.gold import gold_rows
from curation.entities.served_annotator import REANNOTATE_HINT
from curation.relations.active import ActiveScorer, active_scorer
from curation.relations.stored_pairs import pair_rows, score_documents
from curation.store.annotations import AnnotationRow, list_stale_documents, replace_annotations, sort_concept_index
from curation.store.base import transaction
from curation.store.corpus import get_documents
from curation.store.relations import replace_relation_pairs

__all__ = ["BATCH", "LOAD_BATCH", "SORT_AFTER_DOCUMENTS", "AnnotatedDocument", "AnnotationReport", "Progress",
           "annotate_documents", "annotate_new", "store_annotated"]

BATCH = 200  # documents annotated and written per transaction
#: A run that annotated this many documents rewrites the concept index in concept order after its last batch
#: (store.annotations.sort_concept_index): at 1M abstracts a concept's postings are then read from a few row groups.
SORT_AFTER_DOCUMENTS = 50_000

LOAD_BATCH = 500  # documents per replace_annotations call of store_annotated (all in one transaction)

Progress = Callable[[int, int], None]  # (documents done, documents in all)


class AnnotatedDocument(Protocol):
    """A document annotated elsewhere (the recogniser job's worker, over a snapshot): its text length then, its rows."""

    @property
    def pmid(self) -> str: ...
    @property
    def chars(self) -> int: ...
    @property
    def rows(self) -> Sequence[AnnotationRow]: ...


@dataclass(frozen=True)
class AnnotationReport:
    """What an annotation run wrote: documents, mentions, and the batches that failed (named)."""

    version: str
    annotated: int = 0
    mentions: int = 0
    failed: tuple[str, ...] = ()
    errors: tuple[str, ...] = field(default_factory=tuple)
    seconds: float = 0.0

    def summary(self) -> str:
        text = (f"{self.annotated:,} documents annotated ({self.mentions:,} mentions, {self.version}) "
                f"in {self.seconds:.1f} s")
        if self.failed:
            text += (f"; {len(self.failed):,} documents could not be annotated and are highlighted from the "
                     f"dictionaries until annotated ({REANNOTATE_HINT}): " + "; ".join(self.errors))
        return text


def _rows(pmid: str, found: Sequence[Annotation], version: str) -> list[AnnotationRow]:
    return [AnnotationRow(pmid, a.start, a.end, a.text, a.type, a.concept_id, a.canonical, a.confidence,
                          a.source, version) for a in found]


def annotate_documents(
    con: duckdb.DuckDBPyConnection, annotator: Annotator, pmids: Sequence[str], progress: Progress | None = None,
    batch: int = BATCH, relations: ActiveScorer | None = None,
) -> AnnotationReport:
    """Annotate the given documents and store their annotations, one transaction per batch.

    Each document's co-mentioned concept pairs are scored by the relation scorer (``relations``; None: the
    store's active one) and stored in the same transaction. A batch that fails (the annotator raises, the
    write fails) is rolled back and named in the report; the other batches are kept. Decisions, KB records
    and gold mentions are never touched.
    """
    started = time.time()
    version = annotator.version
    relations = relations or active_scorer(con)
    pmids = list(dict.fromkeys(pmids))
    annotated = mentions = 0
    failed: list[str] = []
    errors: list[str] = []
    for first in range(0, len(pmids), batch):
        chunk = pmids[first : first + batch]
        try:
            documents = get_documents(con, chunk, with_mentions=True)
            found = annotator.annotate([d.text for d in documents])
            per_doc = {d.pmid: gold_rows(d, annotator.matcher.lexicon) + _rows(d.pmid, spans, version)
                       for d, spans in zip(documents, found, strict=True)}
            rows = [row for d in documents for row in per_doc[d.pmid]]
            pairs = [p for d in documents for p in pair_rows(d, per_doc[d.pmid], relations)]
            with transaction(con):
                mentions += replace_annotations(con, version, {d.pmid: len(d.text) for d in documents}, rows)
                replace_relation_pairs(con, relations.version, [d.pmid for d in documents], pairs)
            annotated += len(documents)
        except Exception as exc:  # noqa: BLE001 - any failure of one batch is reported; the others go on
            failed.extend(chunk)
            reason = " ".join(str(exc).split())[:300] or type(exc).__name__
            errors.append(f"PMIDs {chunk[0]} to {chunk[-1]} ({len(chunk)}): {reason}")
        if progress is not None:
            progress(min(first + batch, len(pmids)), len(pmids))
    if annotated >= SORT_AFTER_DOCUMENTS:
        with transaction(con):
            sort_concept_index(con)
    return AnnotationReport(version, annotated, mentions, tuple(failed), tuple(errors), round(time.time() - started, 2))


def annotate_new(
    con: duckdb.DuckDBPyConnection, annotator: Annotator, pmids: Sequence[str], progress: Progress | None = None
) -> AnnotationReport:
    """Annotate those of ``pmids`` that are stale for ``annotator`` (what an ingest calls)."""
    return annotate_documents(con, annotator, list_stale_documents(con, annotator.version, pmids), progress)


def store_annotated(con: duckdb.DuckDBPyConnection, version: str, documents: Iterable[AnnotatedDocument]
                    ) -> tuple[int, int]:
    """Store documents annotated elsewhere by annotator ``version`` in one transaction, then score their relation
    pairs; (documents loaded, documents left stale).

    A document is left as it is when its text changed length since it was annotated or it is gone (a document whose
    gold mentions changed since stays stale: the store's staleness rule sees it).
    """
    loaded = skipped = 0
    batch: list[AnnotatedDocument] = []
    kept: list[str] = []

    def flush() -> None:
        nonlocal loaded, skipped
        pmids = [d.pmid for d in batch]
        lengths = {d.pmid: len(d.text) for d in get_documents(con, pmids)}
        keep = [d for d in batch if lengths.get(d.pmid) == d.chars]
        skipped += len(batch) - len(keep)
        rows = [row for d in keep for row in d.rows]
        replace_annotations(con, version, {d.pmid: d.chars for d in keep}, rows)
        kept.extend(d.pmid for d in keep)
        loaded += len(keep)
        batch.clear()

    with transaction(con):
        for document in documents:
            batch.append(document)
            if len(batch) >= LOAD_BATCH:
                flush()
        if batch:
            flush()
    score_documents(con, active_scorer(con), kept)  # their relation pairs, from the new annotations
    return loaded, skipped
