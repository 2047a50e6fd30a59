"""Cross-encoder re-ranking of a first stage's best hits (seed 004: BM25 + RM3 → a BERT cross-encoder).

A cross-encoder reads the query and one document together and gives one relevance score; it is too slow
to score a corpus, so it re-orders only the first stage's top ``k``. Here:

- :func:`rerank_hits` is pure: given any pair scorer, it scores the top ``k`` hits and re-orders them
  **within their group** (the concept search's promise: every "all" hit stays above every "some" hit,
  :mod:`index.concepts`); each re-scored hit gets a ``StageScore("cross-encoder", score, rank)``; hits
  below ``k`` keep their order after.
- :func:`rerank_run` does the same on a BEIR :data:`index.hits.Run` (no groups), for evaluation.
- :class:`CrossEncoderReranker` wraps a sentence-transformers ``CrossEncoder`` folder as that scorer.
- :class:`CpuRule` is the measured rule that decides whether the stage is served on a CPU: it is when the
  95th percentile of re-ranking the top ``k`` stays within the budget (150 ms by default).

Nothing here imports ``curation``; the model is loaded only by :meth:`CrossEncoderReranker.load`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from index.errors import RetrievalError
from index.hits import Hit, Run, RunDict, StageScore, ranked

STAGE = "cross-encoder"
DEFAULT_K = 50
CPU_BUDGET_MS = 150.0
# scorer(pairs of (query, document text)) -> one relevance score per pair, higher is better
PairScorer = Callable[[Sequence[tuple[str, str]]], Sequence[float]]


class RerankerUnavailable(RetrievalError):
    """The cross-encoder folder is missing or cannot be loaded."""


def _order_within_groups(groups: Sequence[Hashable], scores: Sequence[float]) -> list[int]:
    """Positions 0..n-1 re-ordered so each group keeps the slots it held, its members sorted by score.

    Ties keep the first stage's order (a stable sort on the negated score).
    """
    slots: dict[Hashable, list[int]] = {}
    for position, group in enumerate(groups):
        slots.setdefault(group, []).append(position)
    order = [0] * len(groups)
    for positions in slots.values():
        best_first = sorted(positions, key=lambda p: -scores[p])
        for slot, position in zip(positions, best_first, strict=True):
            order[slot] = position
    return order


def _tier(hit: Hit) -> tuple[str, int]:
    """What the re-ranker never crosses: the hit's group ("all" / "some") and how many query slots it
    mentions (inside "some", a hit that mentions two of three concepts stays above one that mentions one)."""
    return str(hit.group), len({match.slot for match in hit.concepts})


def _stage_ranks(scores: Sequence[float]) -> list[int]:
    """The cross-encoder's own rank of each position (1 = its best), whatever the groups."""
    by_score = sorted(range(len(scores)), key=lambda p: (-scores[p], p))
    ranks = [0] * len(scores)
    for rank, position in enumerate(by_score, start=1):
        ranks[position] = rank
    return ranks


def rerank_hits(
    query: str,
    hits: Sequence[Hit],
    texts: Mapping[str, str],
    scorer: PairScorer,
    k: int = DEFAULT_K,
) -> list[Hit]:
    """Re-order the top ``k`` of ``hits`` (in their given order) by ``scorer`` within each hit's tier: its
    group and how many query slots it mentions (:func:`_tier`), so the concept search's order of tiers stays.

    Args:
        query: the query text the scorer reads with each document.
        hits: the first stage's hits, best first.
        texts: pmid -> the document text the scorer reads (title and abstract).
        scorer: (query, text) pairs -> scores.
        k: how many of the best hits are re-scored (0: none; the hits come back renumbered only).

    Returns:
        New hits, ranks renumbered from 1; a re-scored hit keeps its ``score`` (the first stage's) and gets a
        ``StageScore("cross-encoder", score, the cross-encoder's own rank among the k)`` appended.

    Raises:
        RetrievalError: a hit among the top ``k`` has no text, or the scorer returns the wrong number of scores.
    """
    if k < 0:
        raise RetrievalError(f"re-ranking depth k must be 0 or more, got {k}")
    head, tail = list(hits[:k]), list(hits[k:])
    missing = [h.pmid for h in head if h.pmid not in texts]
    if missing:
        raise RetrievalError(f"cannot re-rank: {len(missing)} of the top {len(head)} hits have no text, "
                             f"e.g. PMID {missing[0]}")
    scores = [float(s) for s in scorer([(query, texts[h.pmid]) for h in head])] if head else []
    if len(scores) != len(head):
        raise RetrievalError(f"the cross-encoder gave {len(scores)} scores for {len(head)} pairs")
    if any(math.isnan(s) for s in scores):
        raise RetrievalError("the cross-encoder gave NaN scores: its weights are damaged; retrain it")
    stage_rank = _stage_ranks(scores)
    order = _order_within_groups([_tier(h) for h in head], scores)
    rescored = [head[p]._replace(stages=(*head[p].stages, StageScore(STAGE, scores[p], stage_rank[p])))
                for p in order]
    return [hit._replace(rank=rank) for rank, hit in enumerate([*rescored, *tail], start=1)]


def rerank_run(
    run: Run,
    queries: Mapping[str, str],
    texts: Mapping[str, str],
    scorer: PairScorer,
    k: int = DEFAULT_K,
) -> RunDict:
    """Each query's top ``k`` documents of ``run`` re-ordered by ``scorer``; the rest follow in their order.

    The scores returned only carry the new order (n, n-1, ..., 1 over a query's n documents): what the
    evaluation reads. Documents without a text keep their place below the re-scored ones.

    Raises:
        RetrievalError: a query of ``run`` has no text in ``queries``.
    """
    out: RunDict = {}
    for qid, scores in run.items():
        if qid not in queries:
            raise RetrievalError(f"cannot re-rank query '{qid}': its text is not given")
        order = [doc for doc, _ in ranked(scores)]
        head = [doc for doc in order[:k] if doc in texts]
        hits = [Hit(doc, rank, scores[doc], None, None) for rank, doc in enumerate(head, start=1)]
        new = [h.pmid for h in rerank_hits(queries[qid], hits, texts, scorer, k)]
        placed = set(new)
        new += [doc for doc in order if doc not in placed]
        out[qid] = {doc: float(len(new) - i) for i, doc in enumerate(new)}
    return out


# --- the served model -------------------------------------------------------------------------


@dataclass
class CrossEncoderReranker:
    """A trained cross-encoder as a re-ranking stage.

    Attributes:
        model: a sentence-transformers ``CrossEncoder`` with one output (a relevance logit).
        path: the folder it was loaded from ("" when built in memory).
        batch_size: pairs scored per forward pass.
    """

    model: object
    path: str = ""
    batch_size: int = 32

    @classmethod
    def load(cls, path: str | Path, device: str = "", max_length: int = 0, batch_size: int = 32
             ) -> CrossEncoderReranker:
        """Load a saved cross-encoder folder.

        Args:
            path: the folder ``CrossEncoder.save`` wrote (``config.json``, weights, tokenizer).
            device: "cuda", "cpu", or "" for CUDA when present.
            max_length: truncation length in tokens (0 keeps the saved one).
            batch_size: pairs per forward pass.

        Raises:
            RerankerUnavailable: the folder is missing, incomplete or cannot be loaded.
        """
        folder = Path(path)
        if not folder.is_dir():
            raise RerankerUnavailable(f"cross-encoder folder '{folder}' does not exist: train a cross-encoder "
                                      "into it, or switch re-ranking off")
        if not (folder / "config.json").exists():
            raise RerankerUnavailable(f"cross-encoder folder '{folder}' has no config.json: it is not a saved "
                                      "cross-encoder (an interrupted copy?); train it again")
        if not any(folder.glob("*.safetensors")) and not any(folder.glob("*.bin")):
            raise RerankerUnavailable(f"cross-encoder folder '{folder}' has no weights (*.safetensors); "
                                      "train it again")
        from sentence_transformers import CrossEncoder

        from index.encoder import pick_device

        try:
            model = CrossEncoder(str(folder), device=pick_device(device), local_files_only=True,
                                 max_length=max_length or None)
        except Exception as exc:  # a damaged folder fails inside transformers in many ways; say where
            raise RerankerUnavailable(f"cannot load the cross-encoder in '{folder}': {type(exc).__name__}: "
                                      f"{exc}") from None
        if model.num_labels != 1:
            raise RerankerUnavailable(f"the cross-encoder in '{folder}' has {model.num_labels} outputs; "
                                      "a re-ranker needs one relevance score")
        return cls(model, str(folder), batch_size)

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Relevance logits of (query, document text) pairs (higher is more relevant)."""
        if not pairs:
            return []
        import torch

        # Raw logits, not sigmoid probabilities: saturated probabilities tie, logits keep the order.
        scores = self.model.predict(list(pairs), batch_size=self.batch_size, show_progress_bar=False,
                                    activation_fn=torch.nn.Identity())
        return [float(s) for s in scores]

    def rerank(self, query: str, hits: Sequence[Hit], texts: Mapping[str, str], k: int = DEFAULT_K,
               batch_size: int | None = None) -> list[Hit]:
        """:func:`rerank_hits` with this model as the scorer (``batch_size`` overrides the reranker's own)."""
        if batch_size is not None and batch_size != self.batch_size:
            other = CrossEncoderReranker(self.model, self.path, batch_size)
            return rerank_hits(query, hits, texts, other.score_pairs, k)
        return rerank_hits(query, hits, texts, self.score_pairs, k)


# --- the measured CPU rule --------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by the nearest-rank method (a value that was observed)."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    index = max(0, math.ceil(q / 100 * len(ordered)) - 1)
    return float(ordered[min(index, len(ordered) - 1)])


def latency_rule(p95_ms: float, budget_ms: float = CPU_BUDGET_MS) -> bool:
    """True when re-ranking may be served: its measured p95 is within the budget."""
    return p95_ms <= budget_ms


@dataclass(frozen=True)
class CpuRule:
    """The measured decision "serve the cross-encoder on CPU: yes/no", as a version records it.

    Attributes:
        serve: whether re-ranking is served on a CPU.
        p95_ms: the measured 95th percentile of re-ranking the top ``k`` of one query.
        budget_ms: the budget it was held to.
        k: how many hits were re-ranked per query.
        queries: how many queries were timed.
        threads: torch's CPU threads during the measurement.
    """

    serve: bool
    p95_ms: float
    budget_ms: float
    k: int
    queries: int
    threads: int = 0

    @classmethod
    def measured(cls, timings_ms: Sequence[float], k: int, budget_ms: float = CPU_BUDGET_MS,
                 threads: int = 0) -> CpuRule:
        p95 = percentile(timings_ms, 95)
        return cls(latency_rule(p95, budget_ms), round(p95, 1), budget_ms, k, len(timings_ms), threads)

    def describe(self) -> str:
        verdict = "yes" if self.serve else "no"
        return (f"serve the cross-encoder on CPU: {verdict}, measured p95 {self.p95_ms:.0f} ms for the top {self.k} "
                f"over {self.queries} queries (budget {self.budget_ms:.0f} ms)")


def time_reranking(
    rerank: Callable[[str, Sequence[Hit], Mapping[str, str], int], list[Hit]],
    queries: Sequence[str],
    hits: Sequence[Sequence[Hit]],
    texts: Mapping[str, str],
    k: int = DEFAULT_K,
    warmup: int = 2,
) -> list[float]:
    """Milliseconds of ``rerank(query, hits, texts, k)`` per query (after ``warmup`` untimed calls)."""
    if len(queries) != len(hits):
        raise RetrievalError(f"{len(queries)} queries but {len(hits)} hit lists")
    for query, found in list(zip(queries, hits, strict=True))[:warmup]:
        rerank(query, found, texts, k)
    timings = []
    for query, found in zip(queries, hits, strict=True):
        started = time.perf_counter()
        rerank(query, found, texts, k)
        timings.append((time.perf_counter() - started) * 1000)
    return timings
