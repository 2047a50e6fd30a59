"""The ranker learning from decisions: the served NDCG@10 after N simulated decisions, and click → serving on the
sample store.

Usage::

    python -m bench.ranker_curve [--cache DIR] [--test] [--no-click] [--out bench/results/feedback.json]

**Learning curve** (benchmark v2): a simulated curator types train queries (every kind, canonical names, in a seeded
random order) and grades each one's served top 10 from gold (relevant: complete, gain 2; else not relevant, 0). After
N of those decisions (:data:`POINTS`) a ranker is trained on them alone, exactly as an update trains on decisions
(graded documents at their gain, the other candidates of the same lists at 0) and the gate decides what serves: the
ranker when the paired-bootstrap interval of its per-query NDCG@10 gain over the concept search alone is above 0 on
the **dev** split, else the concept search alone. Each point is the served NDCG@10 on dev (``--test``: also on the
test split, once) with its 95% bootstrap interval. ``learning_curve_monotone`` is 1 when no later point's mean lies
below an earlier point's interval.

**Click → serving** (the sample store, as "Load the sample" builds it from the data directory with the installed
vocabularies, its abstracts not annotated: the concept search checks the text): a simulated curator grades the
served top 10 of :data:`CLICK_QUERIES` KB relations by the KB (cited: complete, else not relevant), then
:func:`curation.workflows.ranker_update.update_and_activate` runs (the page's "Update the ranker"), timed from the
call until the ranker serves or the gate keeps it out. ``ranker_page_p95_ms`` is the Curate page's search
(:func:`curation.retrieval.result_rows.curate_search`, top 20) with the learned stage attached.
"""

from __future__ import annotations

import random
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from bench import _concepts
from bench import _scaffold as scaffold
from bench._benchmark import load_benchmark
from bench._scaffold import goal
from bench.ranker import concatenated, labelled, load_lists, save_lists, searches, signals_for
from curation.config import load_settings
from curation.learning.ranker.training import CandidateLists, candidate_lists, ranked_runs, train_ranker
from curation.learning.statistics import bootstrap_ci, per_query
from curation.ranking.features import PRODUCT_FEATURES
from index.lexical import LexicalIndex
from index.search import Retriever

POINTS = (0, 25, 50, 100, 200, 400)
SHOWN = 10  # results a simulated curator grades per query
TRAIN_QUERIES = 10  # train queries per kind the curator draws from (50 queries: 500 decisions)
CLICK_QUERIES = 25
METRIC = "ndcg@10"


def lists_for(split: str, limit: int | None, args, engine, benchmark, built: dict) -> CandidateLists:
    """A split's candidate lists (top 50), from ``--cache`` when there; the concept search is built only when not."""
    cached = args.cache / f"{split}-{limit}-50" if args.cache else None
    if cached is not None and cached.with_suffix(".json").exists():
        return load_lists(cached)
    if "parts" not in built:
        bench = _concepts.build(benchmark, args.data_dir, time.perf_counter)
        built.update(parts=searches(bench, benchmark), signals=signals_for(bench, benchmark))
    per_kind = labelled(benchmark, split, limit)
    lists = concatenated([candidate_lists(built["parts"][k], engine, per_kind[k], built["signals"], 50)
                          for k in per_kind])
    if cached is not None:
        save_lists(lists, cached)
    return lists


def decisions(train: CandidateLists, seed: int) -> list[tuple[int, int]]:
    """(row of ``train``, gain) per simulated decision, in the order a curator makes them."""
    spans = dict(train.lists())
    keys = sorted(spans)
    random.Random(seed).shuffle(keys)
    shown = [range(spans[k].start, min(spans[k].stop, spans[k].start + SHOWN)) for k in keys]
    return [(i, int(train.gains[i] > 0) * 2) for rows in shown for i in rows]


def decided_lists(train: CandidateLists, made: list[tuple[int, int]]) -> CandidateLists:
    """The lists of the queries with a decision, labelled by the decisions alone (the other candidates 0)."""
    graded = dict(made)
    keep = [(k, s) for k, s in train.lists() if any(i in graded for i in range(s.start, s.stop))]
    index = np.concatenate([np.arange(s.start, s.stop) for _, s in keep]) if keep else np.zeros(0, dtype=int)
    gains = np.asarray([graded.get(int(i), 0) for i in index], dtype=np.int32)
    return CandidateLists([k for k, _ in keep], [s.stop - s.start for _, s in keep], train.rows[index], gains,
                          [train.pmids[i] for i in index], train.seconds)


def served_point(model, lists: CandidateLists, qrels, base: dict[str, float], seed: int,
                 serves: bool | None = None) -> dict:
    """The served figures of one point: the ranker's, the gate's verdict, and what serves (ranker or concept search).

    ``serves``: what the gate decided on dev (None: decide here, on these lists: the dev split's own point).
    """
    if model is None:
        interval = bootstrap_ci(base, seed=seed)
        return {"ranker_ndcg10": None, "gate_low": None, "serves": "concept search",
                "served_ndcg10": round(interval.mean, 4), "ci95": [round(interval.low, 4), round(interval.high, 4)]}
    run = ranked_runs(lists, model)
    scores = per_query({q: run.get(q, {}) for q in qrels}, qrels, METRIC)
    low = None
    if serves is None:
        low = bootstrap_ci({q: scores[q] - base[q] for q in base}, seed=seed).low
        serves = low > 0
    interval = bootstrap_ci(scores if serves else base, seed=seed)
    return {"ranker_ndcg10": round(float(np.mean(list(scores.values()))), 4),
            "gate_low": round(low, 4) if low is not None else None,
            "serves": "ranker" if serves else "concept search", "served_ndcg10": round(interval.mean, 4),
            "ci95": [round(interval.low, 4), round(interval.high, 4)]}


def monotone(points: list[dict]) -> int:
    """1 when no later point's served mean lies below an earlier point's interval."""
    return int(all(later["served_ndcg10"] >= earlier["ci95"][0]
                   for i, earlier in enumerate(points) for later in points[i + 1:]))


def curve(args, benchmark, engine, built: dict) -> dict:
    train = lists_for("train", TRAIN_QUERIES, args, engine, benchmark, built)
    made = decisions(train, args.seed)
    splits = ("dev", "test") if args.test else ("dev",)
    evaluated = {s: lists_for(s, None, args, engine, benchmark, built) for s in splits}
    qrels = {s: {k: {p: 1 for p in q.gains} for per in labelled(benchmark, s).values() for k, q in per.items()}
             for s in splits}
    base = {s: per_query(ranked_runs(evaluated[s], None), qrels[s], METRIC) for s in splits}
    out: dict = {s: [] for s in splits}
    for n in POINTS:
        model = None
        if n:
            try:
                model, _ = train_ranker(decided_lists(train, made[:n]), PRODUCT_FEATURES, seed=args.seed)
            except ValueError:  # no graded list has both grades yet: nothing learned, the concept search serves
                model = None
        for s in splits:  # dev first: the gate decides there, and the test point serves what dev decided
            decided = None if s == "dev" else out["dev"][-1]["serves"] == "ranker"
            out[s].append({"decisions": n, **served_point(model, evaluated[s], qrels[s], base[s], args.seed, decided)})
        print(n, {s: out[s][-1] for s in splits}, flush=True)
    return {"train_queries_per_kind": TRAIN_QUERIES, "graded_per_query": SHOWN, "decisions_available": len(made),
            **{f"{s}_points": out[s] for s in splits}, **{f"{s}_monotone": monotone(out[s]) for s in splits}}


def click(settings, seed: int) -> dict:
    """Click → serving on the sample store (see the module docstring)."""
    from curation.grades import Grade
    from curation.ranking.stage import LearnedStage
    from curation.retrieval.result_rows import curate_search, default_linker
    from curation.runtime.matcher import build_matcher
    from curation.store.decisions import record_decision
    from curation.store.kb import list_kb_records
    from curation.store.opening import open_store
    from curation.versions.serving import open_served, serving_key
    from curation.workflows import ranker_update
    from curation.workflows.quickstart import load_sample
    from curation.workflows.session import schemas

    work = Path(tempfile.mkdtemp(prefix="ranker-click-"))
    con = open_store(work / "sample.duckdb")
    clock = time.perf_counter()
    load_sample(con, settings)  # with the installed vocabularies: without them few KB genes are found in the text
    loaded = time.perf_counter() - clock
    schema = max(schemas(con), key=lambda s: len(list_kb_records(con, s.name)))  # the KB a curator works on
    matcher = build_matcher(con)
    linker = default_linker(con, matcher)
    engine = open_served(con, work / "models", serving_key(con, schema.name))
    records = [r for r in list_kb_records(con, schema.name)]
    stored = {row[0] for row in con.execute("SELECT pmid FROM documents").fetchall()}
    random.Random(seed).shuffle(records)
    graded, typed = 0, set()
    for record in records:
        values = {t: record.get(t) for t in schema.query_types if record.get(t)}
        if len(typed) >= CLICK_QUERIES or tuple(sorted(values.items())) in typed:
            continue
        typed.add(tuple(sorted(values.items())))
        cited = {r.pmid for r in records if all(r.get(t) == v for t, v in values.items())}
        for row in curate_search(con, engine, matcher, schema, values, k=SHOWN, linker=linker).rows:
            grade = Grade.COMPLETE if row.pmid in cited else Grade.NOT_RELEVANT
            record_decision(con, "simulated curator", schema, values, row.pmid, grade)
            graded += 1
    clock = time.perf_counter()
    outcome = ranker_update.update_and_activate(con, engine, matcher, linker, schema, work / "models")
    seconds = time.perf_counter() - clock
    panel = ranker_update.ranker_panel(con, engine.version, schema, work / "models")
    plain = replace(engine, learned=None)
    if getattr(engine, "learned", None) is None:  # the gate kept it out: time the page with it attached anyway
        engine = replace(engine, learned=LearnedStage(panel_model(panel, work / "models", schema.name)))
    timings: dict[str, list[float]] = {"plain": [], "learned": []}
    for values in [dict(v) for v in typed]:
        for name, served in (("plain", plain), ("learned", engine)):
            start = time.perf_counter()
            curate_search(con, served, matcher, schema, values, k=20, linker=linker)
            timings[name].append(1000 * (time.perf_counter() - start))
    p95 = {name: round(sorted(t)[int(0.95 * (len(t) - 1))], 1) for name, t in timings.items()}
    documents = con.execute("SELECT count(*) FROM documents").fetchone()[0]
    con.close()
    return {"store": f"the sample ({documents} abstracts, {len(records)} KB records of {schema.name}, the installed "
                     "vocabularies, not annotated)", "load_sample_s": round(loaded, 1), "queries_graded": len(typed),
            "decisions": graded, "click_to_serving_s": round(seconds, 2), "activated": outcome.activated,
            "verdict": outcome.verdict, "page_search_ms_p95": p95["learned"],
            "page_search_ms_p95_without_stage": p95["plain"], "page_searches": len(typed),
            "kb_records_citing_a_stored_abstract": sum(1 for r in records if r.pmid in stored)}


def panel_model(panel, models: Path, schema: str):
    """The newest kept update's model (what the page would serve once the gate lets it)."""
    from curation.ranking.history import list_updates, ranker_home

    return next(u.model for u in list_updates(ranker_home(models, None, schema))[0] if u.name == panel.updates[0].name)


def main(argv: list[str] | None = None) -> int:
    settings = load_settings()
    parser = scaffold.parser(__doc__, "feedback", data_dir=True, seed=13)
    parser.add_argument("--cache", type=Path, help="candidate lists kept here (bench/ranker.py's --cache)")
    parser.add_argument("--test", action="store_true", help="also the test split's curve (read once)")
    parser.add_argument("--no-click", action="store_true", help="leave out click → serving on the sample store")
    args = parser.parse_args(argv)
    started, load = time.time(), scaffold.machine("cpu_count", "load_average_at_start")
    benchmark = load_benchmark(args.data_dir, seed=args.seed)
    engine = Retriever(lexical=LexicalIndex.build(list(benchmark.corpus)), version="bm25")
    section = {"date": scaffold.now(), **curve(args, benchmark, engine, {})}
    old = scaffold.read(args.out).get("learning_curve") or {}
    if args.no_click and "click" in old:
        section["click"] = old["click"]  # the sample store's figures of an earlier run, kept
    if not args.no_click:
        try:
            section["click"] = click(settings, args.seed)
        except Exception as exc:  # the curve is still written; the failure is named in the JSON
            section["click_error"] = f"{type(exc).__name__}: {exc}"
        print(section.get("click") or section["click_error"], flush=True)
    section["params"] = {"seed": args.seed, **load, **scaffold.machine("load_average_at_end")}
    section["timings_s"] = {"total": round(time.time() - started, 1)}
    split = "test" if args.test else "dev"
    goals = {f"learning_curve_monotone{'' if args.test else '_dev'}": goal(section[f"{split}_monotone"], 1, ">="),
             **click_goals(section)}
    scaffold.write(args.out, section, section="learning_curve", goals=goals)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def click_goals(section: dict) -> dict:
    """The update's goals from the curve's ``click`` run: ``ranker_click_to_serving_s_cpu`` is met only when the
    update was activated and served within 60 s (an update the gate could not judge serves nothing, however fast;
    ``click_to_serving_s_cpu`` stays the encoder retrain's, written by bench/feedback.py)."""
    if "click" not in section:
        return {}
    c = section["click"]
    return {
        "ranker_click_to_serving_s_cpu": goal(c["click_to_serving_s"], 60.0, "<=",
                                              met=bool(c.get("activated")) and c["click_to_serving_s"] <= 60.0),
        "ranker_page_p95_ms": goal(c["page_search_ms_p95"], 150.0, "<="),
    }
