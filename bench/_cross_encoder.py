"""Cross-encoder helpers for bench/ scripts (never imported by the package): train on benchmark v2's train split,
re-rank a first stage's top 50, time the re-ranking on CPU.

bench/feedback.py calls :func:`rerank_first_stage` and :func:`latency_p95_ms`; :func:`main` runs them once on
DEV (a seeded share of the dev queries, canonical form) to size the stage:

    .venv/bin/python -m bench._cross_encoder --max-pairs 1500 --dev-queries 150 --out /tmp/ce.json
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path

from curation.learning.cross_encoder import (
    CrossEncoderConfig,
    CrossEncoderExample,
    cross_encoder_examples,
    label_counts,
    train_cross_encoder,
)
from curation.records import Document
from index.hits import Hit, Run, RunDict, ranked
from index.rerank import DEFAULT_K, CpuRule, CrossEncoderReranker, rerank_run, time_reranking


def document_texts(corpus: Sequence[Document]) -> dict[str, str]:
    """pmid -> title and abstract as one string: what the cross-encoder reads (and is trained on)."""
    return {d.pmid: d.text for d in corpus}


def rerank_first_stage(run: Run, queries: Mapping[str, str], texts: Mapping[str, str],
                       reranker: CrossEncoderReranker, k: int = DEFAULT_K) -> RunDict:
    """``run`` (qid -> pmid -> score) with each query's top ``k`` re-ordered by the cross-encoder."""
    return rerank_run(run, queries, texts, reranker.score_pairs, k)


def latency_p95_ms(reranker: CrossEncoderReranker, queries: Sequence[str], hits: Sequence[Sequence[Hit]],
                   texts: Mapping[str, str], k: int = DEFAULT_K, budget_ms: float = 150.0) -> CpuRule:
    """The measured CPU rule: p95 of re-ranking each query's top ``k`` hits (model on the CPU)."""
    import torch

    reranker.model.to("cpu")
    timings = time_reranking(reranker.rerank, queries, hits, texts, k)
    return CpuRule.measured(timings, k, budget_ms, threads=torch.get_num_threads())


def hits_of_run(run: Run, qids: Sequence[str], k: int = DEFAULT_K) -> list[list[Hit]]:
    """Each query's top ``k`` of ``run`` as hits (no groups: a plain first stage)."""
    return [[Hit(doc, rank, score, score, None) for rank, (doc, score) in enumerate(ranked(run[q])[:k], start=1)]
            for q in qids]


def benchmark_examples(benchmark, data_dir: Path, max_records: int, config: CrossEncoderConfig
                       ) -> tuple[list[CrossEncoderExample], dict[str, Document], dict[str, object]]:
    """Graded examples from the train split's records, built as bench/edel.py builds EDEL's pairs.

    Documents that are positives of dev or test queries are kept out (not even negatives).
    """
    from bench.edel import TRAIN_KINDS, kb_records, sample_records, training_set
    from bench.retrieval import build_lexicon
    from curation.entities.matching import Matcher
    from curation.learning.sampling import SamplingConfig
    from index.lexical import LexicalIndex

    evaluated = {r.pmid for split in ("dev", "test") for r in benchmark.records[split]}
    documents = {d.pmid: d for d in benchmark.corpus if d.pmid not in evaluated}
    pool = [r for r in benchmark.records["train"] if r.kind in TRAIN_KINDS and r.answers]
    chosen = sample_records(pool, max_records, config.seed)
    records = kb_records(chosen, benchmark)
    lexicon = build_lexicon([d for d in benchmark.corpus if d.mentions], data_dir)
    if lexicon is None:
        raise SystemExit("curation.entities.matching is unusable: the matcher is g(e, d) here")
    lexical = LexicalIndex.build(list(documents.values()))
    sampling = SamplingConfig(per_class=1, bm25_negatives=1, random_negatives=1, seed=config.seed)
    training = training_set(records, documents, Matcher(lexicon).matched, lexical, sampling)
    examples = cross_encoder_examples(training.pairs, sorted(documents), config)
    info = {"records": f"{len(chosen)} of {len(pool)} train-split records with an answer",
            "edel_pairs": len(training.pairs), "edel_classes": training.counts(), "examples": len(examples),
            "labels": label_counts(examples)}
    return examples, documents, info


def dev_queries(benchmark, n: int, seed: int) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """A seeded share of the dev queries (canonical form, kinds in proportion) and their qrels; n=0: all."""
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    sets = [benchmark.query_set("dev", kind, "canonical") for kind in benchmark.kinds()]
    total = sum(len(s.queries) for s in sets)
    rng = random.Random(seed)
    for s in sets:
        qids = sorted(q for q in s.queries if s.qrels.get(q))
        if n and n < total:
            qids = rng.sample(qids, min(len(qids), max(1, round(n * len(s.queries) / total))))
        queries.update({q: s.queries[q] for q in qids})
        qrels.update({q: dict(s.qrels[q]) for q in qids})
    return queries, qrels


def main(argv: list[str] | None = None) -> int:
    import torch

    from bench._benchmark import load_benchmark
    from curation.config import load_settings
    from curation.learning.statistics import per_query, summarise
    from index.lexical import LexicalIndex
    from index.search import Mode, Retriever

    settings = load_settings()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=settings.data_dir)
    parser.add_argument("--out", type=Path, required=True, help="where to write the JSON (not bench/results)")
    parser.add_argument("--model-dir", type=Path, default=Path("/tmp/cross-encoder-bench"))
    parser.add_argument("--max-records", type=int, default=500)
    parser.add_argument("--max-pairs", type=int, default=1500)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--dev-queries", type=int, default=150, help="seeded share of the dev queries (0: all)")
    parser.add_argument("--latency-queries", type=int, default=20)
    parser.add_argument("--k", type=int, default=DEFAULT_K)
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    timings: dict[str, float] = {}
    clock = time.time()
    benchmark = load_benchmark(args.data_dir, seed=args.seed)
    config = CrossEncoderConfig(epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.lr,
                                max_length=args.max_length, max_pairs=args.max_pairs, random_negatives=1,
                                seed=args.seed)
    examples, _, data_info = benchmark_examples(benchmark, args.data_dir, args.max_records, config)
    timings["data_s"] = time.time() - clock
    texts = document_texts(benchmark.corpus)
    out_dir = args.model_dir / f"ce-{int(time.time())}"
    result = train_cross_encoder(examples, texts, out_dir, config)
    timings["train_s"] = result.seconds
    reranker = CrossEncoderReranker.load(out_dir, device="cpu", max_length=args.max_length, batch_size=args.k)

    queries, qrels = dev_queries(benchmark, args.dev_queries, args.seed)
    bm25 = Retriever(lexical=LexicalIndex.build(list(benchmark.corpus)))
    first = bm25.run(queries, Mode.BM25, args.k)
    clock = time.time()
    reranked = rerank_first_stage(first, queries, texts, reranker, args.k)
    timings["rerank_dev_s"] = time.time() - clock
    figures = {metric: summarise({"bm25": per_query(first, qrels, metric), "bm25_ce": per_query(reranked, qrels,
                                                                                                metric)},
                                 "bm25", seed=args.seed) for metric in ("ndcg@10", "recall@50")}
    qids = sorted(queries)[: args.latency_queries]
    rule = latency_p95_ms(reranker, [queries[q] for q in qids], hits_of_run(first, qids, args.k), texts, args.k)
    ndcg = figures["ndcg@10"]["systems"]
    report = {
        "split": "dev", "form": "canonical", "queries": len(queries), "k": args.k,
        "ndcg@10": {"bm25": ndcg["bm25"], "bm25_ce": ndcg["bm25_ce"],
                    "relative_gain": round(ndcg["bm25_ce"]["mean"] / max(ndcg["bm25"]["mean"], 1e-9) - 1, 4),
                    "comparison": figures["ndcg@10"]["comparisons"]},
        "recall@50": figures["recall@50"]["systems"],
        "cpu_rule": {**asdict(rule), "describe": rule.describe()},
        "training": {**data_info, "config": asdict(config), "steps": result.steps, "device": result.device,
                     "seconds": round(result.seconds, 1), "loss_first_10": result.losses[:10],
                     "loss_last_10": result.losses[-10:]},
        "timings_s": {k: round(v, 1) for k, v in timings.items()},
        "torch_threads": torch.get_num_threads(),
    }
    args.out.write_text(json.dumps(report, indent=2))
    print(json.dumps({k: report[k] for k in ("queries", "ndcg@10", "cpu_rule", "timings_s")}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
