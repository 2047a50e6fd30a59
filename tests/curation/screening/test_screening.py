"""The screening learner, its reading metrics and its estimate of what remains."""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from curation.screening import estimate, metrics
from curation.screening.learner import LearnerConfig, ScreeningLearner
from curation.screening.pool import TopicPool
from curation.screening.simulation import random_order, simulate, static_prior

RESULTS = Path(__file__).resolve().parents[3] / "bench" / "results" / "screening.json"


def test_wss_recall_atd_loss_by_hand():
    order = [True, False, True, False, False, False, False, False, False, True]  # 3 relevant of 10
    # WSS@95 needs ceil(0.95 * 3) = 3 relevant: found at the 10th read; (10 - 10) / 10 - 0.05.
    assert metrics.wss(order) == pytest.approx(-0.05)
    assert metrics.wss(order, recall=0.6) == pytest.approx((10 - 3) / 10 - 0.4)  # 2 found after 3 reads
    assert metrics.recall_after(order, 0.1) == pytest.approx(1 / 3)
    assert metrics.recall_after(order, 0.2) == pytest.approx(1 / 3)
    assert metrics.atd(order) == pytest.approx((0 + 2 + 9) / 3 / 10)
    assert metrics.loss([True] * 3 + [False] * 7) == 0.0
    assert metrics.loss([False] * 7 + [True] * 3) == pytest.approx(1.0)
    assert 0 < metrics.loss(order) < 1
    assert math.isnan(metrics.wss([False, False]))
    assert metrics.curve(order).tolist() == [1, 1, 2, 2, 2, 2, 2, 2, 2, 3]


def _pool(n: int = 300, seed: int = 0) -> tuple[TopicPool, np.ndarray]:
    """Relevant abstracts share words a learner can find; the static order is random with respect to them."""
    rng = np.random.default_rng(seed)
    words = [f"word{i}" for i in range(400)]
    relevant = rng.random(n) < 0.1
    texts = [" ".join(rng.choice(words, 60)) + (" drug induced hepatotoxicity caused" if r else "") for r in relevant]
    evidence = np.c_[relevant + rng.normal(0, 0.7, n), rng.normal(size=n)]
    evidence[rng.random(evidence.shape) < 0.2] = np.nan
    pool = TopicPool(tuple(str(i) for i in range(n)), tuple(texts), evidence, ("signal", "noise"))
    return pool, np.where(relevant, 2, 0)


def test_warm_start_keeps_the_static_order_until_both_classes_are_graded():
    pool, gains = _pool()
    learner = ScreeningLearner(pool)
    known = np.full(len(pool), -1)
    known[int(np.argmax(gains > 0))] = 2  # one positive, no negative
    ranking = learner.rank(known)
    assert not ranking.fitted and ranking.probability is None
    assert list(ranking.order) == [i for i in range(len(pool)) if known[i] < 0]


def test_grades_move_relevant_candidates_up():
    pool, gains = _pool()
    known = np.full(len(pool), -1)
    for i in np.flatnonzero(gains > 0)[:3].tolist() + np.flatnonzero(gains == 0)[:10].tolist():
        known[i] = gains[i]
    ranking = ScreeningLearner(pool, LearnerConfig(prior_weight=0.0)).rank(known)
    assert ranking.fitted
    first = ranking.order[:20]
    assert sum(gains[i] > 0 for i in first) >= 8  # ~2 by chance: prevalence among the unread is ~10%
    by_pmid = ScreeningLearner(pool, LearnerConfig(prior_weight=0.0)).rank(
        {pool.pmids[i]: int(known[i]) for i in np.flatnonzero(known >= 0)} | {"not-a-candidate": 2})
    assert by_pmid.order == ranking.order


def test_uncertain_strategy_asks_for_probabilities_near_one_half():
    pool, gains = _pool()
    known = np.full(len(pool), -1)
    for i in np.flatnonzero(gains > 0)[:3].tolist() + np.flatnonzero(gains == 0)[:10].tolist():
        known[i] = gains[i]
    ranking = ScreeningLearner(pool, LearnerConfig(strategy="uncertain")).rank(known)
    distances = [abs(ranking.probability[i] - 0.5) for i in ranking.order]
    assert distances == sorted(distances)
    with pytest.raises(ValueError, match="unknown query strategy"):
        LearnerConfig(strategy="lowest")


def test_simulation_reads_the_prior_first_and_beats_the_static_order():
    pool, gains = _pool()
    prior = static_prior(gains)
    run = simulate(pool, gains, prior)
    assert sorted(run.order) == list(range(len(pool)))
    assert list(run.order[: len(prior)]) == list(prior)
    learner = metrics.summary(gains[list(run.order)] > 0)
    static = metrics.summary(gains > 0)
    assert learner["wss@95"] > static["wss@95"] + 0.2
    assert learner["recall@10%"] > 0.25  # random: 0.10
    rand = metrics.summary(gains[list(random_order(len(pool), 1))] > 0)
    assert learner["atd"] < rand["atd"]


def test_pool_rejects_misaligned_rows():
    with pytest.raises(ValueError, match="one text per candidate"):
        TopicPool(("1", "2"), ("a",))
    with pytest.raises(ValueError, match="evidence has 1 rows"):
        TopicPool(("1", "2"), ("a", "b"), np.zeros((1, 2)))


def test_stopping_rule_rejects_low_recall_only_after_a_long_dry_run():
    total = 1000
    early = [True] * 100 + [False] * 10  # 100 found, the last 10 read were irrelevant
    late = [True] * 100 + [False] * 600
    assert estimate.stopping_test(early, total) > 0.05
    assert estimate.stopping_test(late, total) < 0.05
    assert estimate.stopping_test([False] * 50, total) == 1.0
    assert estimate.since_last_relevant(late) == 600
    assert estimate.since_last_relevant([False, False]) == 2
    state = estimate.remaining(late, total, np.full(total, 0.01), np.r_[np.zeros(700, bool), np.ones(300, bool)])
    assert state.safe_to_stop and state.found == 100 and state.unread == 300
    assert state.model_estimate == pytest.approx(3.0)


def test_estimate_tracks_what_remains_in_a_simulated_screening():
    pool, gains = _pool(seed=3)
    run = simulate(pool, gains, static_prior(gains))
    read = list(run.order[:60])
    known = np.full(len(pool), -1)
    known[read] = gains[read]
    ranking = ScreeningLearner(pool).rank(known)
    unread = known < 0
    guessed = estimate.model_estimate(ranking.probability, unread)
    truth = int((gains[unread] > 0).sum())
    # Rough, as the module says: a model fitted on 60 grades squeezes its probabilities towards one half, so once
    # the relevant ones are read it over-estimates what remains (never under here); it stays below the unread.
    assert truth <= guessed < 0.5 * unread.sum()


def test_defaults_are_the_benchmarks_dev_choice():
    if not RESULTS.exists():
        pytest.skip("bench/results/screening.json not written yet (python -m bench.screening --test)")
    chosen = json.loads(RESULTS.read_text())["dev_choice"]["chosen"]
    assert chosen == asdict(LearnerConfig())


def test_the_rankers_leaf_size_is_the_session_gates_dev_choice():
    """The cross-topic sessions' dev grid (bench/_screening_gate.py) chose the leaf size the product trains with."""
    from curation.learning.ranker.training import PARAMS

    if not RESULTS.exists():
        pytest.skip("bench/results/screening.json not written yet (python -m bench.screening --test)")
    grid = json.loads(RESULTS.read_text())["gate"]["dev_grid"]
    assert grid["chosen_min_child_samples"] == PARAMS["min_child_samples"]
