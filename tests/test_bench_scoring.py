"""The bench scripts' shared scoring (bench/_benchmark.py): per-query figures, the report, leak figures and goals.

A keyword "retriever" returns each query's relevant documents for half the queries and nothing for the
others, so every figure is known in advance.
"""

from __future__ import annotations

import json

import pytest

from bench._benchmark import evaluate_system, goal, goals_of, leaks, pooled, renamed_queries, report_forms
from curation.config import PROJECT_ROOT
from curation.learning.benchmark import FORM_NAMES, build_benchmark

FIXTURE = PROJECT_ROOT / "tests" / "fixtures" / "bench"


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return build_benchmark(FIXTURE, seed=13, split_file=tmp_path_factory.mktemp("split") / "split.json")


def oracle(bench, split, hit_every=1):
    """Returns each query's relevant documents (score 1) for every ``hit_every``-th query id, nothing else."""
    relevant = {}
    for kind in bench.kinds():
        relevant.update(bench.query_set(split, kind, "canonical").qrels)

    def retrieve(queries):
        out = {}
        for i, qid in enumerate(sorted(queries)):
            out[qid] = {pmid: 1.0 for pmid in relevant[qid]} if i % hit_every == 0 else {}
        return out

    return retrieve


def test_evaluate_system_scores_every_form_and_kind_per_query(bench):
    split = "test"
    perfect = evaluate_system(oracle(bench, split), bench, split)
    assert set(perfect) == set(FORM_NAMES)
    for form in FORM_NAMES:
        for kind in bench.kinds():
            figures = perfect[form][kind]
            queries = bench.query_set(split, kind, form).queries
            assert set(figures["ndcg@10"]) == set(queries)
            assert all(v == 1.0 for v in figures["ndcg@10"].values())
    half = evaluate_system(oracle(bench, split, hit_every=2), bench, split)
    ndcg = pooled(half["canonical"])["ndcg@10"]
    assert sorted(set(ndcg.values())) == [0.0, 1.0] or len(ndcg) == 1


def test_report_forms_gives_intervals_tests_and_pools(bench):
    split = "test"
    systems = {"bm25": evaluate_system(oracle(bench, split, hit_every=2), bench, split),
               "perfect": evaluate_system(oracle(bench, split), bench, split)}
    renamed = renamed_queries(bench, split)
    report = report_forms(systems, baseline="bm25", renamed=renamed)
    json.dumps(report)  # plain JSON
    entry = report["canonical"]["all"]
    n = sum(len(bench.query_set(split, k, "canonical").queries) for k in bench.kinds())
    assert entry["queries"] == n
    ndcg = entry["ndcg@10"]
    assert ndcg["systems"]["perfect"]["mean"] == 1.0
    low, high = ndcg["systems"]["bm25"]["ci95"]
    assert low <= ndcg["systems"]["bm25"]["mean"] <= high
    assert ndcg["comparisons"]["perfect_vs_bm25"]["difference"] > 0
    assert report["reworded"]["all_renamed"]["queries"] == len(renamed)


def test_leaks_and_goals_are_computed_from_the_split(bench):
    leak = leaks(bench)
    assert set(leak) == {"dev", "test"}
    for split in leak.values():
        for form in FORM_NAMES:
            assert split[form]["positive_docs_in_train"] == 0.0
            assert split[form]["identical_query_texts"] == 0.0
    goals = goals_of(bench, leak)
    assert goals["leak_test_positive_docs_in_train"] == {"value": 0.0, "target": 0, "op": "<=", "met": True}
    variants = len(bench.query_set("test", "gene_variant", "canonical").queries)
    assert goals["gene_variant_test_queries"]["value"] == variants
    assert goals["gene_variant_test_queries"]["met"] is (variants >= 100)  # a tiny fixture: missed
    assert goal(0.2, 0, "<=")["met"] is False and goal(5, 4, ">=")["met"] is True


# --- the annotation queue's orders (bench/_queue_orders.py) ----------------------------------------


def _curve(*ndcgs):
    return [{"decisions": 25 * (i + 1), "ndcg@10": n} for i, n in enumerate(ndcgs)]


def test_the_queue_share_is_the_decisions_uncertainty_needs_over_those_random_needs():
    from bench._queue_orders import decisions_to_reach, share_goal

    runs = {"uncertainty": {"curve": _curve(0.52, 0.56, 0.57)}, "random": {"curve": _curve(0.50, 0.53, 0.54, 0.56)}}
    assert decisions_to_reach(runs["uncertainty"]["curve"], 0.5) == 50  # +0.06 at the second round
    assert decisions_to_reach(runs["random"]["curve"], 0.5) == 100
    entry, reached = share_goal(runs, 0.5)
    assert entry == {"value": 0.5, "target": 0.6, "op": "<=", "met": True}
    assert reached["decisions_to_gain"] == {"uncertainty": 50, "random": 100}


def test_the_queue_share_is_undefined_when_an_order_never_reaches_the_gain():
    from bench._queue_orders import share_goal

    runs = {"uncertainty": {"curve": _curve(0.51, 0.52)}, "random": {"curve": _curve(0.49, 0.50)}}
    entry, reached = share_goal(runs, 0.5)
    assert entry["value"] is None and entry["met"] is False
    assert reached["decisions_to_gain"] == {"uncertainty": None, "random": None}
    assert reached["best_gain"] == {"uncertainty": 0.02, "random": 0.0}
