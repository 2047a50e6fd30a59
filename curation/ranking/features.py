"""What the learned stage knows about one candidate document of one query: a fixed, named feature vector.

Every feature is something the product already has when it serves a search: the concept search's own hit
(group, ranks, scores, each query concept's matches), the document's text, and the store's signals about the
document (:class:`Evidence`: its stored relation pairs with the relation scorer's probabilities, its mentions per
kind, the KB records that cite it, the grades curators gave it). :data:`FEATURES` lists them with where each
comes from; the manual's table (docs/guide/training.md) is generated from it (:func:`feature_table`).

Features that identify a document's source rather than its content (its length: the corpora's abstracts differ
in length, and a query's relevant documents mostly come from one corpus) are marked ``source_identifying`` and
left out of the product's feature set (:data:`PRODUCT_FEATURES`); the benchmark measures with and without them.
The judgements of other queries (KB citations, curators' grades) are marked ``cross_query`` and are left out by
default too: a held-out split keeps a dev query's documents out of the KB, so on the benchmark they point away from
every dev positive, and in a store they can carry a dev query's label through its sibling records (the same
abstract cited for another variant); no measurement yet says what they are worth.
A missing value (a slot the query lacks, a pair the store has no probability for) is NaN, which LightGBM treats
as missing rather than as zero.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

import numpy as np

from curation.entities.query import QueryConcept
from curation.grades import Grade
from curation.records import Document
from curation.relations.pairs import sentence_spans
from curation.store.relations import PairRow
from index.hits import Hit

GRADE_GAINS = {Grade.COMPLETE: 2, Grade.PARTIAL: 1, Grade.NOT_RELEVANT: 0}  # graded gains (labels and features)
MAX_SLOTS = 3  # a schema's query slots (gene, variant / disease, ...): features per slot position
NAN = math.nan


class FeatureSpec(NamedTuple):
    """One feature: its column name, where its value comes from, and what it means to a curator."""

    name: str
    source: str
    meaning: str
    source_identifying: bool = False  # True: says which corpus a document came from more than what it says
    cross_query: bool = False  # True: judgements of other queries (KB, curators), which a held-out split cannot test


def _slot_specs(position: int) -> list[FeatureSpec]:
    slot = f"slot{position + 1}"
    where = f"concept search hit (query slot {position + 1})"
    return [
        FeatureSpec(f"{slot}_mentions", where, "mentions of the slot's concept in the document (text-only: found)"),
        FeatureSpec(f"{slot}_in_title", where, "1 when the concept is mentioned in the title"),
        FeatureSpec(f"{slot}_first_offset", where, "character offset of the concept's first mention"),
        FeatureSpec(f"{slot}_linked", where, "1: the concept index lists the mention; 0: found in the text only"),
    ]


FEATURES: tuple[FeatureSpec, ...] = (
    FeatureSpec("group_all", "concept search", "1 when the document mentions every query concept"),
    FeatureSpec("concepts_mentioned", "concept search", "how many query concepts the document mentions"),
    FeatureSpec("served_rank", "concept search", "the rank the concept search gave (1: first)"),
    FeatureSpec("served_score", "concept search", "the concept search's fused score within its group"),
    FeatureSpec("lexical_score", "BM25 (or RM3 when on) over the concepts' forms", "the lexical stage's score"),
    FeatureSpec("lexical_rank", "BM25 (or RM3 when on) over the concepts' forms", "the lexical stage's rank"),
    FeatureSpec("dense_score", "the served encoder (hybrid mode)", "cosine of query and document (NaN: not scored)"),
    *(s for position in range(MAX_SLOTS) for s in _slot_specs(position)),
    FeatureSpec("shared_sentence", "document text + the hit's mention spans",
                "the most query concepts mentioned in one sentence"),
    FeatureSpec("pair_probability", "stored relation pairs (relation scorer)",
                "best probability that the document relates two query concepts (NaN: none scored)"),
    FeatureSpec("pair_same_sentence", "stored relation pairs", "1 when a stored pair of query concepts shares a "
                "sentence"),
    FeatureSpec("answer_probability", "stored relation pairs (relation scorer)",
                "best probability that a query concept relates to a concept of the answer slot's kind"),
    FeatureSpec("answer_mentions", "stored annotations", "mentions of the answer slot's kind in the document"),
    FeatureSpec("kb_cited_elsewhere", "knowledge base", "KB records of other queries that cite the document",
                cross_query=True),
    FeatureSpec("graded_elsewhere", "curators' decisions",
                "best grade curators gave the document for other queries (2 complete, 1 partial, 0 not relevant)",
                cross_query=True),
    FeatureSpec("document_length", "document text", "characters in title + abstract", source_identifying=True),
)
FEATURE_NAMES: tuple[str, ...] = tuple(s.name for s in FEATURES)
PRODUCT_FEATURES: tuple[str, ...] = tuple(s.name for s in FEATURES if not s.source_identifying and not s.cross_query)
CROSS_QUERY_FEATURES: tuple[str, ...] = tuple(s.name for s in FEATURES if s.cross_query)


@dataclass(frozen=True)
class Evidence:
    """What the store knows about one document beyond the hit.

    Attributes:
        pairs: its stored relation pairs (score None: unscored co-mention).
        kinds: mention count per kind of its stored annotations.
        cited: query key (:func:`query_key`) → KB records of that query citing it.
        grades: query key → the best gain curators gave it for that query.
    """

    pairs: tuple[PairRow, ...] = ()
    kinds: Mapping[str, int] = field(default_factory=dict)
    cited: Mapping[str, int] = field(default_factory=dict)
    grades: Mapping[str, int] = field(default_factory=dict)


class Signals(Protocol):
    """Per-document evidence for a batch of candidates (a store, or memory in tests and the benchmark)."""

    def evidence(self, pmids: Sequence[str]) -> Mapping[str, Evidence]: ...


@dataclass(frozen=True)
class MemorySignals:
    """Evidence held in memory: pmid → :class:`Evidence` (absent: nothing known)."""

    by_pmid: Mapping[str, Evidence] = field(default_factory=dict)

    def evidence(self, pmids: Sequence[str]) -> Mapping[str, Evidence]:
        return {p: self.by_pmid[p] for p in pmids if p in self.by_pmid}


def query_key(values: Mapping[str, str]) -> str:
    """The identity of a query across KB records, decisions and searches: its filled slots, case-folded."""
    return "|".join(f"{slot}={value.strip().casefold()}" for slot, value in sorted(values.items()) if value.strip())


def _spans(match, text: str) -> list[tuple[int, int]]:
    """A concept's mention spans: the concept index's, or (text-only match) where its written forms occur."""
    if match.spans:
        return list(match.spans)
    folded = text.casefold()
    found = []
    for form in match.forms:
        start = folded.find(form.casefold())
        while start >= 0 and form:
            found.append((start, start + len(form)))
            start = folded.find(form.casefold(), start + 1)
    return sorted(found)


def _stage(hit: Hit, names: Sequence[str]):
    return next((s for s in hit.stages if s.stage in names), None)


def candidate_features(
    concepts: Sequence[QueryConcept], hit: Hit, document: Document | None, evidence: Evidence | None,
    key: str, answer_kind: str = "",
) -> list[float]:
    """One row of :data:`FEATURE_NAMES` for ``hit`` of the query ``concepts`` (``key``: its :func:`query_key`)."""
    text = document.text if document is not None else ""
    title_end = len(document.title) if document is not None else 0
    evidence = evidence or Evidence()
    lexical = _stage(hit, ("lexical", "rm3"))
    row: dict[str, float] = {
        "group_all": float(hit.group == "all"),
        "concepts_mentioned": float(len(hit.concepts)),
        "served_rank": float(hit.rank),
        "served_score": float(hit.score),
        "lexical_score": float(lexical.score) if lexical else NAN,
        "lexical_rank": float(lexical.rank) if lexical and lexical.rank is not None else NAN,
        "dense_score": float(hit.dense) if hit.dense is not None else NAN,
    }
    by_slot = {m.slot: m for m in hit.concepts}
    sentences = sentence_spans(text) if text else ()
    in_sentence: dict[int, set[str]] = {}
    for position in range(MAX_SLOTS):
        prefix = f"slot{position + 1}"
        concept = concepts[position] if position < len(concepts) else None
        match = by_slot.get(concept.slot) if concept is not None else None
        if concept is None:
            values = (NAN, NAN, NAN, NAN)
        elif match is None:
            values = (0.0, 0.0, NAN, NAN)
        else:
            spans = _spans(match, text)
            for start, _ in spans:
                index = next((i for i, (s, e) in enumerate(sentences) if s <= start < e), -1)
                in_sentence.setdefault(index, set()).add(concept.slot)
            first = spans[0][0] if spans else NAN
            values = (float(max(match.mentions, len(spans))), float(bool(spans) and spans[0][0] < title_end), first,
                      float(match.mentions > 0))
        for suffix, value in zip(("mentions", "in_title", "first_offset", "linked"), values, strict=True):
            row[f"{prefix}_{suffix}"] = value
    row["shared_sentence"] = float(max((len(s) for i, s in in_sentence.items() if i >= 0), default=0))
    ids = {c for concept in concepts for c in concept.concept_ids}
    between = [p for p in evidence.pairs if p.concept_a in ids and p.concept_b in ids]
    scored = [p.score for p in between if p.score is not None]
    row["pair_probability"] = max(scored) if scored else NAN
    row["pair_same_sentence"] = float(any(p.same_sentence for p in between)) if evidence.pairs else NAN
    answer = [p.score for p in evidence.pairs if p.score is not None and answer_kind and (
        (p.concept_a in ids and p.kind_b == answer_kind) or (p.concept_b in ids and p.kind_a == answer_kind))]
    row["answer_probability"] = max(answer) if answer else NAN
    row["answer_mentions"] = float(evidence.kinds.get(answer_kind, 0)) if answer_kind else NAN
    row["kb_cited_elsewhere"] = float(sum(n for k, n in evidence.cited.items() if k != key))
    other = [g for k, g in evidence.grades.items() if k != key]
    row["graded_elsewhere"] = float(max(other)) if other else NAN
    row["document_length"] = float(len(text))
    return [row[name] for name in FEATURE_NAMES]


def feature_matrix(
    concepts: Sequence[QueryConcept], hits: Sequence[Hit], documents: Mapping[str, Document], signals: Signals | None,
    key: str, answer_kind: str = "",
) -> np.ndarray:
    """The rows of ``hits`` (one query's candidates) as a float matrix (n_hits, len(FEATURE_NAMES))."""
    pmids = [h.pmid for h in hits]
    evidence = signals.evidence(pmids) if signals is not None else {}
    rows = [candidate_features(concepts, h, documents.get(h.pmid), evidence.get(h.pmid), key, answer_kind)
            for h in hits]
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), len(FEATURE_NAMES))


def feature_table(names: Sequence[str] = FEATURE_NAMES) -> str:
    """A Markdown table of the features (name, where it comes from, meaning, in the product set or not)."""
    lines = ["| Feature | Comes from | Meaning | In the product set |", "|---|---|---|---|"]
    for spec in FEATURES:
        if spec.name in names:
            kept = ("no (identifies the source)" if spec.source_identifying else
                    "no (other queries' judgements: measured apart)" if spec.cross_query else "yes")
            lines.append(f"| `{spec.name}` | {spec.source} | {spec.meaning} | {kept} |")
    return "\n".join(lines)
