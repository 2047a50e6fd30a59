"""A document's relation pairs, as stored, and when they are scored.

Every annotated document's co-mentioned concept pairs are stored (:mod:`curation.store.relations` holds the SQL)
with the active scorer's probability that the document relates them, in the same transaction as its annotations
(:func:`curation.relations.concept_index.annotate_documents` calls :func:`pair_rows`); the suggestions read them and
never score on a page view. Without an active scorer the pairs are stored unscored (a co-mention). A document's
pairs: every pair of distinct linked concepts it mentions, organisms excepted (:data:`UNPAIRED_KINDS`), each with
the sentence that relates them best (:func:`evidence_span`). :func:`score_documents` scores what a scorer has not.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import duckdb
import numpy as np

from curation.records import Document, Mention
from curation.relations.active import ActiveScorer
from curation.relations.features import TRIGGERS, document_view, pair_features
from curation.relations.pairs import candidate_pairs, concept_ids, group_by_concept, sentence_spans
from curation.relations.scorer import RelationScorer
from curation.store.annotations import AnnotationRow, annotations_per_document, list_annotations
from curation.store.base import transaction
from curation.store.corpus import get_documents
from curation.store.relations import PairRow, replace_relation_pairs

BATCH = 200  # documents scored and written per transaction

Progress = Callable[[int, int], None]  # (documents done, documents in all)

# Kinds never paired: an organism ("patients", "mice") is no slot of a relation a KB curates.
UNPAIRED_KINDS = frozenset({"species", "OrganismTaxon"})
# A document's pair as stored (``PairRow``): both sides with kind and name, the probability that
# the document relates them (None: unscored, a co-mention), whether one sentence holds both, and the offsets of
# the sentence that relates them best.


def evidence_span(text: str, mentions_a: Sequence[Mention], mentions_b: Sequence[Mention]) -> tuple[int, int, bool]:
    """(start, end, same sentence) of the text that relates two concepts best: the sentence holding both with
    the most trigger words (the earliest on a tie); without one, the sentences from the closest pair of
    mentions' first to its second."""
    spans = sentence_spans(text)
    starts = [s for s, _ in spans]

    def sentence_of(offset: int) -> int:
        return max(0, bisect_right(starts, offset) - 1)

    both = sorted({sentence_of(m.start) for m in mentions_a} & {sentence_of(m.start) for m in mentions_b})
    if both:
        def triggers(i: int) -> int:
            sentence = text[spans[i][0]:spans[i][1]].lower()
            return sum(any(w in sentence for w in words) for words in TRIGGERS.values())

        best = max(both, key=lambda i: (triggers(i), -i))
        return spans[best][0], spans[best][1], True
    x, y = min(((x, y) for x in mentions_a for y in mentions_b), key=lambda p: abs(p[0].start - p[1].start))
    first, last = sorted((sentence_of(x.start), sentence_of(y.start)))
    return spans[first][0], spans[last][1], False


def score_document(document: Document, mentions: Sequence[Mention], scorer: RelationScorer | None,
                   names: Mapping[str, str] | None = None) -> list[PairRow]:
    """Every pair of distinct concepts co-mentioned in ``document`` (``mentions``: its stored annotations, any
    source; unlinked ones ignored), scored by ``scorer`` (None: unscored), each with its evidence sentence.

    ``names``: concept id → the name to show (the concept id itself when absent). Kinds in
    :data:`UNPAIRED_KINDS` still count as context in the features but are never a pair's side.
    """
    unique = list({(m.start, m.end, m.type, m.concept_id): m for m in mentions if concept_ids(m)}.values())
    if not unique:
        return []
    scoped = Document(document.pmid, document.title, document.abstract, mentions=tuple(unique))
    by_concept = group_by_concept(unique)
    pairs = [p for p in candidate_pairs(scoped) if p.type_a not in UNPAIRED_KINDS and p.type_b not in UNPAIRED_KINDS]
    if not pairs:
        return []
    probabilities: Sequence[float | None]
    if scorer is not None:
        view = document_view(scoped, by_concept)
        features = np.vstack([pair_features(scoped, p, by_concept=by_concept, view=view,
                                             text_model=scorer.text) for p in pairs])
        probabilities = scorer.probabilities(features).tolist()
    else:
        probabilities = [None] * len(pairs)
    names = names or {}
    text = document.text
    out = []
    for pair, probability in zip(pairs, probabilities, strict=True):
        start, end, same = evidence_span(text, by_concept[pair.concept_a], by_concept[pair.concept_b])
        out.append(PairRow(document.pmid, pair.concept_a, pair.type_a, names.get(pair.concept_a, pair.concept_a),
                              pair.concept_b, pair.type_b, names.get(pair.concept_b, pair.concept_b),
                              None if probability is None else round(float(probability), 6), same, start, end))
    return out


def annotated_pairs(document: Document, annotations: Sequence, scorer: RelationScorer | None) -> list[PairRow]:
    """:func:`score_document` over a document's stored annotations (objects with ``start``, ``end``, ``text``,
    ``concept_id``, ``canonical``, ``source`` and ``type`` or ``entity_type``): each concept named by its
    canonical name (a predicted annotation's over a gold one's)."""
    text = document.text
    mentions, names = [], {}
    for a in annotations:
        kind = getattr(a, "entity_type", None) or a.type
        mention = Mention(document.pmid, a.start, a.end, a.text, kind, a.concept_id, a.source)
        if 0 <= a.start < a.end <= len(text):
            mentions.append(mention)
        for cid in concept_ids(mention):
            if a.canonical and (cid not in names or a.source != "gold"):
                names[cid] = a.canonical
    return score_document(document, mentions, scorer, names)


# --- when they are scored -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoringReport:
    """What a scoring run stored: the scorer, documents, pairs and seconds."""

    scorer: str
    documents: int
    pairs: int
    seconds: float

    def summary(self) -> str:
        """One line for a person."""
        return (f"{self.documents:,} documents scored for relations ({self.pairs:,} concept pairs, "
                f"{self.scorer}) in {self.seconds:.1f} s")


@dataclass(frozen=True)
class DocumentPairs:
    """A document's pairs as a scorer wrote them elsewhere (a background job), with how many annotations they were
    scored from."""

    pmid: str
    annotations: int
    rows: tuple[PairRow, ...]


def load_scored_pairs(con: duckdb.DuckDBPyConnection, scorer: str, documents: Iterable[DocumentPairs]
                      ) -> tuple[int, int]:
    """Store pairs scored elsewhere, in one transaction: (documents loaded, documents left unscored).

    A document is loaded only when it still has the number of annotations it was scored from: one re-annotated or
    gone since is left for a rescore (its stored pairs are those of its new annotations, or none).
    """
    counts = annotations_per_document(con)
    loaded = skipped = 0
    batch: list[DocumentPairs] = []

    def flush() -> None:
        nonlocal loaded
        replace_relation_pairs(con, scorer, [d.pmid for d in batch], [r for d in batch for r in d.rows])
        loaded += len(batch)
        batch.clear()

    with transaction(con):
        for document in documents:
            if counts.get(document.pmid) != document.annotations:
                skipped += 1
                continue
            batch.append(document)
            if len(batch) >= BATCH:
                flush()
        if batch:
            flush()
    return loaded, skipped


def pair_rows(document: Document, annotations: Sequence[AnnotationRow], active: ActiveScorer
              ) -> list[PairRow]:
    """The stored pairs of one document from its annotation rows (every source), scored by ``active``."""
    return annotated_pairs(document, annotations, active.scorer)


def score_documents(con: duckdb.DuckDBPyConnection, active: ActiveScorer, pmids: Sequence[str],
                    progress: Progress | None = None, batch: int = BATCH) -> ScoringReport:
    """Score the stored annotations of ``pmids`` and store their pairs, one transaction per batch."""
    started = time.time()
    pmids = list(dict.fromkeys(pmids))
    done = pairs = 0
    for first in range(0, len(pmids), batch):
        chunk = pmids[first:first + batch]
        documents = get_documents(con, chunk)
        stored = list_annotations(con, chunk)
        rows = [row for d in documents if d.pmid in stored for row in pair_rows(d, stored[d.pmid], active)]
        with transaction(con):
            pairs += replace_relation_pairs(con, active.version, [d.pmid for d in documents if d.pmid in stored],
                                            rows)
        done += len(chunk)
        if progress is not None:
            progress(done, len(pmids))
    return ScoringReport(active.version, done, pairs, round(time.time() - started, 2))
