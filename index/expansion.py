"""RM3 pseudo-relevance feedback for the lexical stage (seed 004's BM25 + RM3 first stage).

RM3 (Lavrenko & Croft, 2001, *Relevance-based language models*; as Anserini / Pyserini apply it): the
first pass's top documents are taken as relevant, a relevance model P(t | R) = Σ_d P(d) · P(t | d) is
estimated from them, its best terms are kept, and the query becomes an interpolation of the original
terms and those. bm25s keeps no raw term counts, so P(t | d) is the document's row of BM25 term scores
normalised to sum 1 (a BM25-weighted document model) rather than term frequencies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from index.lexical import LexicalIndex


@dataclass(frozen=True)
class RM3Config:
    """Attributes:
        fb_docs: feedback documents (the first pass's best).
        fb_terms: expansion terms kept from the relevance model.
        original_weight: the original query's share of the final weights.
    """

    fb_docs: int = 10
    fb_terms: int = 10
    original_weight: float = 0.5


def _normalised(weights: Mapping[int, float]) -> dict[int, float]:
    total = sum(weights.values())
    return {t: w / total for t, w in weights.items()} if total > 0 else {}


def rm3(
    index: LexicalIndex, weights: Mapping[int, float], config: RM3Config = RM3Config(),
    first: np.ndarray | None = None,
) -> dict[int, float]:
    """The query's term weights after RM3 (the input unchanged when the first pass finds nothing).

    Args:
        index: the BM25 index.
        weights: the query's token id → weight.
        config: feedback depth, terms kept and interpolation.
        first: the first pass's (n_docs,) scores when the caller has them.

    Returns:
        token id → weight, summing to 1.

    Example:
        >>> expanded = rm3(index, index.term_weights([("BRAF", 1.0)]))
    """
    original = _normalised(weights)
    if not original:
        return dict(weights)
    scores = index.weighted_scores(weights) if first is None else first  # (n_docs,)
    positive = np.flatnonzero(scores > 0)
    if positive.size == 0:
        return dict(weights)
    top = positive[np.argsort(-scores[positive], kind="stable")[: config.fb_docs]]
    doc_weights = scores[top] / scores[top].sum()  # (fb_docs,)
    rows = index.doc_term_matrix()[top]  # (fb_docs, vocabulary)
    sums = np.asarray(rows.sum(axis=1)).ravel()
    sums[sums == 0] = 1.0
    relevance = np.asarray(rows.multiply((doc_weights / sums)[:, None]).sum(axis=0)).ravel()  # (vocabulary,)
    kept = np.argsort(-relevance, kind="stable")[: config.fb_terms]
    model = _normalised({int(t): float(relevance[t]) for t in kept if relevance[t] > 0})
    out = {t: config.original_weight * w for t, w in original.items()}
    for term, weight in model.items():
        out[term] = out.get(term, 0.0) + (1 - config.original_weight) * weight
    return out
