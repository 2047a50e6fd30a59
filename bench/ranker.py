"""The learned ranking stage on benchmark v2's dev split: concept search alone vs + the LambdaMART ranker.

Usage::

    python -m bench.ranker [--train-queries 1500] [--out bench/results/feedback.json]

Everything goes through the product's path: the served search
(:func:`curation.retrieval.relation_search.search_relation` over bench/_concepts.py's lexicon and concept index,
BM25 lexical stage, no dense model: the dense share the served versions choose on dev is 0) gives each query's
top ``--depth`` candidates; the ranker learns on the **train** split's canonical queries (gold documents gain 2,
every other candidate 0: the KB-derived negatives) and is scored on the **dev** split's canonical queries, every
kind pooled. The test split is not read.

Systems (dev NDCG@10, per query, paired bootstrap interval of the gain over the concept search):

- ``product``: the product's feature set (:data:`curation.ranking.features.PRODUCT_FEATURES`);
- ``product_with_length``: plus document length, a source-identifying feature (the corpora's abstracts differ
  in length and a query's relevant documents mostly come from one corpus), reported to show the artifact;
- ``product_with_kb``: plus the KB-citation and curator-grade features of other queries (here the KB is the train
  split, whose documents are never dev positives by construction, so "cited elsewhere" is itself a split artifact).

The ``product`` ranker is also scored on the dev queries' reworded form (``reworded``: other names of the same
concepts).

The re-ordered depth N is chosen on dev among :data:`DEPTHS`. ``served_path_identical`` checks that the served
search with the ranker attached ranks exactly as the evaluation's re-ordered lists do. Training time is measured
on the first 10,000 labelled pairs. The section goes into ``--out`` as ``ranker_dev``, beside the other sections.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from bench import _concepts
from bench import _scaffold as scaffold
from bench._benchmark import load_benchmark
from curation.learning.benchmark import kind_of
from curation.learning.ranker.training import (
    KB_GAIN,
    CandidateLists,
    LabelledQuery,
    candidate_lists,
    learnable,
    ranked_runs,
    train_ranker,
)
from curation.learning.served_fusion import ServedSearch
from curation.learning.statistics import bootstrap_ci, per_query
from curation.ranking.features import (
    CROSS_QUERY_FEATURES,
    FEATURE_NAMES,
    PRODUCT_FEATURES,
    Evidence,
    MemorySignals,
    query_key,
)
from curation.ranking.stage import LearnedStage
from curation.retrieval.relation_search import SearchOptions, search_relation
from index.lexical import LexicalIndex
from index.search import Retriever

DEPTHS = (10, 20, 30, 50)
METRIC = "ndcg@10"
FEATURE_SETS = {
    "product": PRODUCT_FEATURES,
    "product_with_length": (*PRODUCT_FEATURES, "document_length"),
    "product_with_kb": (*PRODUCT_FEATURES, *CROSS_QUERY_FEATURES),
}


def labelled(benchmark, split: str, limit: int | None = None, form: str = "canonical"
             ) -> dict[str, dict[str, LabelledQuery]]:
    """kind → ("kind:qid" → labelled query in ``form``) of ``split`` (at most ``limit`` per kind, evenly spaced)."""
    out = {}
    for kind in benchmark.kinds():
        qs = benchmark.query_set(split, kind, form)
        qids = sorted(qs.queries)
        if limit is not None and len(qids) > limit:
            qids = qids[:: len(qids) // limit][:limit]
        out[kind] = {f"{kind}:{qid}": LabelledQuery(dict(qs.values[qid]), {p: KB_GAIN for p, r in qs.qrels[qid].items()
                                                                           if r > 0}, frozenset({"kb"}))
                     for qid in qids}
    return out


def signals_for(bench: _concepts.ConceptBench, benchmark) -> MemorySignals:
    """The store's signals as the product would have them: annotations per kind, and the KB (the train records)."""
    cited: dict[str, dict[str, int]] = {}
    for kind in benchmark.kinds():
        qs = benchmark.query_set("train", kind, "canonical")
        for qid, qrels in qs.qrels.items():
            key = query_key(dict(qs.values[qid]))
            for pmid in qrels:
                cited.setdefault(pmid, {})[key] = cited.get(pmid, {}).get(key, 0) + 1
    kinds: dict[str, dict[str, int]] = {}
    for kind in ("gene", "chemical", "disease", "variant"):
        for posting in bench.source.postings(kind, [], bench.source.texts(kind)):
            counts = kinds.setdefault(posting.pmid, {})
            counts[kind] = counts.get(kind, 0) + 1
    return MemorySignals({p: Evidence(kinds=kinds.get(p, {}), cited=cited.get(p, {})) for p in bench.documents})


def searches(bench: _concepts.ConceptBench, benchmark) -> dict[str, ServedSearch]:
    """kind → the served search's parts for that kind's schema."""
    def documents(pmids):
        return {p: bench.documents[p] for p in pmids if p in bench.documents}

    out = {}
    for kind in benchmark.kinds():
        relation = kind_of(kind)
        schema = _concepts.BenchSchema(kind, relation.query_types, relation.template, relation.answer_types[0])
        out[kind] = ServedSearch(bench.linker, bench.matcher, bench.source, documents, schema)
    return out


def concatenated(parts: list[CandidateLists]) -> CandidateLists:
    import numpy as np

    out = CandidateLists()
    for part in parts:
        out.keys += part.keys  # "kind:qid": unique across kinds
        out.sizes += part.sizes
        out.pmids += part.pmids
        out.seconds += part.seconds
    rows = [p.rows for p in parts if len(p.rows)]
    out.rows = np.vstack(rows) if rows else np.zeros((0, len(FEATURE_NAMES)))
    out.gains = np.concatenate([p.gains for p in parts]) if parts else np.zeros(0)
    return out


def save_lists(lists: CandidateLists, path: Path) -> None:
    """Candidate lists as plain files: the arrays in ``.npz``, keys, sizes and PMIDs in ``.json`` (no pickle)."""
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path.with_suffix(".npz"), rows=lists.rows, gains=lists.gains)
    path.with_suffix(".json").write_text(json.dumps({"keys": lists.keys, "sizes": lists.sizes, "pmids": lists.pmids,
                                                     "seconds": lists.seconds}))


def load_lists(path: Path) -> CandidateLists:
    import numpy as np

    meta = json.loads(path.with_suffix(".json").read_text())
    with np.load(path.with_suffix(".npz"), allow_pickle=False) as arrays:
        return CandidateLists(meta["keys"], meta["sizes"], arrays["rows"], arrays["gains"], meta["pmids"],
                              meta["seconds"])


def cut(lists: CandidateLists, depth: int) -> CandidateLists:
    """Each list's first ``depth`` candidates (what a stage of that depth re-orders; the rest keep their order)."""
    import numpy as np

    index = [i for _, s in lists.lists() for i in range(s.start, min(s.stop, s.start + depth))]
    out = CandidateLists(list(lists.keys), [min(n, depth) for n in lists.sizes], lists.rows[index],
                         lists.gains[index], [lists.pmids[i] for i in index], lists.seconds)
    return out if len(index) else CandidateLists(list(lists.keys), [0] * len(lists.keys), np.zeros((0, 1)))


def mean(values: dict[str, float]) -> float:
    return sum(values.values()) / len(values) if values else 0.0


def first_pairs(lists: CandidateLists, pairs: int) -> CandidateLists:
    """The first lists holding about ``pairs`` candidates (the training-time measurement's sample)."""
    total, n = 0, 0
    while n < len(lists.sizes) and total < pairs:
        total += lists.sizes[n]
        n += 1
    return CandidateLists(lists.keys[:n], lists.sizes[:n], lists.rows[:total], lists.gains[:total],
                          lists.pmids[:total], lists.seconds)


def reordered(lists: CandidateLists, model, depth: int) -> dict[str, dict[str, float]]:
    """Each list with its first ``depth`` candidates re-ordered by ``model`` and the rest after, as a run."""
    head = ranked_runs(cut(lists, depth), model)
    run = {}
    for key, s in lists.lists():
        order = sorted(head.get(key, {}), key=head.get(key, {}).get, reverse=True) + lists.pmids[s][depth:]
        run[key] = {p: 1.0 / r for r, p in enumerate(order, start=1)}
    return run


def gain_per_feature(model) -> dict[str, float]:
    """Each feature's share of the model's total split gain (what carries the model), largest first."""
    gains = model.booster.feature_importance(importance_type="gain")
    total = float(sum(gains)) or 1.0
    pairs = sorted(zip(model.manifest.features, gains, strict=True), key=lambda p: -p[1])
    return {name: round(float(g) / total, 4) for name, g in pairs if g > 0}


def served_identical(engine, bench, benchmark, model, signals, lists: CandidateLists, dev, depth: int) -> dict:
    """Whether the served search with the ranker attached returns each dev list's re-ordered top 10, and the served
    search's latency (top 10, this CPU) without and with the stage (its signals in memory here)."""
    from dataclasses import replace

    expected = reordered(lists, model, depth)
    stage = LearnedStage(replace_depth(model, depth), signals)
    served = replace(engine, learned=stage)
    parts = searches(bench, benchmark)
    differ = checked = 0
    timings: dict[bool, list[float]] = {False: [], True: []}
    for key in lists.keys[:200]:
        part = parts[key.split(":", 1)[0]]
        for learned in (False, True):
            clock = time.perf_counter()
            search = search_relation(served, part.linker, part.matcher, part.source, part.documents, part.schema,
                                     dev[key].values, SearchOptions(k=10, learned=None if learned else False))
            timings[learned].append(1000 * (time.perf_counter() - clock))
        want = sorted(expected[key], key=expected[key].get, reverse=True)[:10]
        differ += [h.pmid for h in search.hits] != want
        checked += 1
    p95 = {learned: sorted(t)[int(0.95 * (len(t) - 1))] if t else 0.0 for learned, t in timings.items()}
    return {"queries_checked": checked, "differ": differ, "search_ms_p95": round(p95[False], 1),
            "learned_search_ms_p95": round(p95[True], 1)}


def replace_depth(model, depth: int):
    from dataclasses import replace

    from curation.ranking.model import RankerModel

    return RankerModel(model.booster, replace(model.manifest, depth=depth))


def scores(run, qrels) -> dict[str, float]:
    full = {q: dict(run.get(q, {})) for q in qrels}
    return per_query(full, qrels, METRIC)


def main(argv: list[str] | None = None) -> int:
    parser = scaffold.parser(__doc__, "feedback", data_dir=True, seed=13)
    parser.add_argument("--train-queries", type=int, default=400, help="train queries per kind (evenly spaced)")
    parser.add_argument("--dev-queries", type=int, help="dev queries per kind (a quick check only: the figures "
                        "committed use every dev query)")
    parser.add_argument("--depth", type=int, default=max(DEPTHS))
    parser.add_argument("--cache", type=Path, help="keep each split's candidate lists here (npz + json) and reuse them")
    args = parser.parse_args(argv)
    started = time.time()
    timings: dict[str, float] = {}
    clock = time.time()
    benchmark = load_benchmark(args.data_dir, seed=args.seed)
    bench = _concepts.build(benchmark, args.data_dir, time.perf_counter)
    engine = Retriever(lexical=LexicalIndex.build(list(benchmark.corpus)), version="bm25")
    timings["setup"] = time.time() - clock
    signals = signals_for(bench, benchmark)
    parts = searches(bench, benchmark)
    lists = {}
    for split, limit in (("train", args.train_queries), ("dev", args.dev_queries)):
        clock = time.time()
        cached = args.cache / f"{split}-{limit}-{args.depth}" if args.cache else None
        if cached is not None and cached.with_suffix(".json").exists():
            lists[split] = load_lists(cached)
        else:
            per_kind = labelled(benchmark, split, limit)
            lists[split] = concatenated([candidate_lists(parts[k], engine, per_kind[k], signals, args.depth)
                                         for k in per_kind])
            if cached is not None:
                save_lists(lists[split], cached)
        # the search's own time, also when the lists were reused from --cache
        timings[f"candidates_{split}"] = lists[split].seconds
        print(f"{split}: {len(lists[split].keys)} lists, {len(lists[split].gains)} candidates", flush=True)
    dev = {key: q for per_kind in labelled(benchmark, "dev", args.dev_queries).values() for key, q in per_kind.items()}
    qrels = {key: {p: 1 for p in q.gains} for key, q in dev.items()}
    base = scores(ranked_runs(lists["dev"], None), qrels)
    clock = time.time()
    sample = first_pairs(learnable(lists["train"]), 10_000)
    _, ten_k = train_ranker(sample, PRODUCT_FEATURES, args.depth, seed=args.seed)
    timings["train_10k_pairs"] = ten_k
    systems, models = {}, {}
    for name, features in FEATURE_SETS.items():
        by_depth = {}
        for depth in DEPTHS:
            model, seconds = train_ranker(cut(lists["train"], depth), features, depth, seed=args.seed)
            run = reordered(lists["dev"], model, depth)
            by_depth[depth] = (model, scores(run, qrels), seconds)
        best = max(by_depth, key=lambda d: (round(mean(by_depth[d][1]), 6), -d))
        model, per_query_scores, seconds = by_depth[best]
        models[name] = model
        interval = bootstrap_ci({q: per_query_scores[q] - base[q] for q in base}, seed=args.seed)
        systems[name] = {
            "features": list(features), "depth_chosen_on_dev": best,
            "dev_ndcg10_by_depth": {str(d): round(mean(v[1]), 4) for d, v in by_depth.items()},
            "dev_ndcg10": round(mean(per_query_scores), 4),
            "gain_ndcg10": round(interval.mean, 4), "gain_ci95": [round(interval.low, 4), round(interval.high, 4)],
            "train_seconds": round(seconds, 2), "train_queries": model.manifest.trained_on["queries"],
            "train_pairs": model.manifest.trained_on["pairs"],
            "gain_per_feature": gain_per_feature(model),
        }
        print(f"{name}: dev {systems[name]['dev_ndcg10']} vs {round(mean(base), 4)}, "
              f"gain {systems[name]['gain_ndcg10']} {systems[name]['gain_ci95']} at depth {best}", flush=True)
    # The same ranker (trained on canonical names) on the dev queries as a curator rewords them: other names of the
    # same concepts, where the concept search itself is weaker.
    reworded_per_kind = labelled(benchmark, "dev", args.dev_queries, "reworded")
    reworded_lists = concatenated([candidate_lists(parts[k], engine, reworded_per_kind[k], signals, args.depth)
                                   for k in reworded_per_kind])
    reworded_qrels = {key: {p: 1 for p in q.gains} for per in reworded_per_kind.values() for key, q in per.items()}
    reworded_base = scores(ranked_runs(reworded_lists, None), reworded_qrels)
    depth = systems["product"]["depth_chosen_on_dev"]
    reworded_scores = scores(reordered(reworded_lists, models["product"], depth), reworded_qrels)
    interval = bootstrap_ci({q: reworded_scores[q] - reworded_base[q] for q in reworded_base}, seed=args.seed)
    reworded = {"queries": len(reworded_qrels), "concept_search_dev_ndcg10": round(mean(reworded_base), 4),
                "ranker_dev_ndcg10": round(mean(reworded_scores), 4), "gain_ndcg10": round(interval.mean, 4),
                "gain_ci95": [round(interval.low, 4), round(interval.high, 4)], "depth": depth}
    print(f"reworded: {reworded}", flush=True)
    identical = served_identical(engine, bench, benchmark, models["product"], signals, lists["dev"], dev,
                                 systems["product"]["depth_chosen_on_dev"])
    section = {
        "date": scaffold.now(),
        "split": "dev (canonical form, every kind pooled); the test split is not read",
        "metric": METRIC,
        "first_stage": "served concept search, BM25 lexical stage (no dense model), top "
                       f"{args.depth} candidates",
        "labels": "train split's canonical queries: gold documents gain 2, other candidates 0 (KB-derived negatives)",
        "dev_queries": len(qrels), "dev_lists": len(lists["dev"].keys),
        "train_queries_per_kind": args.train_queries, "train_lists": len(lists["train"].keys),
        "concept_search_dev_ndcg10": round(mean(base), 4),
        "systems": systems,
        "served_path_identical": identical,
        "reworded": reworded,
        "train_seconds_10k_pairs": round(ten_k, 2), "train_pairs_measured": int(len(sample.gains)),
        "params": {"seed": args.seed, **scaffold.machine("cpu_count", "python", "load_average_at_start")},
        "timings_s": {k: round(v, 1) for k, v in {**timings, "total": time.time() - started}.items()},
    }
    scaffold.write(args.out, section, section="ranker_dev")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
