"""Screening simulated from known answers: the reading order a learner gives when every grade it asks for is
the answer key's (what ASReview's simulation mode does, and what ``python -m curation screen`` and
``bench/screening.py`` run).

The learner starts from the prior knowledge (positions already graded, in that order), then reads the next
candidate it ranks first, takes its grade from the key, refits, and so on. Once every relevant candidate has been
read the rest of the order no longer changes any metric of :mod:`curation.screening.metrics`, so the simulation
stops refitting there and appends the unread in their last order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from curation.screening.learner import LearnerConfig, ScreeningLearner
from curation.screening.pool import TopicPool


@dataclass(frozen=True)
class SimulatedRun:
    """One simulated screening.

    Attributes:
        order: every candidate's position, in reading order (the prior first).
        rerank_seconds: the time of each refit and re-rank.
    """

    order: tuple[int, ...]
    rerank_seconds: tuple[float, ...]


def simulate(pool: TopicPool, gains: Sequence[int], prior: Sequence[int] = (),
             config: LearnerConfig | None = None) -> SimulatedRun:
    """Screen ``pool`` with the learner, grading each read candidate with ``gains`` (2 / 1 / 0 per position).

    Args:
        pool: the topic's candidates, static order.
        gains: (n,) the answer key's gain of each candidate.
        prior: positions read first, in this order (e.g. the static order's first relevant and first irrelevant).
    """
    key = np.asarray(gains, dtype=np.int64)
    if key.shape != (len(pool),):
        raise ValueError(f"the answer key has {key.shape[0]} grades for {len(pool)} candidates")
    learner = ScreeningLearner(pool, config or LearnerConfig())
    known = np.full(len(pool), -1, dtype=np.int64)
    order: list[int] = []
    for position in dict.fromkeys(int(p) for p in prior):
        known[position] = key[position]
        order.append(position)
    left = int((key > 0).sum()) - int((known > 0).sum())
    seconds: list[float] = []
    ranking = learner.rank(known)
    seconds.append(ranking.seconds)
    while ranking.order:
        if left == 0:  # every relevant read: the rest cannot change a metric
            order.extend(ranking.order)
            break
        nxt = ranking.order[0]
        known[nxt] = key[nxt]
        order.append(nxt)
        left -= int(key[nxt] > 0)
        ranking = learner.rank(known)
        seconds.append(ranking.seconds)
    return SimulatedRun(tuple(order), tuple(seconds))


def static_prior(gains: Sequence[int]) -> tuple[int, ...]:
    """The prior knowledge both learners get: the static order's first relevant and first irrelevant positions."""
    key = np.asarray(gains)
    first = [int(np.flatnonzero(key > 0)[0])] if (key > 0).any() else []
    first += [int(np.flatnonzero(key == 0)[0])] if (key == 0).any() else []
    return tuple(sorted(first))


def random_order(n: int, seed: int) -> tuple[int, ...]:
    """A random reading order (the baseline screening is judged against)."""
    return tuple(int(i) for i in np.random.default_rng(seed).permutation(n))

