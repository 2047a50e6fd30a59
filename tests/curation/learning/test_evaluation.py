"""NDCG, MAP and EntityRecall against values computed by hand."""

from __future__ import annotations

import math

import pytest

from curation.learning.evaluation import AnswerKey, entity_recall, entity_recall_per_query, evaluate, ir_metrics


def test_ndcg_and_map_worked_example():
    # q1: relevant d1, d3; ranked d1, d2, d3.
    #   DCG = 1/log2(2) + 1/log2(4) = 1.5;  IDCG = 1 + 1/log2(3) = 1.63093  →  NDCG = 0.91972
    #   AP = (P@1 + P@3) / 2 relevant = (1 + 2/3) / 2 = 0.83333
    # q2: relevant d4; nothing retrieved → 0 for both. Means: NDCG 0.45986, MAP 0.41667.
    run = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {}}
    qrels = {"q1": {"d1": 1, "d3": 1}, "q2": {"d4": 1}}
    ndcg_q1 = 1.5 / (1 + 1 / math.log2(3))
    scores = ir_metrics(run, qrels)
    assert scores["ndcg@10"] == pytest.approx(ndcg_q1 / 2)
    assert scores["map@10"] == pytest.approx((1 + 2 / 3) / 2 / 2)
    assert set(scores) == {"ndcg@10", "map@10", "ndcg@50", "map@50"}


def test_map_divides_by_all_relevant_documents():
    # Relevant d1, d3, d4; only d1 retrieved, at rank 2: AP = (1/2) / 3 = 0.16667.
    # NDCG = (1/log2(3)) / (1 + 1/log2(3) + 1/log2(4)) = 0.63093 / 2.13093 = 0.29608
    scores = ir_metrics({"q": {"d2": 2.0, "d1": 1.0}}, {"q": {"d1": 1, "d3": 1, "d4": 1}})
    assert scores["map@10"] == pytest.approx(1 / 6)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert scores["ndcg@10"] == pytest.approx((1 / math.log2(3)) / idcg)


def test_cutoff_counts_only_the_top_k():
    # The one relevant document is eleventh: nothing at 10; at 50, NDCG = 1/log2(12), AP = 1/11.
    run = {"q": {f"x{i:02d}": float(100 - i) for i in range(11)}}
    scores = ir_metrics(run, {"q": {"x10": 1}})
    assert scores["ndcg@10"] == 0.0 and scores["map@10"] == 0.0
    assert scores["ndcg@50"] == pytest.approx(1 / math.log2(12))
    assert scores["map@50"] == pytest.approx(1 / 11)


def test_query_missing_from_run_scores_zero_and_unjudged_queries_are_ignored():
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 0}}  # q3 has no relevant document
    scores = ir_metrics({"q1": {"d1": 1.0}}, qrels)
    assert scores["ndcg@10"] == pytest.approx(0.5)  # q1 = 1, q2 = 0; q3 left out


def test_no_relevant_document_is_an_error():
    with pytest.raises(ValueError, match="no query has a relevant document"):
        ir_metrics({"q": {"d": 1.0}}, {"q": {"d": 0}})


KEY = AnswerKey(
    answers={"q1": {"C1", "C2"}, "q2": {"C3"}, "q3": set()},
    query_concepts={"q1": {"G1"}, "q2": {"G2"}, "q3": {"G3"}},
    doc_concepts={"d1": {"G1", "C1"}, "d2": {"C2"}, "d3": {"G1", "C2"}, "d4": {"G2"}},
)


def test_entity_recall_worked_example():
    # q1 (answers C1, C2; gene G1), ranked d1 > d2 > d3:
    #   @1: d1 has G1 and C1 → 1/2.   @2: d2 has C2 but not G1, so it does not count → 1/2.
    #   @3: d3 has G1 and C2 → 2/2.
    # q2 (answer C3, gene G2), ranked d4: d4 has G2 but not C3 → 0.   q3 has no answers: left out.
    run = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d4": 1.0}, "q3": {"d1": 1.0}}
    assert entity_recall_per_query(run, KEY, 1) == {"q1": 0.5, "q2": 0.0}
    assert entity_recall_per_query(run, KEY, 2) == {"q1": 0.5, "q2": 0.0}
    assert entity_recall_per_query(run, KEY, 3) == {"q1": 1.0, "q2": 0.0}
    assert entity_recall(run, KEY, 3) == pytest.approx(0.5)


def test_evaluate_adds_entity_recall_at_each_cutoff():
    run = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    qrels = {"q1": {"d3": 1}}
    key = AnswerKey({"q1": {"C1", "C2"}}, {"q1": {"G1"}}, KEY.doc_concepts)
    scores = evaluate(run, qrels, key)
    assert scores["entity_recall@10"] == 1.0 and scores["entity_recall@50"] == 1.0
    assert scores["ndcg@10"] == pytest.approx(1 / math.log2(4))  # the relevant d3 is third
    assert "entity_recall@10" not in evaluate(run, qrels)
