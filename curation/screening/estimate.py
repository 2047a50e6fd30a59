"""How many relevant abstracts a topic still holds among the unread, and whether it is safe to stop.

Two methods, shown side by side because neither is exact:

- **model estimate** (:func:`model_estimate`): the sum of the learner's prevalence-corrected probabilities over the
  unread candidates. It is read from the model the queue is ranked by, so it is as good as that model; with few
  grades it is rough, and ``bench/screening.py`` measures its error.
- **stopping rule** (:func:`stopping_test`): the hypergeometric test of Callaghan & Müller-Hansen (2020,
  "Statistical stopping criteria for automated screening in systematic reviews", the *buscar* rule). The last
  ``k`` candidates read are treated as a random sample of the candidates that were unread before them (a
  conservative assumption: the learner put the likelier ones first). If recall were below the target, the
  unread would hold at least a certain number of relevant ones; the p-value is the chance of finding as few as
  were found in that sample, minimised over ``k``. Below 0.05 the curator can stop with recall >= the target at
  95% confidence.

Also :func:`since_last_relevant`: how many were read since the last relevant one (the heuristic many curators use).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

RECALL_TARGET = 0.95
ALPHA = 0.05


@dataclass(frozen=True)
class Remaining:
    """What the page says about the unread.

    Attributes:
        read: candidates graded.
        found: relevant among them (complete or partial).
        unread: candidates not graded.
        model_estimate: expected relevant among the unread (None: the learner has not been fitted).
        p_value: the stopping rule's p-value for recall < ``target`` (1.0: cannot reject yet).
        target: the recall target of the rule.
        since_last_relevant: read since the last relevant (all read when none is relevant).
    """

    read: int
    found: int
    unread: int
    model_estimate: float | None
    p_value: float
    target: float
    since_last_relevant: int

    @property
    def safe_to_stop(self) -> bool:
        return self.unread == 0 or self.p_value < ALPHA


def model_estimate(probability: np.ndarray | None, unread: np.ndarray) -> float | None:
    """Expected relevant among ``unread`` (a boolean mask) from the model's probabilities (None: not fitted)."""
    if probability is None:
        return None
    return float(np.asarray(probability, dtype=np.float64)[np.asarray(unread, dtype=bool)].sum())


def stopping_test(read_relevant: Sequence[bool], total: int, target: float = RECALL_TARGET) -> float:
    """The buscar p-value for "recall is below ``target``" after reading ``read_relevant`` (in reading order) of
    ``total`` candidates (1.0 when nothing relevant has been found: there is nothing to test)."""
    from scipy.stats import hypergeom

    flags = np.asarray(read_relevant, dtype=bool)
    seen, found = len(flags), int(flags.sum())
    if seen >= total:
        return 0.0
    if found == 0:
        return 1.0
    least_total = math.floor(found / target) + 1  # the fewest relevant overall with which recall < target
    best = 1.0
    tail = np.cumsum(flags[::-1])  # relevant among the last k read, k = 1..seen
    for k in range(1, seen + 1):
        found_k = int(tail[k - 1])
        population = total - seen + k  # unread when the sample began
        relevant_then = least_total - (found - found_k)  # relevant in that population under the null
        if relevant_then > population:
            return 0.0  # the null cannot hold: there is no room for that many
        best = min(best, float(hypergeom.cdf(found_k, population, relevant_then, k)))
    return best


def since_last_relevant(read_relevant: Sequence[bool]) -> int:
    """How many were read after the last relevant one (every read when none was)."""
    flags = list(read_relevant)
    for back, flag in enumerate(reversed(flags)):
        if flag:
            return back
    return len(flags)


def remaining(read_relevant: Sequence[bool], total: int, probability: np.ndarray | None, unread: np.ndarray,
              target: float = RECALL_TARGET) -> Remaining:
    """Everything the page says about the unread, from the grades in reading order and the learner's state."""
    flags = [bool(f) for f in read_relevant]
    return Remaining(len(flags), sum(flags), total - len(flags), model_estimate(probability, unread),
                     stopping_test(flags, total, target), target, since_last_relevant(flags))
