"""The concept search's candidate selection: a partial selection must give exactly what a full sort gives."""

from __future__ import annotations

import numpy as np
import pytest

from index.concepts import _best_rows


def _full_sort(scores: np.ndarray, n: int) -> np.ndarray:
    positive = np.flatnonzero(scores > 0)
    best = positive[np.argsort(-scores[positive], kind="stable")]
    if n >= len(best):
        return best
    threshold = scores[best[n - 1]]
    return best[scores[best] >= threshold]


@pytest.mark.parametrize("seed", range(20))
def test_best_rows_equal_a_full_stable_sort_ties_included(seed):
    rng = np.random.default_rng(seed)
    # few distinct values: many ties at the cut; a third of the documents score nothing
    scores = rng.integers(0, 6, size=2_000).astype(np.float32) * (rng.random(2_000) > 0.33)
    for n in (1, 5, 50, 700, 1_999, 5_000):
        got = _best_rows(scores, n)
        assert got.tolist() == _full_sort(scores, n).tolist()
        assert len(got) >= min(n, int((scores > 0).sum()))


def test_best_rows_of_nothing():
    assert _best_rows(np.zeros(10, dtype=np.float32), 5).tolist() == []
    assert _best_rows(np.ones(3, dtype=np.float32), 0).tolist() == []
