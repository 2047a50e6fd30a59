"""Concept search: the documents that mention what a query means, however they write it.

A query is one :class:`ConceptQuery` per typed entity: the concept's surface forms (every synonym,
notation and alias the caller knows, each with a weight) and its postings in the concept index
(the documents whose stored annotations carry the concept, with the mention offsets). The stages:

1. **concepts**: the postings, read as they are.
2. **lexical**: per concept, an expanded BM25 query of its forms as weighted terms
   (:meth:`index.lexical.LexicalIndex.term_weights`), so a document that writes "HER2" scores for
   ERBB2; the query's lexical score is the sum over its concepts. Optionally RM3 pseudo-relevance
   feedback (:mod:`index.expansion`, seed 004's BM25 + RM3) re-weights the union of the terms.
3. **mention check**: a document the lexical stage finds for a concept that the concept index does
   not list is kept for that concept only when ``verify`` (the caller's text matcher) finds one of
   the concept's forms in it, so a partial token overlap ("growth factor" for "epidermal growth
   factor receptor") never counts as a mention.
4. **no filler**: a document that mentions none of the query's concepts is never returned. Documents
   that mention every concept come first (group "all"), then those that mention some, by how many.
5. **dense** (optional): the caller's exact cosine of the query with the candidates; within a group
   the order is ``(1 - mix) · minmax(lexical) + mix · minmax(dense)``.

Everything here is pure: the caller (``curation``) links typed names to concepts, reads the postings
from its store and matches text. ``index`` never imports ``curation``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from index.errors import RetrievalError
from index.expansion import RM3Config, rm3
from index.hits import ConceptMatch, Hit, StageScore
from index.lexical import LexicalIndex

GROUP_ALL = "all"
GROUP_SOME = "some"

# verify(concept position, pmids) -> {pmid: surface forms found in it}; pmids absent: not mentioned.
Verify = Callable[[int, Sequence[str]], Mapping[str, tuple[str, ...]]]
# dense(pmids) -> {pmid: cosine of the query with the document}
DenseScores = Callable[[Sequence[str]], Mapping[str, float]]


class ConceptQuery(NamedTuple):
    """One query concept as the index sees it.

    Attributes:
        slot: the query slot it fills ("Gene").
        label: its display name (the chip's canonical name).
        forms: (surface form, weight) pairs: the lexical stage's expanded query.
        postings: pmid -> (start, end) offsets of its mentions in the concept index.
        sources: pmid -> how the concept index found it there ("dictionary", "recogniser", ...), when known.
        texts: pmid -> the concept's forms as written there, for documents the caller found by their text that
            the concept index does not list (a name the annotator missed); they count as mentions, as ``verify``'s do.
    """

    slot: str
    label: str
    forms: tuple[tuple[str, float], ...]
    postings: Mapping[str, Sequence[tuple[int, int]]]
    sources: Mapping[str, str] | None = None
    texts: Mapping[str, tuple[str, ...]] | None = None


@dataclass(frozen=True)
class ConceptSearchConfig:
    """How the concept search ranks.

    Attributes:
        depth: per concept, how many of the lexical stage's best documents that the concept index does
            not list are given to ``verify`` (the rest of those are not candidates for that concept).
        rm3: RM3 feedback on the lexical stage, or None.
        dense_mix: the dense share of the order within a group (0: the lexical order; dense scores shown).
        dense_depth: how many of the best candidates dense re-scores.
    """

    depth: int = 100
    rm3: RM3Config | None = None
    dense_mix: float = 0.0
    dense_depth: int = 100

    def __post_init__(self) -> None:
        if not 0.0 <= self.dense_mix <= 1.0:
            raise ValueError(f"dense_mix must be in [0, 1], got {self.dense_mix}")


@dataclass(frozen=True)
class ConceptRanking:
    """A concept search's answer.

    Attributes:
        hits: the best ``k`` documents, every one mentioning at least one query concept.
        missing: positions of the query concepts no document mentions.
        groups: how many documents (not only the ``k`` shown) mention all / some of the concepts.
        per_concept: per query concept, how many documents mention it.
    """

    hits: list[Hit]
    missing: tuple[int, ...]
    groups: Mapping[str, int]
    per_concept: tuple[int, ...]


def _best_rows(scores: np.ndarray, n: int) -> np.ndarray:
    """The rows of the ``n`` best positive scores (all rows tied with the n-th too), best first, ties by row.

    A partial selection (``argpartition``) first, so a query over millions of documents sorts only what it uses.
    """
    positive = np.flatnonzero(scores > 0)
    if n <= 0 or not len(positive):
        return positive[:0]
    values = scores[positive]
    if n < len(positive):
        threshold = values[np.argpartition(-values, n - 1)[n - 1]]
        keep = values >= threshold
        positive, values = positive[keep], values[keep]
    return positive[np.lexsort((positive, -values))]


def _minmax(values: Mapping[str, float]) -> dict[str, float]:
    if not values:
        return {}
    low, high = min(values.values()), max(values.values())
    if high == low:
        return dict.fromkeys(values, 1.0)
    return {d: (v - low) / (high - low) for d, v in values.items()}


def _ranks(scores: Mapping[str, float]) -> dict[str, int]:
    order = sorted(scores, key=lambda d: (-scores[d], d))
    return {d: position for position, d in enumerate(order, start=1)}


def concept_search(
    concepts: Sequence[ConceptQuery],
    lexical: LexicalIndex,
    k: int = 20,
    config: ConceptSearchConfig = ConceptSearchConfig(),
    verify: Verify | None = None,
    dense: DenseScores | None = None,
) -> ConceptRanking:
    """Rank the documents that mention the query's concepts (see the module docstring).

    Args:
        concepts: one entry per query entity, in slot order.
        lexical: the BM25 index of the corpus.
        k: how many hits to return.
        config: depths, RM3 and the dense share.
        verify: the caller's text check for lexical candidates the concept index does not list
            (None: only the concept index decides).
        dense: the caller's dense scores of candidates (None: no dense stage).

    Raises:
        RetrievalError: no concept was given.
    """
    if not concepts:
        raise RetrievalError("a concept search needs at least one query concept")
    row_of = lexical.row_of
    ids = lexical.ids
    n_docs = len(ids)
    total = np.zeros(n_docs, dtype=np.float32)  # (n_docs,) the query's lexical score
    union: dict[int, float] = {}
    matches: list[dict[str, ConceptMatch]] = []
    for position, concept in enumerate(concepts):
        weights = lexical.term_weights(concept.forms) if n_docs else {}
        scores = lexical.weighted_scores(weights) if weights else np.zeros(n_docs, dtype=np.float32)
        total += scores
        for term, weight in weights.items():
            union[term] = union.get(term, 0.0) + weight
        sources = concept.sources or {}
        found = {
            pmid: ConceptMatch(
                concept.slot, concept.label, len(spans), tuple(spans),
                f"concept index: {sources[pmid]}" if pmid in sources else "concept index",
            )
            for pmid, spans in concept.postings.items() if spans
        }
        for pmid, forms in (concept.texts or {}).items():
            found.setdefault(pmid, ConceptMatch(concept.slot, concept.label, 0, (), "text", tuple(forms)))
        if verify is not None and weights:
            best = _best_rows(scores, config.depth + len(found))
            unlisted = [ids[row] for row in best if ids[row] not in found][: config.depth]
            if unlisted:
                for pmid, forms in verify(position, unlisted).items():
                    found[pmid] = ConceptMatch(concept.slot, concept.label, 0, (), "text", tuple(forms))
        matches.append(found)

    stage = "lexical"
    if config.rm3 is not None and union:
        stage = "rm3"
        total = lexical.weighted_scores(rm3(lexical, union, config.rm3, first=total))

    candidates = set().union(*(m.keys() for m in matches))
    counts = {pmid: sum(pmid in m for m in matches) for pmid in candidates}
    lexical_scores = {pmid: float(total[row_of[pmid]]) if pmid in row_of else 0.0 for pmid in candidates}
    order = sorted(candidates, key=lambda d: (-counts[d], -lexical_scores[d], d))

    dense_scores: dict[str, float] = {}
    if dense is not None and order:
        dense_scores = {d: float(v) for d, v in dense(order[: config.dense_depth]).items()}
    lexical_norm = _minmax(lexical_scores)
    dense_norm = _minmax(dense_scores)
    mix = config.dense_mix if dense_scores else 0.0
    fused = {d: (1 - mix) * lexical_norm.get(d, 0.0) + mix * dense_norm.get(d, 0.0) for d in candidates}
    order = sorted(candidates, key=lambda d: (-counts[d], -fused[d], -lexical_scores[d], d))

    n = len(concepts)
    lexical_rank, dense_rank = _ranks(lexical_scores), _ranks(dense_scores)
    hits = []
    for rank, pmid in enumerate(order[:k], start=1):
        stages = [
            StageScore("concepts", float(counts[pmid]), None),
            StageScore(stage, lexical_scores[pmid], lexical_rank[pmid]),
        ]
        if pmid in dense_scores:
            stages.append(StageScore("dense", dense_scores[pmid], dense_rank[pmid]))
        stages.append(StageScore("fused", fused[pmid], rank))
        hits.append(Hit(
            pmid, rank, fused[pmid], lexical_scores[pmid], dense_scores.get(pmid), tuple(stages),
            tuple(m[pmid] for m in matches if pmid in m), GROUP_ALL if counts[pmid] == n else GROUP_SOME,
        ))
    every = sum(c == n for c in counts.values())
    return ConceptRanking(
        hits=hits,
        missing=tuple(i for i, m in enumerate(matches) if not m),
        groups={GROUP_ALL: every, GROUP_SOME: len(candidates) - every},
        per_concept=tuple(len(m) for m in matches),
    )
