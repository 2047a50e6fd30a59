"""How much reading a screening order saves, as asreview-insights defines it.

Every function takes ``relevant``: one boolean per candidate in reading order (the first read first), and
treats the order as read to its end. With ``n`` candidates of which ``r`` are relevant:

- :func:`wss`: work saved over sampling at a recall level, ``(n - read) / n - (1 - recall)``, where ``read`` is
  the number read when ``ceil(recall * r)`` relevant have been found (Cohen et al. 2006; WSS@95 is ``recall=0.95``);
- :func:`recall_after`: the share of the relevant found after reading a share of the candidates;
- :func:`atd`: average time to discovery: the mean share of the candidates read before each relevant one is found;
- :func:`loss`: the normalised area between the order's recall curve and the best possible one (0: perfect,
  1: every relevant last; asreview-insights' Loss);
- :func:`curve`: relevant found after each read (the plot's y).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def _array(relevant: Sequence[bool]) -> np.ndarray:
    found = np.asarray(relevant, dtype=bool)
    if found.ndim != 1:
        raise ValueError("relevant must be one flag per candidate in reading order")
    return found


def curve(relevant: Sequence[bool]) -> np.ndarray:
    """(n,) relevant found after reading 1, 2, ..., n candidates."""
    return np.cumsum(_array(relevant)).astype(np.int64)


def wss(relevant: Sequence[bool], recall: float = 0.95) -> float:
    """Work saved over sampling at ``recall`` (NaN when nothing is relevant)."""
    found = _array(relevant)
    n, r = len(found), int(found.sum())
    if r == 0:
        return math.nan
    needed = math.ceil(recall * r - 1e-9)
    read = int(np.searchsorted(curve(found), needed) + 1)  # reads until ``needed`` relevant are found
    return (n - read) / n - (1.0 - recall)


def recall_after(relevant: Sequence[bool], share: float) -> float:
    """Share of the relevant found after reading ``ceil(share * n)`` candidates (NaN when nothing is relevant)."""
    found = _array(relevant)
    r = int(found.sum())
    if r == 0:
        return math.nan
    read = math.ceil(share * len(found) - 1e-9)
    return float(found[:read].sum()) / r


def atd(relevant: Sequence[bool]) -> float:
    """Average time to discovery: the mean share of the candidates read before each relevant one (lower: better)."""
    found = _array(relevant)
    positions = np.flatnonzero(found)
    if positions.size == 0:
        return math.nan
    return float(positions.mean()) / len(found)


def loss(relevant: Sequence[bool]) -> float:
    """Normalised area between the best recall curve and this order's (0: every relevant first, 1: every last)."""
    found = _array(relevant)
    n, r = len(found), int(found.sum())
    if r == 0 or r == n:
        return math.nan if r == 0 else 0.0
    reads = np.arange(1, n + 1)
    best = np.minimum(reads, r).sum()
    worst = np.maximum(reads - (n - r), 0).sum()
    return float(best - curve(found).sum()) / float(best - worst)


def expected_random_curve(n: int, r: int) -> np.ndarray:
    """(n,) relevant expected after each read of a random order (the plot's diagonal)."""
    return np.arange(1, n + 1, dtype=np.float64) * (r / n if n else 0.0)


def summary(relevant: Sequence[bool]) -> dict[str, float]:
    """WSS@95, recall after 10% and 20% read, ATD and Loss of one reading order."""
    return {"wss@95": wss(relevant, 0.95), "recall@10%": recall_after(relevant, 0.10),
            "recall@20%": recall_after(relevant, 0.20), "atd": atd(relevant), "loss": loss(relevant)}
