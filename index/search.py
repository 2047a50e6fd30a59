"""One search entry point: partial relation → query text → BM25 / dense / hybrid → ranked hits.

Every retriever returns the one hit shape, :data:`index.hits.Run` (BEIR's
``{qid: {doc_id: score}}``, :meth:`Retriever.run`); :meth:`Retriever.search` wraps one query for
the app and keeps each component's score on every hit (:class:`index.hits.Hit`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

import numpy as np

from index import fusion
from index.dense import DenseIndex
from index.documents import QueryTemplate
from index.encoder import encode_queries
from index.errors import RetrievalError
from index.hits import Hit, RunDict, SearchResult, ranked
from index.lexical import LexicalIndex

if TYPE_CHECKING:
    from index.milvus import MilvusIndex
    from index.rerank import CrossEncoderReranker

MAX_QUERY_CHARS = 2000


class Mode(StrEnum):
    BM25 = "bm25"
    DENSE = "dense"
    HYBRID = "hybrid"


class FusionMethod(StrEnum):
    RRF = "rrf"
    SLATE = "slate"
    WEIGHTED = "weighted"
    RERANK = "rerank"


@dataclass(frozen=True)
class FusionConfig:
    """How the hybrid combines BM25 and dense.

    Attributes:
        method: rrf, slate, weighted, or rerank (dense re-scores the BM25 top ``depth``).
        rrf_k: the k of reciprocal rank fusion.
        weights: (bm25, dense) weights for rrf and weighted.
        depth: candidates taken from each component (and re-ranked by rerank).
        mix: rerank's share of the dense score (1 = dense order only; 0 = BM25 order).

    The default keeps BM25's order, shows dense scores and lets dense fill the list when BM25 finds
    too few: bench/retrieval.py's dev rule chose it for the zero-shot encoder on benchmark v1. On v2's
    dev the rule picks a 0.05 dense weight instead, which is not distinguishable from BM25's order on
    test (docs/BENCHMARKS.md), so the default stays. Plain RRF falls far below BM25 on both. A
    trained version carries the fusion chosen for it in its manifest.
    """

    method: FusionMethod = FusionMethod.RERANK
    rrf_k: float = 60.0
    weights: tuple[float, float] = (1.0, 1.0)
    depth: int = 100
    mix: float = 0.0

    def __post_init__(self) -> None:
        # Accept plain strings from settings / manifests; fail early on unknown names.
        object.__setattr__(self, "method", FusionMethod(self.method))
        object.__setattr__(self, "weights", tuple(float(w) for w in self.weights))


class SearchError(RetrievalError):
    """A search that cannot run as asked (empty query, missing index)."""


@dataclass
class Retriever:
    """The indexes and encoder one search needs; the app swaps a whole Retriever at once."""

    lexical: LexicalIndex | None = None
    dense: DenseIndex | MilvusIndex | None = None  # the same interface on either backend
    encoder: object | None = None
    fusion: FusionConfig = field(default_factory=FusionConfig)
    version: str = "zero-shot"
    # The dense share of the concept search's order chosen on dev for this version (None: not chosen;
    # the caller derives one from ``fusion``).
    served_dense_share: float | None = None
    # The version's cross-encoder when its manifest says to serve it, and
    # how many of the concept search's best hits it re-orders.
    reranker: CrossEncoderReranker | None = None
    rerank_k: int = 0
    # The learned ranking stage the curation layer attaches (curation.ranking.stage.LearnedStage: re-orders the
    # concept search's best hits); index never calls it, it only travels with the engine it was trained for.
    learned: object | None = None

    def close(self) -> None:
        """Let go of an engine-backed dense index (a Milvus connection; a FAISS index needs nothing)."""
        if self.dense is not None:
            self.dense.close()

    def _check(self, mode: Mode) -> None:
        if mode in (Mode.BM25, Mode.HYBRID) and self.lexical is None:
            raise SearchError("no BM25 index is loaded; build the indexes first")
        if mode in (Mode.DENSE, Mode.HYBRID) and (self.dense is None or self.encoder is None):
            raise SearchError("no dense index or encoder is loaded; build the indexes first")

    def bm25_run(self, queries: Mapping[str, str], k: int) -> RunDict:
        qids = list(queries)
        results = self.lexical.search([queries[q] for q in qids], k)
        return {q: dict(hits) for q, hits in zip(qids, results, strict=True)}

    def dense_run(self, queries: Mapping[str, str], k: int) -> RunDict:
        qids = list(queries)
        vectors = encode_queries(self.encoder, [queries[q] for q in qids])  # (n_queries, dim)
        results = self.dense.search(vectors, k)
        return {q: dict(hits) for q, hits in zip(qids, results, strict=True)}

    def dense_scores(
        self, queries: Mapping[str, str], candidates: Mapping[str, list[str]]
    ) -> RunDict:
        """Exact cosine of each query with its candidate documents (for re-ranking)."""
        qids = list(queries)
        vectors = encode_queries(self.encoder, [queries[q] for q in qids])
        out = {}
        for q, vector in zip(qids, vectors, strict=True):
            wanted = candidates.get(q, [])
            known = self.dense.known(wanted)
            ids = [d for d in wanted if d in known]
            doc_vectors = self.dense.vectors(ids)  # (n_candidates, dim)
            out[q] = dict(zip(ids, (doc_vectors @ vector).astype(float).tolist(), strict=True)) if ids else {}
        return out

    def run(
        self, queries: Mapping[str, str], mode: Mode | str = Mode.HYBRID, k: int = 100
    ) -> RunDict:
        """Hits for many queries in the BEIR shape, cut to k."""
        mode = Mode(mode)
        self._check(mode)
        if mode is Mode.BM25:
            return fusion.top_k(self.bm25_run(queries, k), k)
        if mode is Mode.DENSE:
            return fusion.top_k(self.dense_run(queries, k), k)
        return fusion.top_k(self._hybrid(queries, k)[0], k)

    def _hybrid(self, queries: Mapping[str, str], k: int):
        config = self.fusion
        depth = max(config.depth, k)
        lexical = self.bm25_run(queries, depth)
        if config.method is FusionMethod.RERANK:
            dense = self.dense_scores(queries, {q: list(h) for q, h in lexical.items()})
            fused = fusion.rerank(lexical, dense, depth=depth, mix=config.mix)
            # Where BM25 finds fewer than k documents, the dense ranking fills the rest, below them.
            short = {q: t for q, t in queries.items() if len(lexical.get(q, {})) < k}
            if short:
                for q, hits in self.dense_run(short, k).items():
                    scores = fused.setdefault(q, {})
                    floor = min(scores.values(), default=0.0)
                    for position, (doc, value) in enumerate(ranked(hits)):
                        if doc not in scores:
                            scores[doc] = floor - 1.0 - position / (k + 1)
                            dense.setdefault(q, {})[doc] = value
            return fused, lexical, dense
        dense = self.dense_run(queries, depth)
        runs = [lexical, dense]
        if config.method is FusionMethod.RRF:
            fused = fusion.rrf(runs, k=config.rrf_k, weights=config.weights)
        elif config.method is FusionMethod.SLATE:
            fused = fusion.slate_vote(runs)
        else:
            fused = fusion.weighted(runs, config.weights)
        return fused, lexical, dense

    def search(
        self, schema: QueryTemplate, values: Mapping[str, str], mode: Mode | str = Mode.HYBRID, k: int = 20
    ) -> SearchResult:
        """Search for one partial relation; each hit carries its BM25 and dense scores."""
        query = schema.render_query(values)
        return self.search_text(query, mode, k)

    def search_text(self, query: str, mode: Mode | str = Mode.HYBRID, k: int = 20) -> SearchResult:
        query = " ".join(query.split())
        if not query:
            raise SearchError("the query is empty; fill in at least one entity")
        if len(query) > MAX_QUERY_CHARS:
            raise SearchError(
                f"the query has {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,}. Type entity names, "
                "not passages of text"
            )
        mode = Mode(mode)
        self._check(mode)
        queries = {"q": query}
        if mode is Mode.BM25:
            lexical = self.bm25_run(queries, k)
            fused, dense = lexical, {}
        elif mode is Mode.DENSE:
            dense = self.dense_run(queries, k)
            fused, lexical = dense, {}
        else:
            fused, lexical, dense = self._hybrid(queries, k)
        hits = [
            Hit(doc, rank, float(score), lexical.get("q", {}).get(doc), dense.get("q", {}).get(doc))
            for rank, (doc, score) in enumerate(ranked(fused["q"])[:k], start=1)
        ]
        return SearchResult(query, hits)


def normalise_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)
