"""The learned ranking stage on benchmark v2's test split, read once: what the gate would serve, and what it gives.

Usage::

    python -m bench.ranker_test [--cache DIR] [--out bench/results/feedback.json]

Everything is chosen on dev before this reads the test split: the feature set (the product's), the re-ordered
depth (``ranker_dev``'s ``depth_chosen_on_dev``, written by ``python -m bench.ranker``) and the number of train
queries per kind. The ranker is trained exactly as ``bench.ranker`` trains it (the train split's canonical queries,
gold documents gain 2, every other candidate 0) and the **gate decides on dev**, as the product's "Update the
ranker" does: it serves only when the paired-bootstrap interval of its dev NDCG@10 gain is above 0. The served
system on test is then the ranker (activated) or the concept search alone (kept out), and

- ``served_gain_ndcg10`` / ``served_gain_ci_low``: served minus the concept search alone, test, canonical form,
  every kind pooled (0 when the gate kept the ranker out);
- ``served_gain_reworded_ndcg10``: the same on the test queries as a curator rewords them;
- ``served_canonical_ndcg10_test``: the served system's NDCG@10 (canonical form);
- ``activated_by_gate``: whether the dev interval let it serve.

The ranker's own test gain (served or not) is reported beside them, so that what the gate kept out is seen too.
The section goes into ``--out`` as ``ranker_test`` with its goals.
"""

from __future__ import annotations

import time
from pathlib import Path

from bench import _concepts
from bench import _scaffold as scaffold
from bench._benchmark import load_benchmark
from bench._scaffold import goal
from bench.ranker import (
    concatenated,
    cut,
    labelled,
    load_lists,
    mean,
    reordered,
    save_lists,
    scores,
    searches,
    signals_for,
)
from curation.learning.ranker.training import candidate_lists, ranked_runs, train_ranker
from curation.learning.statistics import bootstrap_ci
from curation.ranking.features import PRODUCT_FEATURES
from index.lexical import LexicalIndex
from index.search import Retriever

GOALS = {"served_gain_ndcg10": (0.03, ">="), "served_gain_ci_low": (0.0, ">"),
         "served_gain_reworded_ndcg10": (0.05, ">="), "served_canonical_ndcg10_test": (0.95, ">="),
         "activated_by_gate": (1.0, ">=")}


def lists_of(split: str, form: str, limit: int | None, args, parts, engine, benchmark, signals):
    """The served candidate lists of ``split``'s queries in ``form`` (kept in ``--cache`` when given), and their qrels
    (every gold document, retrieved or not, as bench/ranker.py scores dev)."""
    per_kind = labelled(benchmark, split, limit, form)
    qrels = {key: {p: 1 for p in q.gains} for per in per_kind.values() for key, q in per.items()}
    cached = args.cache / f"{split}-{form}-{limit}-{args.depth}" if args.cache else None
    if cached is not None and cached.with_suffix(".json").exists():
        return load_lists(cached), qrels
    lists = concatenated([candidate_lists(parts[k], engine, per_kind[k], signals, args.depth) for k in per_kind])
    if cached is not None:
        save_lists(lists, cached)
    return lists, qrels


def compare(lists, qrels, model, depth: int, served: bool, seed: int) -> dict:
    """Concept search alone vs the ranker on ``lists``, and the served one (the ranker when ``served``)."""
    base = scores(ranked_runs(lists, None), qrels)
    ranker = scores(reordered(lists, model, depth), qrels)
    served_scores = ranker if served else base
    ranker_ci = bootstrap_ci({q: ranker[q] - base[q] for q in base}, seed=seed)
    served_ci = bootstrap_ci({q: served_scores[q] - base[q] for q in base}, seed=seed)
    return {"queries": len(qrels), "concept_search_ndcg10": round(mean(base), 4),
            "ranker_ndcg10": round(mean(ranker), 4), "served_ndcg10": round(mean(served_scores), 4),
            "ranker_gain": round(ranker_ci.mean, 4), "ranker_gain_ci95": [round(ranker_ci.low, 4),
                                                                         round(ranker_ci.high, 4)],
            "served_gain": round(served_ci.mean, 4), "served_gain_ci95": [round(served_ci.low, 4),
                                                                         round(served_ci.high, 4)]}


def main(argv: list[str] | None = None) -> int:
    parser = scaffold.parser(__doc__, "feedback", data_dir=True, seed=13)
    parser.add_argument("--cache", type=Path, help="keep each split's candidate lists here (npz + json) and reuse them")
    args = parser.parse_args(argv)
    report = scaffold.read(args.out)
    dev = report.get("ranker_dev")
    if not dev:
        raise SystemExit(f"{args.out}: no ranker_dev section; run python -m bench.ranker first (dev chooses)")
    product = dev["systems"]["product"]
    depth, train_limit = int(product["depth_chosen_on_dev"]), int(dev["train_queries_per_kind"])
    activated = product["gain_ci95"][0] > 0  # the gate, on dev
    args.depth = max(int(k) for k in product["dev_ndcg10_by_depth"])  # the lists' depth of the dev run
    started = time.time()
    benchmark = load_benchmark(args.data_dir, seed=args.seed)
    bench = _concepts.build(benchmark, args.data_dir, time.perf_counter)
    engine = Retriever(lexical=LexicalIndex.build(list(benchmark.corpus)), version="bm25")
    signals = signals_for(bench, benchmark)
    parts = searches(bench, benchmark)
    train, _ = lists_of("train", "canonical", train_limit, args, parts, engine, benchmark, signals)
    model, seconds = train_ranker(cut(train, depth), PRODUCT_FEATURES, depth, seed=args.seed)
    results = {}
    for form in ("canonical", "reworded"):
        test, qrels = lists_of("test", form, None, args, parts, engine, benchmark, signals)
        results[form] = compare(test, qrels, model, depth, activated, args.seed)
        print(f"test {form}: {results[form]}", flush=True)
    canonical, reworded = results["canonical"], results["reworded"]
    section = {
        "date": scaffold.now(),
        "split": "test (read once; every choice made on dev by bench/ranker.py)",
        "features": "product", "depth": depth, "train_queries_per_kind": train_limit,
        "train_pairs": model.manifest.trained_on["pairs"], "train_seconds": round(seconds, 2),
        "gate": {"dev_gain": product["gain_ndcg10"], "dev_ci95": product["gain_ci95"], "activated": activated},
        "forms": results,
        "params": {"seed": args.seed, **scaffold.machine("cpu_count", "python", "load_average_at_start")},
        "timings_s": {"total": round(time.time() - started, 1)},
    }
    goals = report.setdefault("goals", {})
    for name in ("served_gain_ndcg10", "served_gain_ci_low", "activated_by_gate"):  # the encoder retrain's, kept
        if name in goals and f"encoder_{name}" not in goals:
            goals[f"encoder_{name}"] = goals.pop(name)
    values = {"served_gain_ndcg10": canonical["served_gain"], "served_gain_ci_low": canonical["served_gain_ci95"][0],
              "served_gain_reworded_ndcg10": reworded["served_gain"],
              "served_canonical_ndcg10_test": canonical["served_ndcg10"], "activated_by_gate": float(activated)}
    goals.update({name: goal(values[name], *GOALS[name]) for name in GOALS})
    report["ranker_test"] = section
    scaffold.write(args.out, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
