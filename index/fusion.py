"""Fusing ranked lists. Pure functions over the one hit shape, :data:`index.hits.Run`.

- :func:`rrf`: reciprocal rank fusion, score = Σ_r w_r / (k + rank_r(d)), ranks from 1.
- :func:`slate_vote`: the rank voting of seed 004, each system gives its top ten documents
  25, 19, 15, 12, 10, 8, 6, 5, 4, 4 points.
- :func:`weighted`: convex combination of per-query min-max normalised scores.
- :func:`rerank`: keep one system's top-k candidates, order them by another system's scores
  (dense re-ranking of the BM25 top-k, as in seeds 003/004), optionally mixed with the first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from index.hits import Run, RunDict, ranked

SLATE_POINTS = (25, 19, 15, 12, 10, 8, 6, 5, 4, 4)


def _weights(runs: Sequence[Run], weights: Sequence[float] | None) -> Sequence[float]:
    if weights is None:
        return [1.0] * len(runs)
    if len(weights) != len(runs):
        raise ValueError(f"{len(weights)} weights for {len(runs)} runs")
    return weights


def _query_ids(runs: Sequence[Run]) -> list[str]:
    seen: dict[str, None] = {}
    for run in runs:
        seen.update(dict.fromkeys(run))
    return list(seen)


def rrf(runs: Sequence[Run], k: float = 60.0, weights: Sequence[float] | None = None) -> RunDict:
    """Reciprocal rank fusion (Cormack et al., 2009)."""
    weights = _weights(runs, weights)
    fused: RunDict = {}
    for qid in _query_ids(runs):
        scores: dict[str, float] = {}
        for run, weight in zip(runs, weights, strict=True):
            for rank, (doc, _) in enumerate(ranked(run.get(qid, {})), start=1):
                scores[doc] = scores.get(doc, 0.0) + weight / (k + rank)
        fused[qid] = scores
    return fused


def slate_vote(runs: Sequence[Run], points: Sequence[float] = SLATE_POINTS) -> RunDict:
    """Rank voting: each run gives ``points[i]`` to its (i+1)-th document; beyond the slate, nothing."""
    fused: RunDict = {}
    for qid in _query_ids(runs):
        scores: dict[str, float] = {}
        for run in runs:
            for (doc, _), value in zip(ranked(run.get(qid, {})), points, strict=False):
                scores[doc] = scores.get(doc, 0.0) + value
        fused[qid] = scores
    return fused


def _minmax(scores: Mapping[str, float]) -> dict[str, float]:
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if high == low:
        return {doc: 1.0 for doc in scores}
    return {doc: (value - low) / (high - low) for doc, value in scores.items()}


def weighted(runs: Sequence[Run], weights: Sequence[float]) -> RunDict:
    """Σ_r w_r · minmax_r(d); a document missing from a run gets 0 from it."""
    weights = _weights(runs, weights)
    fused: RunDict = {}
    for qid in _query_ids(runs):
        scores: dict[str, float] = {}
        for run, weight in zip(runs, weights, strict=True):
            for doc, value in _minmax(run.get(qid, {})).items():
                scores[doc] = scores.get(doc, 0.0) + weight * value
        fused[qid] = scores
    return fused


def rerank(first: Run, second: Run, depth: int, mix: float = 1.0) -> RunDict:
    """Re-order ``first``'s top ``depth`` documents by ``second``.

    Score = mix · minmax(second) + (1 - mix) · minmax(first) over the candidates; documents
    below the depth keep their order under all candidates. ``second`` must score every
    candidate (a candidate it lacks counts as its lowest score).
    """
    if not 0.0 <= mix <= 1.0:
        raise ValueError(f"mix must be in [0, 1], got {mix}")
    fused: RunDict = {}
    for qid, scores in first.items():
        order = ranked(scores)
        head, tail = order[:depth], order[depth:]
        head_first = _minmax(dict(head))
        other = second.get(qid, {})
        floor = min((other[d] for d, _ in head if d in other), default=0.0)
        head_second = _minmax({d: other.get(d, floor) for d, _ in head})
        out = {d: 1.0 + mix * head_second[d] + (1 - mix) * head_first[d] for d, _ in head}
        # Tail documents stay below every candidate, in their original order.
        for position, (doc, _) in enumerate(tail):
            out[doc] = 1.0 - (position + 1) / (len(tail) + 1)
        fused[qid] = out
    return fused


def top_k(run: Run, k: int) -> RunDict:
    """Cut every query's hits to its k best."""
    return {qid: dict(ranked(scores)[:k]) for qid, scores in run.items()}
