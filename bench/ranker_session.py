"""In-session feedback on benchmark v2 (residual collection): does re-ranking from a curator's first grades help?

Usage::

    python -m bench.ranker_session [--cache DIR] [--test] [--out bench/results/feedback.json]

Queries: benchmark v2's canonical queries name every query slot and have one relevant document each (731 of 732 dev
lists), and so do most anchor-slot-only ones (2 dev queries with three), so none would qualify. The residual protocol
needs broad partial relations: one slot typed alone, the disease or the chemical of the chemical-disease schema (a
search the Curate page serves as it is). A query's relevant documents are those of every benchmark record, of any
kind and split, that names that concept (nothing is trained across queries here, so no split's labels can leak into
a model); the queries are halved into dev and test by a hash of the name (:func:`part_of`).

Protocol (the standard residual-collection evaluation of relevance feedback): for every query whose served top 50
holds at least :data:`MIN_RELEVANT` relevant documents, the first :data:`GRADED` shown are graded from gold
(relevant: complete, gain 2; else not relevant, 0), then removed from both the ranking and the judgements; the
rest are scored by NDCG@10 in the static served order and in the order :func:`curation.ranking.session.session_scores`
gives them (the same function the served search applies, :func:`curation.ranking.session.rerank_session`). The gain
is paired per query, with its 95% bootstrap interval.

The method and its weights are chosen on the **dev** split (a small grid, :func:`grid`): the best Rocchio, replaced by
the best feature model only when the paired interval of its per-query gain over that Rocchio is above 0; ``--test``
then scores the chosen one on the test split once. The first stage is the served concept search (BM25 lexical stage,
no dense model) as in ``bench/ranker.py``, whose candidate lists (``--cache``) this reuses. Term vectors are the
lexical index's BM25 document rows. The section goes into ``--out`` as ``session_feedback`` with the ``goals``.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import numpy as np

from bench import _concepts
from bench import _scaffold as scaffold
from bench._benchmark import load_benchmark
from bench._scaffold import goal
from bench.ranker import concatenated, labelled, load_lists, save_lists, searches, signals_for
from curation.learning.ranker.training import CandidateLists, LabelledQuery, candidate_lists
from curation.learning.statistics import bootstrap_ci, per_query
from curation.ranking.session import DEPTH, METHODS, SessionConfig, session_order, session_scores
from index.lexical import LexicalIndex
from index.search import Retriever

GRADED = 5  # results graded before the rest re-rank
MIN_RELEVANT = 3  # relevant documents a query needs in its top DEPTH to be scored
METRIC = "ndcg@10"
GAIN_GOAL, CI_LOW_GOAL = 0.05, 0.0


def grid() -> list[SessionConfig]:
    """The configurations tried on dev: Rocchio's two weights, then the feature model's weight on the best ones."""
    out = [SessionConfig("rocchio", 1.0, rel, non, 0.0) for rel in (0.1, 0.25, 0.5, 1.0, 2.0)
           for non in (0.0, 0.1, 0.25, 0.5)]
    out += [SessionConfig("rocchio_features", 1.0, rel, non, feat) for rel in (0.25, 0.5, 1.0) for non in (0.0, 0.1)
            for feat in (0.1, 0.25, 0.5, 1.0)]
    return out


def residual(lists: CandidateLists, gold: dict[str, set[str]], terms, row_of) -> list[dict]:
    """The scored queries: each list's gains (the first GRADED graded, the rest -1), term rows and feature rows."""
    out = []
    for key, s in lists.lists():
        pmids = lists.pmids[s][:DEPTH]
        relevant = [p for p in pmids if p in gold[key]]
        if len(relevant) < MIN_RELEVANT or len(pmids) <= GRADED:
            continue
        left = gold[key] - set(pmids[:GRADED])
        if not left:  # every relevant document was among the graded: nothing residual to find
            continue
        gains = np.asarray([(2 if p in gold[key] else 0) if i < GRADED else -1 for i, p in enumerate(pmids)])
        out.append({"key": key, "pmids": pmids, "gains": gains, "terms": terms[[row_of[p] for p in pmids]],
                    "rows": lists.rows[s][:DEPTH], "qrels": {p: 1 for p in left}})
    return out


def scores_of(queries: list[dict], config: SessionConfig | None) -> dict[str, float]:
    """Residual NDCG@10 per query: the static order (``config`` None) or the in-session re-ranking."""
    run = {}
    for q in queries:
        gains = q["gains"]
        if config is None:
            order = list(range(len(gains)))
        else:
            order = session_order(gains, session_scores(gains, q["terms"], q["rows"], config))
        ranked = [q["pmids"][i] for i in order if gains[i] < 0]
        run[q["key"]] = {p: 1.0 / r for r, p in enumerate(ranked, start=1)}
    return per_query(run, {q["key"]: q["qrels"] for q in queries}, METRIC)


def figures(queries: list[dict], config: SessionConfig, seed: int) -> dict:
    base, after = scores_of(queries, None), scores_of(queries, config)
    interval = bootstrap_ci({k: after[k] - base[k] for k in base}, seed=seed)
    return {"queries": len(base), "static_ndcg10": round(float(np.mean(list(base.values()))), 4),
            "session_ndcg10": round(float(np.mean(list(after.values()))), 4),
            "gain_ndcg10": round(interval.mean, 4), "gain_ci95": [round(interval.low, 4), round(interval.high, 4)]}


SLOTS = ("Disease", "Chemical")  # the slots typed alone, each searched under SCHEMA_KIND's schema
SCHEMA_KIND = "chemical_disease"


def part_of(name: str) -> str:
    """"dev" or "test" for a query name, by a stable hash (a third of the names are dev)."""
    return "dev" if int(hashlib.sha1(name.casefold().encode()).hexdigest(), 16) % 3 == 0 else "test"


def single_slot_queries(benchmark, part: str) -> dict[str, dict[str, LabelledQuery]]:
    """SCHEMA_KIND → ("slot=name" → that slot alone, with the documents of every record naming it) of ``part``."""
    gains: dict[tuple[str, str], dict[str, int]] = {}
    for split in ("train", "dev", "test"):
        for per in labelled(benchmark, split).values():
            for query in per.values():
                for slot in SLOTS:
                    if query.values.get(slot) and part_of(query.values[slot]) == part:
                        gains.setdefault((slot, query.values[slot]), {}).update(query.gains)
    return {SCHEMA_KIND: {f"{slot}={name}": LabelledQuery({slot: name}, g, frozenset({"kb"}))
                          for (slot, name), g in sorted(gains.items()) if len(g) >= MIN_RELEVANT}}


def paired(queries: list[dict], a: SessionConfig, b: SessionConfig, seed: int) -> dict:
    """Residual NDCG@10 of ``a`` minus ``b`` per query: mean and 95% bootstrap interval."""
    first, second = scores_of(queries, a), scores_of(queries, b)
    interval = bootstrap_ci({k: first[k] - second[k] for k in first}, seed=seed)
    return {"gain_ndcg10": round(interval.mean, 4), "gain_ci95": [round(interval.low, 4), round(interval.high, 4)]}


def split_lists(split: str, args, engine, benchmark) -> tuple[CandidateLists, dict[str, set[str]]]:
    """The split's scored candidate lists (from ``--cache`` when there; the concept search is built only if not)."""
    per_kind = single_slot_queries(benchmark, split)
    gold = {key: set(q.gains) for per in per_kind.values() for key, q in per.items()}
    cached = args.cache / f"{split}-slot-{DEPTH}" if args.cache else None
    if cached is not None and cached.with_suffix(".json").exists():
        return load_lists(cached), gold
    bench = _concepts.build(benchmark, args.data_dir, time.perf_counter)
    signals, parts = signals_for(bench, benchmark), searches(bench, benchmark)
    lists = concatenated([candidate_lists(parts[k], engine, per_kind[k], signals, DEPTH) for k in per_kind])
    if cached is not None:
        save_lists(lists, cached)
    return lists, gold


def main(argv: list[str] | None = None) -> int:
    parser = scaffold.parser(__doc__, "feedback", data_dir=True, seed=13)
    parser.add_argument("--cache", type=Path, help="candidate lists kept here (bench/ranker.py's --cache)")
    parser.add_argument("--test", action="store_true", help="score the dev-chosen method on the test split (once)")
    args = parser.parse_args(argv)
    started, load = time.time(), scaffold.machine("cpu_count", "load_average_at_start")
    benchmark = load_benchmark(args.data_dir, seed=args.seed)
    engine = Retriever(lexical=LexicalIndex.build(list(benchmark.corpus)), version="bm25")
    terms, row_of = engine.lexical.doc_term_matrix(), engine.lexical.row_of
    lists, gold = split_lists("dev", args, engine, benchmark)
    dev = residual(lists, gold, terms, row_of)
    tried = []
    for config in grid():
        tried.append({"config": config.__dict__, **figures(dev, config, args.seed)})
        print(tried[-1], flush=True)
    best = {m: max((t for t in tried if t["config"]["method"] == m), key=lambda t: t["gain_ndcg10"]) for m in METHODS}
    # The feature model replaces the Rocchio baseline only when it beats it per query (paired interval above 0).
    features, rocchio = (SessionConfig(**best[m]["config"]) for m in ("rocchio_features", "rocchio"))
    versus = paired(dev, features, rocchio, args.seed)
    chosen = SessionConfig(**best["rocchio_features" if versus["gain_ci95"][0] > 0 else "rocchio"]["config"])
    rocchio, best = best["rocchio"], next(t for t in tried if t["config"] == chosen.__dict__)
    section = {
        "date": scaffold.now(),
        "queries": "the disease or the chemical typed alone (chemical-disease schema), canonical names; relevant: "
                   "the documents of every record naming it; dev / test: a hash of the name",
        "protocol": f"residual collection: queries with >= {MIN_RELEVANT} relevant documents in the served top "
                    f"{DEPTH}; the first {GRADED} graded from gold and removed; {METRIC} of the rest",
        "first_stage": f"served concept search, BM25 lexical stage (no dense model), top {DEPTH}",
        "chosen_on_dev": best["config"], "dev": best, "dev_best_rocchio": rocchio,
        "dev_features_vs_rocchio": versus, "dev_grid": tried,
        "params": {"seed": args.seed, **load},
    }
    old = scaffold.read(args.out).get("session_feedback") or {}
    if args.test:
        test_lists, test_gold = split_lists("test", args, engine, benchmark)
        section["test"] = figures(residual(test_lists, test_gold, terms, row_of), chosen, args.seed)
        print("test", section["test"], flush=True)
    elif "test" in old and old.get("chosen_on_dev") == best["config"]:
        section["test"] = old["test"]  # the test figure of this same choice, read once before
    which = section.get("test") or best
    suffix = "" if "test" in section else "_dev"
    goals = {f"residual_ndcg10_gain{suffix}": goal(which["gain_ndcg10"], GAIN_GOAL, ">="),
             f"residual_ndcg10_ci_low{suffix}": goal(which["gain_ci95"][0], CI_LOW_GOAL, ">")}
    section["timings_s"] = {"total": round(time.time() - started, 1)}
    scaffold.write(args.out, section, section="session_feedback", goals=goals)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
