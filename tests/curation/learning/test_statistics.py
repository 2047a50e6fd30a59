"""Per-query scores, bootstrap intervals, paired tests and Holm's correction against values worked by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from curation.learning.evaluation import AnswerKey, entity_recall, ir_metrics
from curation.learning.statistics import Comparison, Interval, bootstrap_ci, holm, paired_test, per_query, summarise

# q1: relevant d1, d3, ranked d1, d2, d3: NDCG = 1.5 / (1 + 1/log2(3)), AP = (1 + 2/3) / 2.
# q2: judged but missing from the run: 0. q3: relevant d9 (x is judged 0), ranked second: NDCG = 1/log2(3), AP = 1/2.
# q4: no relevant document, so not judged; "extra" is in the run only and is ignored.
RUN = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q3": {"x": 2.0, "d9": 1.0}, "extra": {"d1": 1.0}}
QRELS = {"q1": {"d1": 1, "d3": 1}, "q2": {"d4": 1}, "q3": {"d9": 2, "x": 0}, "q4": {"d1": 0}}


def test_per_query_ndcg_and_map_by_hand():
    ndcg = per_query(RUN, QRELS, "ndcg@10")
    assert set(ndcg) == {"q1", "q2", "q3"}
    assert ndcg["q1"] == pytest.approx(1.5 / (1 + 1 / math.log2(3)))
    assert ndcg["q2"] == 0.0
    assert ndcg["q3"] == pytest.approx(1 / math.log2(3))
    ap = per_query(RUN, QRELS, "map@50")
    assert ap == pytest.approx({"q1": (1 + 2 / 3) / 2, "q2": 0.0, "q3": 0.5})
    assert per_query(RUN, QRELS, "recall@50") == pytest.approx({"q1": 1.0, "q2": 0.0, "q3": 1.0})


@pytest.mark.parametrize("metric", ["ndcg@10", "map@10", "ndcg@50", "map@50"])
def test_per_query_mean_is_the_ir_metrics_figure(metric):
    scores = per_query(RUN, QRELS, metric)
    assert sum(scores.values()) / len(scores) == pytest.approx(ir_metrics(RUN, QRELS)[metric])


def test_per_query_errors():
    with pytest.raises(ValueError, match="no query has a relevant document"):
        per_query(RUN, {"q4": {"d1": 0}}, "ndcg@10")
    with pytest.raises(ValueError, match="answer key"):
        per_query(RUN, QRELS, "entity_recall@10")


KEY = AnswerKey(
    answers={"q1": ["A", "B"], "q2": ["C"], "q3": []},
    query_concepts={"q1": ["G1"], "q2": ["G2"], "q3": ["G3"]},
    doc_concepts={"d1": ["G1", "A"], "d2": ["B"], "d3": ["G1", "B"], "d5": ["G2", "C"]},
)
ER_RUN = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d6": 1.0, "d5": 0.5}}


def test_entity_recall_per_query_by_hand():
    # q1: d1 gives A (with G1); d2 mentions B but not G1; d3 gives B.  q2: d5 (second) gives C.
    # q3 has no answers and is left out.
    assert per_query(ER_RUN, {}, "entity_recall@1", KEY) == {"q1": 0.5, "q2": 0.0}
    assert per_query(ER_RUN, {}, "entity_recall@2", KEY) == {"q1": 0.5, "q2": 1.0}
    at3 = per_query(ER_RUN, {}, "entity_recall@3", KEY)
    assert at3 == {"q1": 1.0, "q2": 1.0}
    assert sum(at3.values()) / len(at3) == entity_recall(ER_RUN, KEY, 3)
    with pytest.raises(ValueError, match="positive whole number"):
        per_query(ER_RUN, {}, "entity_recall@ten", KEY)


def test_bootstrap_ci_contains_the_mean_and_narrows_with_more_data():
    rng = np.random.default_rng(0)
    small = rng.uniform(0, 1, 20)
    large = rng.uniform(0, 1, 500)
    few, many = bootstrap_ci(small), bootstrap_ci(large)
    for values, interval in ((small, few), (large, many)):
        assert interval.mean == pytest.approx(float(np.mean(values)))
        assert interval.low < interval.mean < interval.high
        assert interval.n == len(values)
    assert many.high - many.low < (few.high - few.low) / 2
    # Uniform(0, 1): standard error sqrt(1/12 / 500) = 0.0129, so the 95% interval is about 0.05 wide.
    assert 0.03 < many.high - many.low < 0.07
    assert bootstrap_ci(small) == few  # seeded: reproducible
    assert bootstrap_ci(small, confidence=0.5).high - bootstrap_ci(small, confidence=0.5).low < few.high - few.low


def test_bootstrap_ci_accepts_a_per_query_mapping_and_rounds():
    interval = bootstrap_ci({"q1": 0.123456, "q2": 0.5, "q3": 0.987654})
    assert isinstance(interval, Interval) and interval.n == 3
    out = interval.to_dict()
    assert out["mean"] == round((0.123456 + 0.5 + 0.987654) / 3, 4)
    assert set(out) == {"mean", "low", "high", "n"}
    assert all(v == round(v, 4) for v in out.values())


def test_bootstrap_ci_degenerate_cases():
    assert bootstrap_ci([0.7]) == Interval(mean=0.7, low=0.7, high=0.7, n=1)
    assert bootstrap_ci([0.3] * 5) == Interval(mean=0.3, low=0.3, high=0.3, n=5)
    with pytest.raises(ValueError, match="no values"):
        bootstrap_ci([])
    with pytest.raises(ValueError, match="finite"):
        bootstrap_ci([0.1, float("nan")])
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci([0.1, 0.2], confidence=95)


def _systems(n: int = 40) -> tuple[dict[str, float], dict[str, float]]:
    rng = np.random.default_rng(1)
    base = rng.uniform(0.2, 0.7, n)
    better = base + 0.1 + rng.normal(0, 0.05, n)
    return {f"q{i}": float(v) for i, v in enumerate(better)}, {f"q{i}": float(v) for i, v in enumerate(base)}


def test_paired_test_finds_a_clearly_better_system():
    better, base = _systems()
    result = paired_test(better, base)
    assert result.n == 40
    assert result.p_value < 0.05
    assert result.difference == pytest.approx(result.mean_a - result.mean_b)
    assert 0.05 < result.difference < 0.15
    assert "randomization" in result.test and "10000 resamples" in result.test
    reverse = paired_test(base, better)
    assert reverse.difference == pytest.approx(-result.difference) and reverse.p_value < 0.05


def test_paired_test_exact_sign_flip_by_hand():
    # Differences (1, 1, 1): of the 8 sign patterns only all-plus and all-minus reach |mean| = 1, so p = 2/8.
    result = paired_test({"a": 1.0, "b": 1.0, "c": 1.0}, {"a": 0.0, "b": 0.0, "c": 0.0})
    assert result.p_value == pytest.approx(0.25)
    assert result.test.endswith("exact")
    # Differences (0.5, -0.5, 0.2, -0.2): the observed mean difference is 0, which every sign pattern reaches, so p = 1.
    balanced = paired_test({"a": 0.5, "b": 0.0, "c": 0.2, "d": 0.0}, {"a": 0.0, "b": 0.5, "c": 0.0, "d": 0.2})
    assert balanced.difference == pytest.approx(0.0) and balanced.p_value == pytest.approx(1.0)


def test_paired_test_identical_systems():
    _, base = _systems()
    result = paired_test(base, dict(base))
    assert result.p_value == 1.0 and result.difference == 0.0
    assert isinstance(result, Comparison)
    assert json.loads(json.dumps(result.to_dict()))["p_value"] == 1.0


def test_paired_test_rejects_mismatched_or_empty_queries():
    better, base = _systems()
    shorter = dict(list(base.items())[:-2])
    with pytest.raises(ValueError, match="2 only in the first, 0 only in the second"):
        paired_test(better, shorter)
    with pytest.raises(ValueError, match="no queries"):
        paired_test({}, {})


def test_holm_known_values():
    adjusted = holm({"a": 0.01, "b": 0.04, "c": 0.03})
    assert list(adjusted) == ["a", "b", "c"]
    assert adjusted == pytest.approx({"a": 0.03, "b": 0.06, "c": 0.06})
    # Capped at 1 and monotone in the raw p-values: 2 * 0.5 = 1.0, then max(1.0, 0.6) = 1.0.
    assert holm({"x": 0.6, "y": 0.5}) == {"x": 1.0, "y": 1.0}
    # Monotone: 3 * 0.001 = 0.003, 2 * 0.02 = 0.04, then 1 * 0.021 is raised to the step before, 0.04.
    assert holm({"a": 0.001, "b": 0.02, "c": 0.021}) == pytest.approx({"a": 0.003, "b": 0.04, "c": 0.04})
    assert holm({}) == {}
    with pytest.raises(ValueError, match="must lie in"):
        holm({"a": 1.5})


def test_summarise_is_json_and_corrects_for_the_family():
    better, base = _systems()
    same = dict(base)
    summary = summarise({"bm25": base, "hybrid": better, "copy": same}, baseline="bm25", ci_resamples=500)
    assert json.loads(json.dumps(summary)) == summary
    assert summary["baseline"] == "bm25"
    assert set(summary["systems"]) == {"bm25", "hybrid", "copy"}
    bm25 = summary["systems"]["bm25"]
    assert bm25["n"] == 40 and bm25["ci95"][0] < bm25["mean"] < bm25["ci95"][1]
    assert bm25["mean"] == round(sum(base.values()) / 40, 4)
    assert set(summary["comparisons"]) == {"hybrid_vs_bm25", "copy_vs_bm25"}
    hybrid = summary["comparisons"]["hybrid_vs_bm25"]
    # Two comparisons: the smaller p-value doubles (Holm's first step).
    assert hybrid["p_holm"] == pytest.approx(min(1.0, 2 * hybrid["p_value"]), rel=1e-3)
    assert hybrid["p_holm"] < 0.05 and hybrid["difference"] > 0
    assert summary["comparisons"]["copy_vs_bm25"]["p_value"] == 1.0
    with pytest.raises(ValueError, match="baseline 'dense'"):
        summarise({"bm25": base}, baseline="dense")


def test_one_query_that_differs_has_p_value_one():
    comparison = paired_test({"q1": 1.0}, {"q1": 0.0})
    assert comparison.p_value == 1.0 and comparison.difference == 1.0 and comparison.n == 1
