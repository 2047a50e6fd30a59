"""Fusion functions against worked examples computed by hand (in the comments)."""

from __future__ import annotations

import pytest

from index.fusion import SLATE_POINTS, rerank, rrf, slate_vote, top_k, weighted
from index.hits import ranked

# Two systems on one query q. A ranks d1 > d2 > d3; B ranks d3 > d1 (d2 absent).
A = {"q": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
B = {"q": {"d3": 0.9, "d1": 0.5}}


def test_rrf_worked_example_with_k0():
    # k = 0, ranks from 1:  d1 = 1/1 + 1/2 = 1.5;  d2 = 1/2 = 0.5;  d3 = 1/3 + 1/1 = 4/3
    fused = rrf([A, B], k=0)
    assert fused["q"] == pytest.approx({"d1": 1.5, "d2": 0.5, "d3": 4 / 3})
    assert [d for d, _ in ranked(fused["q"])] == ["d1", "d3", "d2"]


def test_rrf_default_k60_and_weights():
    # k = 60:  d1 = 1/61 + 1/62 = 0.032522;  d3 = 1/63 + 1/61 = 0.032266;  d2 = 1/62 = 0.016129
    fused = rrf([A, B])
    assert fused["q"]["d1"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["q"]["d3"] == pytest.approx(1 / 63 + 1 / 61)
    assert fused["q"]["d2"] == pytest.approx(1 / 62)
    # weights (1, 3): d3 = 1/63 + 3/61 = 0.065054 now beats d1 = 1/61 + 3/62 = 0.064780
    weighted_fused = rrf([A, B], weights=(1.0, 3.0))
    assert weighted_fused["q"]["d3"] == pytest.approx(1 / 63 + 3 / 61)
    assert ranked(weighted_fused["q"])[0][0] == "d3"
    with pytest.raises(ValueError, match="2 weights for 1 runs"):
        rrf([A], weights=(1.0, 1.0))


def test_rrf_keeps_queries_only_one_run_has():
    fused = rrf([A, {"other": {"x": 1.0}}], k=0)
    assert fused["other"] == {"x": 1.0}
    assert fused["q"] == pytest.approx({"d1": 1.0, "d2": 0.5, "d3": 1 / 3})


def test_slate_vote_points_and_cutoff():
    assert SLATE_POINTS == (25, 19, 15, 12, 10, 8, 6, 5, 4, 4)
    # Run one ranks a0 > a1 > ... > a10 (eleven documents); run two ranks a1 > a0.
    one = {"q": {f"a{i}": float(100 - i) for i in range(11)}}
    two = {"q": {"a1": 2.0, "a0": 1.0}}
    fused = slate_vote([one, two])["q"]
    # a0 = 25 + 19 = 44;  a1 = 19 + 25 = 44;  a2 = 15;  a8 = 4;  a9 = 4;  a10 is eleventh: no points at all
    assert fused["a0"] == 44 and fused["a1"] == 44
    assert fused["a2"] == 15 and fused["a8"] == 4 and fused["a9"] == 4
    assert "a10" not in fused
    # The 44-point tie is broken by doc id, so the order is deterministic.
    assert [d for d, _ in ranked(fused)][:3] == ["a0", "a1", "a2"]


def test_weighted_minmax_combination():
    # A: {d1: 10, d2: 5, d3: 0} → minmax 1, 0.5, 0.   B: {d2: 0.8, d4: 0.2} → 1, 0.
    # weights (0.7, 0.3): d1 = 0.7;  d2 = 0.35 + 0.3 = 0.65;  d3 = 0;  d4 = 0
    first = {"q": {"d1": 10.0, "d2": 5.0, "d3": 0.0}}
    second = {"q": {"d2": 0.8, "d4": 0.2}}
    fused = weighted([first, second], (0.7, 0.3))["q"]
    assert fused == pytest.approx({"d1": 0.7, "d2": 0.65, "d3": 0.0, "d4": 0.0})
    # (0.3, 0.7): d2 = 0.15 + 0.7 = 0.85 overtakes d1 = 0.3
    assert ranked(weighted([first, second], (0.3, 0.7))["q"])[0][0] == "d2"


def test_weighted_single_document_run_counts_fully():
    # A run with one document (max == min) gives it 1.0, not a division by zero.
    fused = weighted([{"q": {"d1": 7.0}}, {"q": {"d2": 0.5}}], (0.5, 0.5))["q"]
    assert fused == {"d1": 0.5, "d2": 0.5}


FIRST = {"q": {"d1": 9.0, "d2": 6.0, "d3": 3.0, "d4": 1.0}}
SECOND = {"q": {"d1": 0.1, "d2": 0.9, "d3": 0.5}}


def test_rerank_dense_order_inside_depth():
    # depth 3: candidates d1, d2, d3; minmax(second) = d1 0, d2 1, d3 0.5.
    # mix 1: score = 1 + second → d1 1.0, d2 2.0, d3 1.5; tail d4 = 1 - 1/2 = 0.5
    fused = rerank(FIRST, SECOND, depth=3, mix=1.0)["q"]
    assert fused == pytest.approx({"d1": 1.0, "d2": 2.0, "d3": 1.5, "d4": 0.5})
    assert [d for d, _ in ranked(fused)] == ["d2", "d3", "d1", "d4"]


def test_rerank_mix_blends_first_and_second():
    # minmax(first) over d1, d2, d3 = 1, 0.5, 0.   mix 0.5:
    # d1 = 1 + 0.5·0 + 0.5·1 = 1.5;  d2 = 1 + 0.5·1 + 0.5·0.5 = 1.75;  d3 = 1 + 0.5·0.5 + 0 = 1.25
    fused = rerank(FIRST, SECOND, depth=3, mix=0.5)["q"]
    assert fused["d1"] == pytest.approx(1.5)
    assert fused["d2"] == pytest.approx(1.75)
    assert fused["d3"] == pytest.approx(1.25)
    assert [d for d, _ in ranked(fused)] == ["d2", "d1", "d3", "d4"]
    # mix 0 keeps the first system's order exactly.
    assert [d for d, _ in ranked(rerank(FIRST, SECOND, depth=3, mix=0.0)["q"])] == ["d1", "d2", "d3", "d4"]


def test_rerank_candidate_missing_from_second_gets_its_floor():
    # second lacks d3: it counts as the lowest candidate score (0.1, d1's), so minmax: d1 0, d2 1, d3 0.
    fused = rerank(FIRST, {"q": {"d1": 0.1, "d2": 0.9}}, depth=3, mix=1.0)["q"]
    assert fused["d3"] == pytest.approx(1.0) and fused["d1"] == pytest.approx(1.0)
    assert ranked(fused)[0][0] == "d2"


def test_rerank_tail_stays_below_every_candidate_in_order():
    first = {"q": {f"d{i}": float(10 - i) for i in range(6)}}  # d0 > d1 > ... > d5
    fused = rerank(first, {"q": {}}, depth=2, mix=1.0)["q"]
    order = [d for d, _ in ranked(fused)]
    assert set(order[:2]) == {"d0", "d1"}
    assert order[2:] == ["d2", "d3", "d4", "d5"]
    assert min(fused["d0"], fused["d1"]) > max(fused[d] for d in order[2:])


def test_rerank_rejects_mix_outside_unit_interval():
    with pytest.raises(ValueError, match="mix must be in"):
        rerank(FIRST, SECOND, depth=3, mix=1.5)


def test_top_k_cuts_each_query():
    assert top_k({"q": {"a": 1.0, "b": 3.0, "c": 2.0}, "r": {}}, 2) == {"q": {"b": 3.0, "c": 2.0}, "r": {}}
