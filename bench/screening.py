"""Screening a topic: how much reading the product's learner saves, against the static order, random and ASReview.

Usage::

    python -m bench.screening [--data-dir ../shared/data] [--out bench/results/screening.json] [--test]

Topics and the clean store: :mod:`bench._screening_topics`. Per topic the served search
(:func:`curation.retrieval.relation_search.search_relation`, BM25 lexical stage, up to 2,000 candidates) gives the
candidates in the static order; the methods screen them in the same run:

- ``random``: the mean of 10 random orders;
- ``static``: the served order read top-down;
- ``learner``: :class:`curation.screening.learner.ScreeningLearner` refitted after every grade;
- ``asreview``: ASReview LAB 3's default model (``bench/_asreview_peer.py``, its own virtual environment).

Both learners get the same prior knowledge: the static order's first relevant and first irrelevant candidate.
Every method is also run on the pool restricted to the topic's own corpus (``own_corpus``): relevance labels exist
only there, so on the whole store a learner can gain by recognising a corpus's style; on its own corpus it cannot.

Dev: the learner's prior and evidence weights are chosen on dev topics (:data:`GRID`, mean WSS@95); the product's
defaults (:class:`curation.screening.learner.LearnerConfig`) must equal the choice (a test reads this JSON). Test
(``--test``): the chosen learner, read once. The re-rank time is measured on the largest pool cut to 1,000
candidates with 30 grades.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from bench import _asreview_peer, _concepts
from bench._goals import goal
from bench._screening_topics import Topic, find_topics, load_store_documents
from curation.learning.statistics import bootstrap_ci
from curation.ranking.features import Evidence, MemorySignals
from curation.retrieval.relation_search import SearchInputError, SearchOptions, search_relation
from curation.screening import metrics
from curation.screening.learner import LearnerConfig, ScreeningLearner
from curation.screening.pool import MAX_CANDIDATES, TopicPool, evidence_rows, pool_from_hits
from curation.screening.simulation import random_order, simulate, static_prior
from index.lexical import LexicalIndex
from index.search import Retriever

OUT = Path(__file__).resolve().parent / "results" / "screening.json"
METRICS = ("wss@95", "recall@10%", "recall@20%", "atd", "loss")
GRID = tuple(LearnerConfig(prior_weight=p, evidence_weight=e) for p in (0.0, 0.5, 1.0, 2.0) for e in (0.0, 1.0))
RANDOM_SEEDS = 10
MIN_POOL = 10


def _pools(topics: Sequence[Topic], bench: _concepts.ConceptBench, engine: Retriever,
           home: Mapping[str, str]) -> dict[str, dict[str, object]]:
    """Per topic: the whole-store pool, the own-corpus pool, each pool's gains, and the candidate recall."""
    signals = MemorySignals({p: Evidence(kinds=k) for p, k in bench.kinds.items()})
    options = SearchOptions(mode="bm25", k=MAX_CANDIDATES, depth=MAX_CANDIDATES)

    def documents(pmids):
        return {p: bench.documents[p] for p in pmids if p in bench.documents}

    out = {}
    for topic in topics:
        schema = _concepts.BenchSchema(f"{topic.slot}_topic", (topic.slot,), "{" + topic.slot + "}", topic.answer)
        values = {topic.slot: topic.name}
        try:
            found = search_relation(engine, bench.linker, bench.matcher, bench.source, documents, schema, values,
                                    options)
        except SearchInputError as exc:
            print(f"{topic.topic_id}: {exc}", file=sys.stderr)
            continue
        hits = list(found.hits)
        docs = documents([h.pmid for h in hits])
        rows = evidence_rows(found.concepts, hits, docs, signals, values, schema.kind(topic.answer))
        pool = pool_from_hits(hits, docs, rows)
        own = [i for i, p in enumerate(pool.pmids) if home.get(p) == topic.corpus]
        own_pool = TopicPool(tuple(pool.pmids[i] for i in own), tuple(pool.texts[i] for i in own),
                             pool.evidence[own] if pool.evidence is not None else None, pool.evidence_names)
        entry = {"topic": topic, "candidate_recall": sum(p in topic.relevant for p in pool.pmids) / len(topic.relevant)}
        for name, p in (("store", pool), ("own_corpus", own_pool)):
            gains = np.asarray([topic.relevant.get(x, 0) for x in p.pmids], dtype=np.int64)
            if len(p) >= MIN_POOL and int((gains > 0).sum()) >= 2 and int((gains == 0).sum()) >= 1:
                entry[name] = (p, gains)
        out[topic.topic_id] = entry
    return out


def _scores(order: Sequence[int], gains: np.ndarray) -> dict[str, float]:
    return metrics.summary(gains[list(order)] > 0)


def _random(gains: np.ndarray) -> dict[str, float]:
    runs = [_scores(random_order(len(gains), seed), gains) for seed in range(RANDOM_SEEDS)]
    return {m: float(np.mean([r[m] for r in runs])) for m in METRICS}


def _learner_runs(pools: Mapping[str, dict], setting: str, config: LearnerConfig) -> tuple[dict, list[float]]:
    out, seconds = {}, []
    for topic_id, entry in pools.items():
        if setting not in entry:
            continue
        pool, gains = entry[setting]
        run = simulate(pool, gains, static_prior(gains), config)
        out[topic_id] = {"order": list(run.order), **_scores(run.order, gains)}
        seconds += run.rerank_seconds
    return out, seconds


def _peer_runs(pools: Mapping[str, dict], setting: str) -> dict:
    ids = [t for t, e in pools.items() if setting in e]
    requests = []
    for topic_id in ids:
        pool, gains = pools[topic_id][setting]
        requests.append({"texts": list(pool.texts), "labels": [int(g > 0) for g in gains],
                         "prior": list(static_prior(gains)), "seed": 0})
    orders = _asreview_peer.simulate_many(requests, workers=2)
    return {t: {"order": o, **_scores(o, pools[t][setting][1])} for t, o in zip(ids, orders, strict=True)}


def _summary(per_topic: Mapping[str, Mapping[str, Mapping[str, float]]], baseline: str) -> dict:
    """Per method: mean and 95% bootstrap interval of each metric, and of its difference to ``baseline``."""
    out = {}
    for method, runs in per_topic.items():
        figures = {}
        for m in METRICS:
            values = {t: r[m] for t, r in runs.items() if not math.isnan(r[m])}
            if not values:
                continue
            ci = bootstrap_ci(values)
            figures[m] = {"mean": round(ci.mean, 4), "ci": [round(ci.low, 4), round(ci.high, 4)], "n": ci.n}
            if method != baseline:
                base = per_topic[baseline]
                diff = [values[t] - base[t][m] for t in values if t in base and not math.isnan(base[t][m])]
                if diff:
                    d = bootstrap_ci(diff)
                    figures[m][f"minus_{baseline}"] = {"mean": round(d.mean, 4),
                                                       "ci": [round(d.low, 4), round(d.high, 4)]}
        out[method] = figures
    return out


def _difference(a: Mapping[str, Mapping], b: Mapping[str, Mapping], metric: str = "wss@95") -> dict:
    diff = [a[t][metric] - b[t][metric] for t in a if t in b and not math.isnan(a[t][metric])]
    ci = bootstrap_ci(diff)
    return {"mean": round(ci.mean, 4), "ci": [round(ci.low, 4), round(ci.high, 4)], "n": ci.n}


def _evaluate(pools: Mapping[str, dict], config: LearnerConfig, peer: bool) -> dict:
    """Every method on every pool setting: per-topic figures and their summaries."""
    result = {}
    for setting in ("store", "own_corpus"):
        per: dict[str, dict] = {"random": {}, "static": {}}
        for topic_id, entry in pools.items():
            if setting in entry:
                _, gains = entry[setting]
                per["random"][topic_id] = _random(gains)
                per["static"][topic_id] = _scores(range(len(gains)), gains)
        started = time.perf_counter()
        per["learner"], seconds = _learner_runs(pools, setting, config)
        learner_s = time.perf_counter() - started
        if peer:
            started = time.perf_counter()
            per["asreview"] = _peer_runs(pools, setting)
            peer_s = time.perf_counter() - started
        result[setting] = {
            "topics": len(per["static"]),
            "summary": _summary(per, "static"),
            "learner_minus_static_wss95": _difference(per["learner"], per["static"]),
            **({"learner_minus_asreview_wss95": _difference(per["learner"], per["asreview"]),
                "asreview_minus_static_wss95": _difference(per["asreview"], per["static"]),
                "asreview_seconds": round(peer_s, 1)} if peer else {}),
            "learner_seconds": round(learner_s, 1),
            "learner_rerank_p95_ms": round(float(np.percentile(seconds, 95)) * 1000, 1) if seconds else None,
            "per_topic": {m: {t: {k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}
                              for t, r in runs.items()} for m, runs in per.items()},
        }
    return result


def _rerank_p95(pools: Mapping[str, dict], n: int = 1000, grades: int = 30, repeats: int = 40) -> dict:
    """The learner's refit + re-rank time on the largest whole-store pool cut to ``n``, after ``grades`` grades."""
    pool, gains = max((e["store"] for e in pools.values() if "store" in e), key=lambda x: len(x[0]))
    cut = min(n, len(pool))
    pool = TopicPool(pool.pmids[:cut], pool.texts[:cut], pool.evidence[:cut] if pool.evidence is not None else None,
                     pool.evidence_names)
    known = np.full(cut, -1, dtype=np.int64)
    known[:grades] = gains[:grades]
    if not (known > 0).any():
        known[int(np.argmax(gains[:cut] > 0))] = 2
    if not (known == 0).any():
        known[int(np.argmax(gains[:cut] == 0))] = 0
    learner = ScreeningLearner(pool, LearnerConfig())
    times = [learner.rank(known).seconds for _ in range(repeats)]
    return {"candidates": cut, "grades": int((known >= 0).sum()), "p95_ms": round(float(np.percentile(times, 95))
                                                                                 * 1000, 1)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--test", action="store_true", help="also score the test topics (read once)")
    parser.add_argument("--no-peer", action="store_true", help="leave ASReview out (a quick look)")
    parser.add_argument("--limit", type=int, default=0, help="at most this many topics per split (0: all)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    corpus, annotated, home = load_store_documents(args.data_dir)
    topics = find_topics(annotated)
    held = {p for t in topics for p in t.relevant}
    kept = [d for d in annotated if d.mentions and d.pmid not in held]
    bench = _concepts.build_over(corpus, kept, args.data_dir, time.perf_counter)
    engine = Retriever(lexical=LexicalIndex.build(corpus), version="bm25")
    report: dict[str, object] = {
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "store": {"documents": len(corpus), "by_corpus": dict(sorted(
            {c: sum(1 for v in home.values() if v == c) for c in set(home.values())}.items())),
            "lexicon_documents": len(kept)},
        "topics": {s: sum(1 for t in topics if t.split == s) for s in ("dev", "test")},
    }
    if not args.no_peer:
        report["peer"] = _asreview_peer.peer_versions()
    splits = {}
    for split in ("dev", "test") if args.test else ("dev",):
        chosen = [t for t in topics if t.split == split]
        if args.limit:
            chosen = chosen[:: max(1, len(chosen) // args.limit)][: args.limit]
        pools = _pools(chosen, bench, engine, home)
        splits[split] = pools
        print(f"{split}: {len(pools)} topics pooled, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    dev = splits["dev"]
    grid = []
    for config in GRID:
        runs, _ = _learner_runs(dev, "store", config)
        wss = float(np.mean([r["wss@95"] for r in runs.values()]))
        grid.append({"prior_weight": config.prior_weight, "evidence_weight": config.evidence_weight,
                     "wss@95": round(wss, 4)})
        print(f"dev grid {grid[-1]} ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    best = max(grid, key=lambda g: g["wss@95"])
    chosen_config = replace(LearnerConfig(), prior_weight=best["prior_weight"], evidence_weight=best["evidence_weight"])
    report["dev_choice"] = {"grid": grid, "chosen": asdict(chosen_config),
                            "defaults_equal_choice": asdict(chosen_config) == asdict(LearnerConfig())}
    for split, pools in splits.items():
        report[split] = _evaluate(pools, chosen_config, not args.no_peer)
        report[split]["candidate_recall"] = round(float(np.mean([e["candidate_recall"] for e in pools.values()])), 4)
        report[split]["topics_list"] = {t: {"name": e["topic"].name, "slot": e["topic"].slot,
                                            "relevant": len(e["topic"].relevant),
                                            "candidates": len(e["store"][0]) if "store" in e else 0}
                                        for t, e in pools.items()}
        print(f"{split} evaluated ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    report["rerank"] = _rerank_p95(splits["dev"])
    if "test" in report and not args.no_peer:
        test = report["test"]["store"]
        learner = test["summary"]["learner"]
        report["goals"] = {
            "wss95_learner_minus_static": {**goal(test["learner_minus_static_wss95"]["mean"], 0.10, ">="),
                                           "ci_low_above_0": test["learner_minus_static_wss95"]["ci"][0] > 0},
            "wss95_learner_minus_asreview": {**goal(test["learner_minus_asreview_wss95"]["mean"], 0.05, ">="),
                                             "ci_low_above_0": test["learner_minus_asreview_wss95"]["ci"][0] > 0},
            "recall_at_10pct_learner": goal(learner["recall@10%"]["mean"], 0.80, ">="),
            "rerank_p95_ms_1000": goal(report["rerank"]["p95_ms"], 300, "<="),
        }
    report["seconds"] = round(time.perf_counter() - started, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
