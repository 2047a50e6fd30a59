"""RM3 pseudo-relevance feedback for the lexical stage (seed 004's BM25 + RM3 first stage).

RM3 (Lavrenko & Croft, 2001, *Relevance-Based Language Models*, SIGIR; interpolated with the query
as Anserini / Pyserini's ``Rm3Reranker`` does): the first pass's top documents are taken as relevant,
a relevance model P(t | R) = Σ_d P(d) · P(t | d) is estimated from them, its best terms are kept, and
the query becomes an interpolation of the original terms and those.

bm25s keeps no raw term counts, only each (term, document) pair's BM25 score, so P(t | d) here is the
document's row of BM25 term scores normalised to sum 1 (a BM25-weighted document model) rather than
the term frequencies over the document length that Anserini uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from index.lexical import LexicalIndex


@dataclass(frozen=True)
class RM3Config:
    """How much feedback RM3 takes (Anserini's defaults).

    Attributes:
        fb_docs: feedback documents, the first pass's best (at least 1).
        fb_terms: terms kept from the relevance model (at least 1).
        original_weight: the original query's share of the final weights, in [0, 1].
    """

    fb_docs: int = 10
    fb_terms: int = 10
    original_weight: float = 0.5

    def __post_init__(self) -> None:
        if self.fb_docs < 1 or self.fb_terms < 1:
            raise ValueError(
                f"RM3 needs at least one feedback document and one feedback term "
                f"(got fb_docs={self.fb_docs}, fb_terms={self.fb_terms})"
            )
        if not 0.0 <= self.original_weight <= 1.0:
            raise ValueError(f"RM3 original_weight must lie in [0, 1], got {self.original_weight}")


def _normalised(weights: Mapping[int, float]) -> dict[int, float]:
    """The weights scaled to sum 1 (empty when they do not sum to a positive number)."""
    total = sum(weights.values())
    return {t: w / total for t, w in weights.items()} if total > 0 else {}


def rm3(
    index: LexicalIndex,
    weights: Mapping[int, float],
    config: RM3Config = RM3Config(),
    first: np.ndarray | None = None,
) -> dict[int, float]:
    """The query's term weights after RM3 feedback.

    Final weights: ``original_weight · (weights normalised to sum 1) + (1 − original_weight) · (the
    fb_terms best terms of P(t | R), normalised to sum 1)``, so they sum to 1. Feedback documents are
    the fb_docs best of the first pass with a score above 0, weighted by their scores normalised to
    sum 1 (Anserini weights by the raw score and normalises the model afterwards: the same).

    Args:
        index: the BM25 index the weights belong to.
        weights: the query's token id → weight (:meth:`LexicalIndex.term_weights`).
        config: feedback depth, terms kept and interpolation.
        first: the first pass's (n_docs,) scores when the caller already has them; by default
            ``index.weighted_scores(weights)``.

    Returns:
        token id → weight; a new dict equal to ``weights`` when no document scores above 0.

    Raises:
        ValueError: ``first`` does not have one score per document of the index.

    Example:
        >>> expanded = rm3(index, index.term_weights([("BRAF", 1.0), ("V600E", 1.0)]))
        >>> index.search_weighted(expanded, k=10)
    """
    original = _normalised(weights)
    if not original:
        return dict(weights)
    if first is None:
        scores = index.weighted_scores(weights)  # (n_docs,)
    else:
        scores = np.asarray(first)
        if scores.shape != (len(index),):
            raise ValueError(
                f"RM3 first-pass scores have shape {scores.shape}, but the index has {len(index)} "
                "documents; pass one score per document, in the order of index.ids"
            )
    positive = np.flatnonzero(scores > 0)
    if positive.size == 0:
        return dict(weights)
    top = positive[np.argsort(-scores[positive], kind="stable")[: config.fb_docs]]  # (fb,) rows, best first
    doc_weights = scores[top].astype(np.float64) / float(scores[top].sum())  # (fb,) P(d), sums to 1

    rows = index.doc_term_matrix()[top]  # (fb, vocabulary) CSR, a copy
    lengths = np.asarray(rows.sum(axis=1), dtype=np.float64).ravel()  # (fb,)
    lengths[lengths == 0] = 1.0  # a document with no scored term contributes nothing
    # P(t | R) = Σ_d P(d) · P(t | d), P(t | d) = BM25(t, d) / Σ_t' BM25(t', d).
    relevance = np.asarray(rows.multiply((doc_weights / lengths)[:, None]).sum(axis=0)).ravel()  # (vocabulary,)
    candidates = np.flatnonzero(relevance > 0)
    # Stable sort of ascending token ids: equal terms are kept by token id.
    kept = candidates[np.argsort(-relevance[candidates], kind="stable")[: config.fb_terms]]
    model = _normalised({int(t): float(relevance[t]) for t in kept})
    if not model:
        return dict(weights)

    expanded = {t: config.original_weight * w for t, w in original.items()}
    for term, weight in model.items():
        expanded[term] = expanded.get(term, 0.0) + (1.0 - config.original_weight) * weight
    return expanded
