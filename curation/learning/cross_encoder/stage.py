"""The served re-ranking stage of a model version: train its cross-encoder, then decide on dev whether to serve it.

Built by the same job as the bi-encoder, from the same graded pairs (:mod:`curation.learning.cross_encoder.training`),
into the version's staged folder (``cross_encoder/``), so a cancelled or crashed job publishes nothing and the
served version is untouched. It is served only when both hold, measured at build time:

1. on the dev queries, the concept search re-ranked by it scores a higher NDCG@10 than without it;
2. its latency fits: re-ranking the top ``k`` of one query within :data:`index.rerank.CPU_BUDGET_MS` at the
   95th percentile on the machine that built it. A version built on a GPU records that its latency was
   measured there only (``rerank_gpu_only``): a CPU app does not load it until a CPU build measures it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from curation.learning.cross_encoder.training import CrossEncoderConfig, cross_encoder_examples, train_cross_encoder
from curation.learning.served_fusion import METRIC, ServedSearch, choose_dense_share, served_run
from curation.learning.statistics import per_query
from curation.records import Document
from curation.retrieval.relation_search import SearchOptions
from curation.training_loop import check_cancel, write_progress
from curation.versions.manifest import Served
from index.rerank import CPU_BUDGET_MS, DEFAULT_K, CpuRule, CrossEncoderReranker, time_reranking

FOLDER = "cross_encoder"


def train_stage(training_pairs: Sequence, documents: Mapping[str, Document], staged: Path, config: CrossEncoderConfig,
                progress_file: Path | None = None, cancel_file: Path | None = None):
    """Train the version's cross-encoder into ``staged / FOLDER``; returns its :class:`CrossEncoderResult`."""
    examples = cross_encoder_examples(training_pairs, list(documents), config)
    texts = {pmid: documents[pmid].text for pmid in {e.pmid for e in examples}}
    return train_cross_encoder(examples, texts, staged / FOLDER, config, progress_file, cancel_file)


def choose_rerank(
    retriever, search: ServedSearch, values: Mapping[str, Mapping[str, str]], qrels: Mapping[str, Mapping[str, int]],
    served: Served, folder: Path, k: int = DEFAULT_K, budget_ms: float = CPU_BUDGET_MS,
    progress_file: Path | None = None, cancel_file: Path | None = None,
) -> Served:
    """``served`` with the re-ranking decision: dev NDCG@10 without / with the cross-encoder and its p95 latency.

    The retriever is left as it was (its reranker is set only for the measurement).
    """
    judged = {q: v for q, v in values.items() if q in qrels and v}
    if not judged:
        return served
    write_progress(progress_file, state="evaluating the cross-encoder on dev", step=None, total=None, loss=None,
                   eta_s=None, epoch=None)
    reranker = CrossEncoderReranker.load(folder)
    options = SearchOptions(mode="hybrid", k=max(k, 10), dense_share=served.dense_share)
    first = served_run(retriever, search, judged, replace(options, rerank=False))
    retriever.reranker, retriever.rerank_k = reranker, k
    try:
        check_cancel(cancel_file, "cancelled before the cross-encoder's dev evaluation")
        reranked = served_run(retriever, search, judged, options)
        timings = _timings(retriever, search, judged, options)
    finally:
        retriever.reranker, retriever.rerank_k = None, 0
    scores = {name: per_query(run, {q: qrels[q] for q in judged}, METRIC) for name, run in
              (("first_stage", first), ("reranked", reranked))}
    means = {name: round(sum(v.values()) / len(v), 6) for name, v in scores.items()}
    device = str(getattr(reranker.model, "device", "cpu"))
    rule = CpuRule.measured(timings, k, budget_ms)
    helps = means["reranked"] > means["first_stage"]
    return replace(served, rerank=bool(helps and rule.serve), rerank_k=k, rerank_dev_scores=means,
                   rerank_p95_ms=rule.p95_ms, rerank_device=device, rerank_gpu_only=device.startswith("cuda"),
                   rerank_rule=("serve" if helps and rule.serve else
                                "off: no dev gain" if not helps else f"off: {rule.describe()}"))


def _timings(retriever, search: ServedSearch, values: Mapping[str, Mapping[str, str]], options: SearchOptions,
             queries: int = 30) -> list[float]:
    """Milliseconds of re-ranking the top k of up to ``queries`` dev queries (the stage alone, as served)."""
    sample = list(values.items())[:queries]
    from index.hits import Hit

    found = []
    for _, typed in sample:
        hits = served_run(retriever, search, {"q": typed}, replace(options, rerank=False))["q"]
        found.append((typed, sorted(hits, key=hits.get, reverse=True)))
    texts_needed = {p for _, pmids in found for p in pmids[: retriever.rerank_k]}
    texts = {p: d.text for p, d in search.documents(sorted(texts_needed)).items()}
    queries_text = [search.schema.render_query(typed) for typed, _ in found]
    hit_lists = [[Hit(p, i + 1, 0.0, None, None) for i, p in enumerate(pmids)] for _, pmids in found]
    return time_reranking(retriever.reranker.rerank, queries_text, hit_lists, texts, retriever.rerank_k)


def served_chooser(make_search: Callable[[], ServedSearch], dev_source: str = "kb", k: int = 50):
    """A ``build_version(served=...)`` callback: (retriever, dev set) → :func:`choose_dense_share` on its values.

    ``make_search`` is called once, when there is a dev set to choose on (a linker takes seconds to build).
    Called again with a trained cross-encoder's folder and the share chosen, it decides whether the version
    serves the cross-encoder (:func:`curation.learning.cross_encoder.stage.choose_rerank`).
    """

    made: list[ServedSearch] = []

    def search() -> ServedSearch:
        if not made:
            made.append(make_search())
        return made[0]

    def choose(retriever, dev, cross_encoder: Path | None = None, chosen: Served | None = None) -> Served | None:
        """The dense share; called again with a trained cross-encoder's folder, whether to serve it too."""
        if cross_encoder is None or chosen is None:
            return choose_dense_share(retriever, search(), dev.values, dev.qrels, k=k, dev_source=dev_source)
        return choose_rerank(retriever, search(), dev.values, dev.qrels, chosen, cross_encoder)

    return choose
