"""Which order should the annotation queue ask in? Uncertainty vs random, simulated (bench/feedback.py --queue-orders).

Each order starts from the same store (the benchmark's train-split GDT records as the KB, the zero-shot
version active) and the same pool of relations: ``--pool`` train queries of the gene + disease and
gene-only kinds, typed with the KB's names. A round asks the queue of the Annotate page
(:func:`curation.review.least_sure.least_sure`, with the served ranking and the decisions so far)
for the pairs it would show next, in that order — the least sure first, or its random baseline — skips
those already graded, and a simulated annotator grades ``--round`` of them with the gold labels (complete
evidence when the abstract is relevant, else not relevant). Then a real retraining job runs on the KB
plus those decisions (``retraining.start_retrain`` → worker → ``poll_job``: the gate decides activation,
as in the product), and the version it built is evaluated on the test split: the served concept search
with that version's dense share (canonical form, every kind pooled), NDCG@10. No choice is made from
these figures; every setting is the queue's and the retraining job's own default.

``uncertainty_share_of_random_decisions``: the decisions the uncertainty order needs to reach a gain of
``target`` NDCG@10 over the zero-shot version, divided by those random order needs (<= 0.6 is the goal).
When either order never reaches it within the rounds run, the share is not defined: its value is null and
the section says which order reached what.
"""

from __future__ import annotations

import random
import shutil
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from bench import _concepts
from bench._benchmark import evaluate_system, pooled
from curation.grades import Grade
from curation.jobs import retraining
from curation.jobs.result import job_result
from curation.learning.benchmark import Benchmark
from curation.records import item_key
from curation.retrieval.relation_search import SearchOptions
from curation.review.least_sure import least_sure, ranking_mode
from curation.schemas import RelationSchema
from curation.store.decisions import list_decisions, record_decision
from curation.store.opening import open_store
from index.loading import open_retriever

ANNOTATOR = "simulated annotator"
GAIN_TARGET = 0.05
SHARE_TARGET = 0.6
QUEUE_DEPTH = 10  # hits per relation the queue looks at (the Curate page's first screen)


def relation_pool(benchmark: Benchmark, kinds: Mapping[str, tuple[str, ...]], size: int, seed: int
                  ) -> list[tuple[dict[str, str], frozenset[str]]]:
    """``size`` train relations (half of each kind) typed with the KB's names, each with its relevant PMIDs."""
    rng = random.Random(seed)
    names = benchmark.names
    pool = []
    for kind, types in kinds.items():
        query_set = benchmark.query_set("train", kind, "canonical")
        qids = sorted(query_set.queries)
        rng.shuffle(qids)
        for qid in qids[: size // len(kinds)]:
            first = query_set.records[qid][0]
            values = {t: names.canonical(t, c) for t, (_, c) in zip(types, first.entities, strict=True)}
            pool.append((values, frozenset(query_set.qrels[qid])))
    return pool


def served_ndcg(path: Path, benchmark: Benchmark, concept: _concepts.ConceptBench, k: int) -> float:
    """NDCG@10 of the served concept search with the version at ``path`` (its own dense share), test split,
    canonical form, every kind pooled."""
    retriever = open_retriever(path)
    served = _concepts.served_system(concept, retriever, benchmark, "test", SearchOptions(k=k))
    figures = pooled(evaluate_system(served, benchmark, "test", forms=("canonical",))["canonical"])["ndcg@10"]
    return round(sum(figures.values()) / len(figures), 4) if figures else 0.0


def _served_retriever(con, models_dir: Path, schema: RelationSchema):
    from curation.versions.serving import open_served, serving_key

    return open_served(con, models_dir, serving_key(con, schema.name))


def simulate_order(order: str, base_store: Path, work: Path, schema: RelationSchema, pool, benchmark: Benchmark,
                   concept: _concepts.ConceptBench, settings, request: Mapping[str, object], rounds: int,
                   per_round: int, k: int, retrain: Callable) -> dict:
    """One order: ``rounds`` × (``per_round`` decisions from the queue, a retraining job, an evaluation)."""
    db = work / f"{order}.duckdb"
    shutil.copyfile(base_store, db)
    con = open_store(db)
    relations = [tuple(sorted(values.items())) for values, _ in pool]
    relevant = {tuple(sorted(values.items())): pmids for values, pmids in pool}
    curve, graded = [], set()
    try:
        for round_no in range(1, rounds + 1):
            clock = time.time()
            retriever = _served_retriever(con, settings.models_dir, schema)
            decisions = list_decisions(con, schema=schema.name)
            asked, _ = least_sure(retriever, schema, relations, decisions, depth=QUEUE_DEPTH,
                                  limit=len(relations) * QUEUE_DEPTH, mode=ranking_mode(retriever), order=order,
                                  seed=ANNOTATOR)
            fresh = [u for u in asked if u.item not in graded][:per_round]
            for u in fresh:
                grade = Grade.COMPLETE if u.item.pmid in relevant[u.values] else Grade.NOT_RELEVANT
                graded.add(item_key(record_decision(con, ANNOTATOR, schema, dict(u.values), u.item.pmid, grade)))
            job, _, _ = retrain(con, settings, retraining.RetrainRequest(**request))
            result = job_result(job)
            ndcg = served_ndcg(Path(result.path), benchmark, concept, k)
            curve.append({"round": round_no, "decisions": len(graded),
                          "relevant": sum(1 for u in fresh if u.item.pmid in relevant[u.values]),
                          "version": result.version, "activated": bool(result.activated), "ndcg@10": ndcg,
                          "seconds": round(time.time() - clock, 1)})
            print(f"  {order} round {round_no}: {len(graded)} decisions, NDCG@10 {ndcg}", flush=True)
    finally:
        con.close()
    return {"order": order, "curve": curve}


def decisions_to_reach(curve: list[dict], before: float, target: float = GAIN_TARGET) -> int | None:
    """The decisions of the first round whose NDCG@10 is ``target`` above ``before``; None when none is."""
    return next((point["decisions"] for point in curve if point["ndcg@10"] - before >= target), None)


def share_goal(runs: Mapping[str, dict], before: float) -> tuple[dict[str, object], dict[str, object]]:
    """The goal entry and what each order reached."""
    needed = {order: decisions_to_reach(run["curve"], before) for order, run in runs.items()}
    best = {order: round(max((p["ndcg@10"] for p in run["curve"]), default=before) - before, 4)
            for order, run in runs.items()}
    value = None
    if needed.get("uncertainty") is not None and needed.get("random"):
        value = round(needed["uncertainty"] / needed["random"], 3)
    entry = {"value": value, "target": SHARE_TARGET, "op": "<=", "met": value is not None and value <= SHARE_TARGET}
    return entry, {"decisions_to_gain": needed, "best_gain": best, "gain_target": GAIN_TARGET}
