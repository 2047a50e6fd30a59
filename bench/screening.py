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

import math
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from typing import NamedTuple

import numpy as np

from bench import _asreview_peer, _concepts, _screening_curves, _screening_gate
from bench import _scaffold as scaffold
from bench._scaffold import goal
from bench._screening_topics import Topic, find_topics, load_store_documents, relation_pairs
from curation.learning.ranker.training import CandidateLists, train_ranker
from curation.learning.statistics import bootstrap_ci
from curation.ranking.features import (
    FEATURE_NAMES,
    PRODUCT_FEATURES,
    Evidence,
    MemorySignals,
    feature_matrix,
    query_key,
)
from curation.retrieval.relation_search import SearchInputError, SearchOptions, search_relation
from curation.screening import metrics
from curation.screening.learner import LearnerConfig, ScreeningLearner
from curation.screening.pool import EVIDENCE_FEATURES, MAX_CANDIDATES, TopicPool, pool_from_hits
from curation.screening.simulation import random_order, simulate, static_prior
from index.lexical import LexicalIndex
from index.search import Retriever

METRICS = ("wss@95", "recall@10%", "recall@20%", "atd", "loss")
GRID = tuple(LearnerConfig(prior_weight=p, evidence_weight=e) for p in (0.0, 0.5, 1.0) for e in (0.0, 0.1, 0.3, 1.0))
RANDOM_SEEDS = 10
EVIDENCE_COLUMNS = [FEATURE_NAMES.index(n) for n in EVIDENCE_FEATURES]
FOLDS = 5  # leave-topic-out folds of the cross-topic ranker on dev
MIN_POOL = 10


def _pools(topics: Sequence[Topic], bench: _concepts.ConceptBench, engine: Retriever,
           home: Mapping[str, str], signals: MemorySignals) -> dict[str, dict[str, object]]:
    """Per topic: the whole-store pool, the own-corpus pool, each pool's gains, and the candidate recall."""
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
        full = feature_matrix(found.concepts, hits, docs, signals, query_key(values), schema.kind(topic.answer))
        pool = pool_from_hits(hits, docs, full[:, EVIDENCE_COLUMNS])
        own = [i for i, p in enumerate(pool.pmids) if home.get(p) == topic.corpus]
        entry = {"topic": topic, "candidate_recall": sum(p in topic.relevant for p in pool.pmids) / len(topic.relevant)}
        for name, kept in (("store", list(range(len(pool)))), ("own_corpus", own)):
            gains = np.asarray([topic.relevant.get(pool.pmids[i], 0) for i in kept], dtype=np.int64)
            if len(kept) >= MIN_POOL and int((gains > 0).sum()) >= 2 and int((gains == 0).sum()) >= 1:
                entry[name] = Pooled(_subset(pool, kept), gains, full[kept])
        out[topic.topic_id] = entry
    return out


class Pooled(NamedTuple):
    """One topic's pool in one setting: the candidates, their answer-key gains, their learned-stage rows."""

    pool: TopicPool
    gains: np.ndarray
    rows: np.ndarray  # (n, len(FEATURE_NAMES))


def _subset(pool: TopicPool, kept: Sequence[int]) -> TopicPool:
    kept = list(kept)
    return TopicPool(tuple(pool.pmids[i] for i in kept), tuple(pool.texts[i] for i in kept),
                     pool.evidence[kept] if pool.evidence is not None else None, pool.evidence_names)


def _cross_topic_ranker(pooled: Sequence[Pooled]):
    """The product's learned stage (LightGBM lambdarank over the product's features) trained on other topics'
    graded pools: what "Update the ranker" learns from a curator's screening grades of earlier topics."""
    lists = CandidateLists([str(i) for i in range(len(pooled))], [len(p.gains) for p in pooled],
                           np.vstack([p.rows for p in pooled]), np.concatenate([p.gains for p in pooled]),
                           [x for p in pooled for x in p.pool.pmids])
    model, _ = train_ranker(lists, PRODUCT_FEATURES, depth=MAX_CANDIDATES)
    return model


def _reordered(pooled: Pooled, model) -> Pooled:
    """``pooled`` in the order ``model`` gives it (ties: the served order)."""
    order = np.argsort(-model.score(pooled.rows), kind="stable")
    return Pooled(_subset(pooled.pool, order), pooled.gains[order], pooled.rows[order])


def _ranked_pools(train: Mapping[str, dict], apply: Mapping[str, dict], folds: int = 0) -> dict[str, dict]:
    """``apply``'s pools re-ordered by a cross-topic ranker trained on ``train``'s whole-store pools; with
    ``folds`` (dev), leave-topic-out: each fold of ``apply`` by a ranker trained on the other folds."""
    ids = sorted(apply)
    groups = [ids[k::folds] for k in range(folds)] if folds else [ids]
    out: dict[str, dict] = {}
    for group in groups:
        chosen = set(group)
        model = _cross_topic_ranker([e["store"] for t, e in train.items() if "store" in e and
                                     (not folds or t not in chosen)])
        for topic_id in group:
            entry = apply[topic_id]
            out[topic_id] = {**entry, **{s: _reordered(entry[s], model) for s in ("store", "own_corpus")
                                         if s in entry}}
    return out


def _scores(order: Sequence[int], gains: np.ndarray) -> dict[str, object]:
    """The order's metrics, and the reads (1-based) at which each relevant candidate was found (its curve)."""
    found = gains[list(order)] > 0
    return {**metrics.summary(found), "found_at": (np.flatnonzero(found) + 1).tolist()}


def _random(gains: np.ndarray) -> dict[str, float]:
    runs = [_scores(random_order(len(gains), seed), gains) for seed in range(RANDOM_SEEDS)]
    return {m: float(np.mean([r[m] for r in runs])) for m in METRICS}


def _learner_runs(pools: Mapping[str, dict], setting: str, config: LearnerConfig) -> tuple[dict, list[float]]:
    out, seconds = {}, []
    for topic_id, entry in pools.items():
        if setting not in entry:
            continue
        pool, gains, _ = entry[setting]
        run = simulate(pool, gains, static_prior(gains), config)
        out[topic_id] = {"order": list(run.order), **_scores(run.order, gains)}
        seconds += run.rerank_seconds
    return out, seconds


def _peer_runs(pools: Mapping[str, dict], setting: str) -> dict:
    ids = [t for t, e in pools.items() if setting in e]
    requests = []
    for topic_id in ids:
        pool, gains, _ = pools[topic_id][setting]
        requests.append({"texts": list(pool.texts), "labels": [int(g > 0) for g in gains],
                         "prior": list(static_prior(gains)), "seed": 0})
    orders = _asreview_peer.simulate_many(requests, workers=2)
    return {t: {"order": o, **_scores(o, pools[t][setting].gains)} for t, o in zip(ids, orders, strict=True)}


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


def _evaluate(pools: Mapping[str, dict], config: LearnerConfig, peer: bool,
              ranked: Mapping[str, dict] | None = None) -> dict:
    """Every method on every pool setting: per-topic figures and their summaries.

    ``ranked``: the same pools in the cross-topic ranker's order (methods ``ranked``, ``learner_ranked`` and
    ``asreview_ranked``, the peer then given the ranked order's prior knowledge).
    """
    result = {}
    for setting in ("store", "own_corpus"):
        per: dict[str, dict] = {"random": {}, "static": {}, "best_possible": {}}
        for topic_id, entry in pools.items():
            if setting in entry:
                gains = entry[setting].gains
                per["random"][topic_id] = _random(gains)
                per["static"][topic_id] = _scores(range(len(gains)), gains)
                per["best_possible"][topic_id] = _scores(np.argsort(~(gains > 0), kind="stable"), gains)
        timing = {}
        started = time.perf_counter()
        per["learner"], seconds = _learner_runs(pools, setting, config)
        timing["learner_seconds"] = round(time.perf_counter() - started, 1)
        if ranked is not None:
            per["ranked"] = {t: _scores(range(len(e[setting].gains)), e[setting].gains)
                             for t, e in ranked.items() if setting in e}
            per["learner_ranked"], _ = _learner_runs(ranked, setting, config)
        if peer:
            started = time.perf_counter()
            per["asreview"] = _peer_runs(pools, setting)
            if ranked is not None:
                per["asreview_ranked"] = _peer_runs(ranked, setting)
            timing["asreview_seconds"] = round(time.perf_counter() - started, 1)
        differences = {f"{a}_minus_{b}_wss95": _difference(per[a], per[b])
                       for a, b in (("learner", "static"), ("learner", "asreview"), ("asreview", "static"),
                                    ("ranked", "static"), ("learner_ranked", "static"),
                                    ("learner_ranked", "asreview"), ("learner_ranked", "asreview_ranked"),
                                    ("asreview_ranked", "static"))
                       if a in per and b in per}
        result[setting] = {
            "topics": len(per["static"]),
            "summary": _summary(per, "static"),
            **differences,
            **timing,
            "learner_rerank_p95_ms": round(float(np.percentile(seconds, 95)) * 1000, 1) if seconds else None,
            "per_topic": {m: {t: {k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items() if k != "order"}
                              for t, r in runs.items()} for m, runs in per.items()},
        }
    return result


def _rerank_p95(pools: Mapping[str, dict], corpus: Sequence, n: int = 1000, grades: int = 30,
                repeats: int = 40) -> dict:
    """The learner's refit + re-rank time for ``n`` candidates after ``grades`` grades: the largest pool, filled
    up to ``n`` with other abstracts of the store (as a topic's queue of 1,000 would hold)."""
    entry = max((e["store"] for e in pools.values() if "store" in e), key=lambda x: len(x.pool))
    pool, gains = entry.pool, entry.gains
    have = set(pool.pmids)
    extra = [d for d in corpus if d.pmid not in have][: max(0, n - len(pool))]
    width = pool.evidence.shape[1] if pool.evidence is not None else 0
    pool = TopicPool(pool.pmids + tuple(d.pmid for d in extra), pool.texts + tuple(d.text for d in extra),
                     np.vstack([pool.evidence, np.full((len(extra), width), np.nan)]) if width else None,
                     pool.evidence_names)
    gains = np.concatenate([gains, np.zeros(len(extra), dtype=np.int64)])[:n]
    pool = _subset(pool, range(min(n, len(pool))))
    known = np.full(len(pool), -1, dtype=np.int64)
    known[:grades] = gains[:grades]
    if not (known > 0).any():
        known[int(np.argmax(gains > 0))] = 2
    if not (known == 0).any():
        known[int(np.argmax(gains == 0))] = 0
    learner = ScreeningLearner(pool, LearnerConfig())
    times = [learner.rank(known).seconds for _ in range(repeats)]
    return {"candidates": len(pool), "grades": int((known >= 0).sum()),
            "p95_ms": round(float(np.percentile(times, 95)) * 1000, 1)}


def _goals(report: Mapping, product: str) -> dict:
    """The issue's goals on the test topics' whole-store pools, for the product's method ``product``."""
    test = report["test"]["store"]
    peer = "asreview_ranked" if product == "learner_ranked" else "asreview"
    over_static, over_peer = test[f"{product}_minus_static_wss95"], test[f"{product}_minus_{peer}_wss95"]
    return {
        "wss95_learner_minus_static": goal(over_static["mean"], 0.10, ">="),
        "wss95_learner_minus_static_ci_low": goal(over_static["ci"][0], 0.0, ">"),
        "wss95_learner_minus_asreview": goal(over_peer["mean"], 0.05, ">="),
        "wss95_learner_minus_asreview_ci_low": goal(over_peer["ci"][0], 0.0, ">"),
        "recall_at_10pct_learner": goal(test["summary"][product]["recall@10%"]["mean"], 0.80, ">="),
        "rerank_p95_ms_1000": goal(report["rerank"]["p95_ms"], 300, "<="),
        **_gate_goals(report),
    }


def _gate_goals(report: Mapping) -> dict:
    """The cross-topic update's goals on the test split's sessions (:mod:`bench._screening_gate`)."""
    gate = report.get("gate", {}).get("test", {})
    if "session" not in gate:
        return {}
    return {"gate_activates_after_3x30": goal(gate["session"]["activated"], 1, ">="),
            "gate_false_activation_rate": goal(gate["false_activation_rate"], 0.05, "<=")}


def main(argv: Sequence[str] | None = None) -> int:
    parser = scaffold.parser(__doc__, "screening", data_dir=True)
    parser.add_argument("--test", action="store_true", help="also score the test topics (read once)")
    parser.add_argument("--no-peer", action="store_true", help="leave ASReview out (a quick look)")
    parser.add_argument("--limit", type=int, default=0, help="at most this many topics per split (0: all)")
    parser.add_argument("--product", choices=("learner", "learner_ranked"), default="learner",
                        help="the method the goals judge (decided on dev before the test run)")
    parser.add_argument("--rerank-only", action="store_true",
                        help="measure the re-rank time again into the existing --out (nothing else is run)")
    parser.add_argument("--gate-only", action="store_true",
                        help="run the cross-topic sessions again into the existing --out (nothing else is run)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    corpus, annotated, home = load_store_documents(args.data_dir)
    topics = find_topics(annotated)
    held = {p for t in topics for p in t.relevant}
    kept = [d for d in annotated if d.mentions and d.pmid not in held]
    bench = _concepts.build_over(corpus, kept, args.data_dir, time.perf_counter)
    engine = Retriever(lexical=LexicalIndex.build(corpus), version="bm25")
    scored, scorer_data = relation_pairs(annotated, topics, corpus, bench.annotations)
    signals = MemorySignals({d.pmid: Evidence(pairs=tuple(scored.get(d.pmid, ())), kinds=bench.kinds.get(d.pmid, {}))
                             for d in corpus})
    report: dict[str, object] = {
        "created": scaffold.now(),
        "machine": scaffold.machine("python", "platform"),
        "store": {"documents": len(corpus), "by_corpus": dict(sorted(
            {c: sum(1 for v in home.values() if v == c) for c in set(home.values())}.items())),
            "lexicon_documents": len(kept), "relation_scorer_trained_on": scorer_data},
        "topics": {s: sum(1 for t in topics if t.split == s) for s in ("dev", "test")},
    }
    if not args.no_peer and not args.rerank_only and not args.gate_only:
        report["peer"] = _asreview_peer.peer_versions()
    splits = {}
    for split in ("dev", "test") if args.test else ("dev",):
        chosen = [t for t in topics if t.split == split]
        if args.limit:
            chosen = chosen[:: max(1, len(chosen) // args.limit)][: args.limit]
        pools = _pools(chosen, bench, engine, home, signals)
        splits[split] = pools
        print(f"{split}: {len(pools)} topics pooled, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    if args.gate_only:
        report = scaffold.read(args.out)
        report["gate"] = _screening_gate.report(splits, bench, engine, signals)
        if "goals" in report:
            report["goals"].update(_gate_goals(report))
        scaffold.write(args.out, report, indent=1, echo={s: report["gate"][s].get("session") for s in splits})
        return 0
    if args.rerank_only:
        report = scaffold.read(args.out)
        report["rerank"] = _rerank_p95({t: e for pools in splits.values() for t, e in pools.items()}, corpus)
        if "goals" in report:
            report["goals"]["rerank_p95_ms_1000"] = goal(report["rerank"]["p95_ms"], 300, "<=")
        scaffold.write(args.out, report, indent=1, echo=report["rerank"])
        return 0
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
        # Dev: leave-topic-out folds; test: a ranker trained on every dev topic (test topics never trained on).
        ranked = _ranked_pools(dev, pools, FOLDS) if split == "dev" else _ranked_pools(dev, pools)
        report[split] = _evaluate(pools, chosen_config, not args.no_peer, ranked)
        report[split]["candidate_recall"] = round(float(np.mean([e["candidate_recall"] for e in pools.values()])), 4)
        report[split]["topics_list"] = {t: {"name": e["topic"].name, "slot": e["topic"].slot,
                                            "relevant": len(e["topic"].relevant),
                                            "candidates": len(e["store"].pool) if "store" in e else 0}
                                        for t, e in pools.items()}
        print(f"{split} evaluated ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    report["rerank"] = _rerank_p95({t: e for pools in splits.values() for t, e in pools.items()}, corpus)
    report["gate"] = _screening_gate.report(splits, bench, engine, signals)
    if "test" in report and not args.no_peer:
        report["goals"] = _goals(report, args.product)
        report["curves"] = _screening_curves.curves(splits["test"], report["test"]["store"]["per_topic"],
                                                    args.product)
        _screening_curves.figure(report["curves"], _screening_curves.FIGURE)
    report["seconds"] = round(time.perf_counter() - started, 1)
    scaffold.write(args.out, report, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
