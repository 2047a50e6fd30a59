"""Benchmark statistics: per-query scores, bootstrap confidence intervals and paired significance tests.

A retrieval benchmark's mean score says little without its spread and without a test of whether one
system really beats another on the same queries. This module gives the benchmark scripts:

- :func:`per_query`: one score per judged query for any ranx metric (``"ndcg@10"``, ``"map@50"``,
  ``"recall@50"``...) or for ``"entity_recall@K"``; their mean is the figure
  :func:`curation.learning.evaluation.evaluate` reports.
- :func:`bootstrap_ci`: a percentile bootstrap confidence interval of the mean (``scipy.stats.bootstrap``).
- :func:`paired_test`: a two-sided paired randomization (sign-flip) test of the mean difference between
  two systems over the queries they share (``scipy.stats.permutation_test``).
- :func:`holm`: Holm–Bonferroni adjusted p-values for a family of comparisons.
- :func:`summarise`: all of the above for one metric and several systems against a baseline, as JSON.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from curation.learning.evaluation import AnswerKey, MatcherAnswerKey, Qrels, entity_recall_per_query
from index.hits import Run

ENTITY_RECALL = "entity_recall@"
_SENTINEL = "\x00no-hit"  # the same stand-in as evaluation.ir_metrics: an empty result list scores 0


def _round(value: float) -> float:
    return round(float(value), 4)


def _significant(value: float, digits: int = 4) -> float:
    return float(f"{float(value):.{digits}g}")


@dataclass(frozen=True)
class Interval:
    """A mean with its bootstrap confidence interval.

    Attributes:
        mean: the sample mean.
        low: the lower bound of the interval.
        high: the upper bound of the interval.
        n: how many values (queries) the mean is over.
    """

    mean: float
    low: float
    high: float
    n: int

    def to_dict(self) -> dict[str, float | int]:
        return {"mean": _round(self.mean), "low": _round(self.low), "high": _round(self.high), "n": self.n}


@dataclass(frozen=True)
class Comparison:
    """The paired comparison of system A against system B on the queries both were scored on.

    Attributes:
        mean_a: A's mean score.
        mean_b: B's mean score.
        difference: ``mean_a - mean_b`` (the mean of the per-query differences).
        p_value: the two-sided p-value of the test (no difference under the null hypothesis).
        n: the number of paired queries.
        test: the test used, in words.
    """

    mean_a: float
    mean_b: float
    difference: float
    p_value: float
    n: int
    test: str

    def to_dict(self) -> dict[str, float | int | str]:
        return {
            "mean_a": _round(self.mean_a),
            "mean_b": _round(self.mean_b),
            "difference": _round(self.difference),
            "p_value": _significant(self.p_value),
            "n": self.n,
            "test": self.test,
        }


def per_query(
    run: Run, qrels: Qrels, metric: str, answer_key: AnswerKey | MatcherAnswerKey | None = None
) -> dict[str, float]:
    """One score per query for one metric.

    Args:
        run: the system's hits, ``{qid: {doc_id: score}}``.
        qrels: the relevance judgements; only relevance > 0 counts. Unused for EntityRecall.
        metric: any ranx metric (``"ndcg@10"``, ``"map@50"``, ``"recall@50"``...), or ``"entity_recall@K"``.
        answer_key: what EntityRecall needs; required for ``"entity_recall@K"``.

    Returns:
        For a ranx metric, a score for every judged query (one with at least one relevant document);
        a judged query missing from the run, or with no hits, scores 0. For EntityRecall, a score for
        every query with answers. The mean of the scores is the figure
        :func:`curation.learning.evaluation.evaluate` reports.

    Raises:
        ValueError: EntityRecall without an answer key or with a bad cutoff, or no judged query.
    """
    if metric.startswith(ENTITY_RECALL):
        if answer_key is None:
            raise ValueError(f"{metric} needs an answer key (answer_key=...); none was given")
        cutoff = metric[len(ENTITY_RECALL) :]
        if not (cutoff.isascii() and cutoff.isdigit()) or int(cutoff) < 1:
            raise ValueError(f"{metric!r}: the cutoff after '@' must be a positive whole number")
        return entity_recall_per_query(run, answer_key, int(cutoff))

    from ranx import Qrels as RanxQrels
    from ranx import Run as RanxRun
    from ranx import evaluate as ranx_evaluate

    # Judged queries and the filled run exactly as in evaluation.ir_metrics, so the means agree.
    judged = {q: {d: int(r) for d, r in docs.items() if r > 0} for q, docs in qrels.items()}
    judged = {q: docs for q, docs in judged.items() if docs}
    if not judged:
        raise ValueError("no query has a relevant document; nothing to evaluate")
    filled = {q: (dict(run[q]) if run.get(q) else {_SENTINEL: 0.0}) for q in judged}
    ranx_run = RanxRun(filled)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranx_evaluate(RanxQrels(judged), ranx_run, metric, return_mean=False, make_comparable=True)
    # ranx keeps each query's score in the run it scored, keyed by query id.
    scores = ranx_run.scores[metric]
    return {q: float(scores[q]) for q in judged}


def _as_array(values: Iterable[float] | Mapping[str, float]) -> np.ndarray:
    if isinstance(values, Mapping):
        values = values.values()
    array = np.asarray(list(values), dtype=float)
    if not np.all(np.isfinite(array)):
        raise ValueError("the values must be finite numbers (found nan or inf)")
    return array


def bootstrap_ci(
    values: Iterable[float] | Mapping[str, float], confidence: float = 0.95, resamples: int = 2000, seed: int = 13
) -> Interval:
    """The mean of per-query scores with its percentile bootstrap confidence interval.

    Uses ``scipy.stats.bootstrap`` with ``method="percentile"``: the interval runs between the
    ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the means of ``resamples``
    resamples (with replacement) of the values. With one value, or all values equal, the interval is
    the mean itself (low == high == mean).

    Args:
        values: the scores, one per query (a :func:`per_query` mapping is accepted as it is).
        confidence: the confidence level, between 0 and 1.
        resamples: how many bootstrap resamples to draw.
        seed: the random seed, so the interval is reproducible.

    Raises:
        ValueError: no values, a value that is not finite, or a bad confidence level or resample count.
    """
    data = _as_array(values)
    if data.size == 0:
        raise ValueError("cannot compute a confidence interval of no values")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, not {confidence}")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, not {resamples}")
    mean = float(np.mean(data))
    if data.size == 1 or np.all(data == data[0]):
        # scipy warns and may return nan for degenerate data; the interval is the one value.
        return Interval(mean=mean, low=mean, high=mean, n=int(data.size))
    from scipy.stats import bootstrap

    result = bootstrap(
        (data,),
        np.mean,
        n_resamples=resamples,
        confidence_level=confidence,
        method="percentile",
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    return Interval(mean=mean, low=low, high=high, n=int(data.size))


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def paired_test(a: Mapping[str, float], b: Mapping[str, float], resamples: int = 10000, seed: int = 13) -> Comparison:
    """A two-sided paired randomization (sign-flip) test of the mean difference between two systems.

    Under the null hypothesis the two systems are exchangeable on each query, so each per-query
    difference is as likely to have either sign. ``scipy.stats.permutation_test`` with
    ``permutation_type="samples"`` swaps A's and B's scores per query at random; it enumerates all
    2^n sign flips when that is no more than ``resamples`` (an exact test), and otherwise draws
    ``resamples`` of them.

    Args:
        a: system A's per-query scores (:func:`per_query`).
        b: system B's per-query scores, for the same queries.
        resamples: the most sign-flip patterns to evaluate.
        seed: the random seed, so the p-value is reproducible.

    Returns:
        The comparison; ``difference`` is ``mean_a - mean_b``. Identical scores give p-value 1.

    Raises:
        ValueError: the two systems were scored on different queries, or on none.
    """
    only_a, only_b = set(a) - set(b), set(b) - set(a)
    if only_a or only_b:
        raise ValueError(
            f"the systems must be scored on the same queries: {len(only_a)} only in the first, "
            f"{len(only_b)} only in the second"
        )
    if not a:
        raise ValueError("cannot compare systems on no queries")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, not {resamples}")
    queries = sorted(a)
    x = _as_array([a[q] for q in queries])
    y = _as_array([b[q] for q in queries])
    n = len(queries)
    exact = 2**n <= resamples
    test = "paired randomization (sign-flip) test of the mean difference, two-sided, " + (
        "exact" if exact else f"{resamples} resamples"
    )
    mean_a, mean_b = float(np.mean(x)), float(np.mean(y))
    if np.all(x == y):
        return Comparison(mean_a=mean_a, mean_b=mean_b, difference=0.0, p_value=1.0, n=n, test=test)
    if n == 1:  # both sign flips give the same |difference|: the exact p-value is 1 (scipy needs 2 queries)
        return Comparison(mean_a=mean_a, mean_b=mean_b, difference=float(x[0] - y[0]), p_value=1.0, n=1, test=test)
    from scipy.stats import permutation_test

    result = permutation_test(
        (x, y),
        _mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=resamples,
        alternative="two-sided",
        rng=np.random.default_rng(seed),
    )
    p_value = min(1.0, float(result.pvalue))
    return Comparison(mean_a=mean_a, mean_b=mean_b, difference=float(np.mean(x - y)), p_value=p_value, n=n, test=test)


def holm(p_values: Mapping[str, float]) -> dict[str, float]:
    """Holm–Bonferroni adjusted p-values for a family of comparisons.

    The i-th smallest of m p-values becomes ``max over j <= i of min(1, (m - j + 1) * p_(j))``: the
    adjusted values keep the order of the raw ones and are at most 1. Rejecting where the adjusted
    value is below alpha controls the family-wise error rate at alpha.

    Args:
        p_values: raw p-values by comparison name.

    Returns:
        The adjusted p-values, by the same names and in the same order.

    Raises:
        ValueError: a p-value outside [0, 1].
    """
    for name, p in p_values.items():
        if not (isinstance(p, int | float) and 0 <= p <= 1) or math.isnan(p):
            raise ValueError(f"p-value of {name!r} must lie in [0, 1], not {p!r}")
    m = len(p_values)
    adjusted: dict[str, float] = {}
    running = 0.0
    for i, (name, p) in enumerate(sorted(p_values.items(), key=lambda item: item[1])):
        running = max(running, min(1.0, (m - i) * float(p)))
        adjusted[name] = running
    return {name: adjusted[name] for name in p_values}


def summarise(
    per_system: Mapping[str, Mapping[str, float]],
    baseline: str,
    ci_resamples: int = 2000,
    test_resamples: int = 10000,
    seed: int = 13,
) -> dict:
    """Means, 95% confidence intervals and paired tests against a baseline, for one metric.

    Args:
        per_system: per system name, its per-query scores for the metric (:func:`per_query`).
        baseline: the system every other one is compared with.
        ci_resamples: bootstrap resamples for each confidence interval (:func:`bootstrap_ci`).
        test_resamples: sign-flip resamples for each paired test (:func:`paired_test`).
        seed: the random seed for both.

    Returns:
        A JSON-serialisable dict::

            {"baseline": "bm25",
             "systems": {"bm25": {"mean": 0.41, "ci95": [0.36, 0.46], "n": 40}, ...},
             "comparisons": {"hybrid_vs_bm25": {"mean_a": ..., "mean_b": ..., "difference": ...,
                                                "p_value": ..., "p_holm": ..., "n": 40, "test": "..."}}}

        Scores are rounded to 4 decimals, p-values to 4 significant digits. ``p_holm`` is Holm-adjusted
        over the comparisons in this summary.

    Raises:
        ValueError: the baseline is not among the systems, or a system was scored on other queries.
    """
    if baseline not in per_system:
        raise ValueError(f"baseline {baseline!r} is not among the systems: {sorted(per_system)}")
    systems: dict[str, dict] = {}
    for name, scores in per_system.items():
        interval = bootstrap_ci(scores, confidence=0.95, resamples=ci_resamples, seed=seed)
        systems[name] = {
            "mean": _round(interval.mean),
            "ci95": [_round(interval.low), _round(interval.high)],
            "n": interval.n,
        }
    comparisons: dict[str, Comparison] = {}
    for name, scores in per_system.items():
        if name != baseline:
            comparisons[f"{name}_vs_{baseline}"] = paired_test(
                scores, per_system[baseline], resamples=test_resamples, seed=seed
            )
    adjusted = holm({key: comparison.p_value for key, comparison in comparisons.items()})
    return {
        "baseline": baseline,
        "systems": systems,
        "comparisons": {
            key: {**comparison.to_dict(), "p_holm": _significant(adjusted[key])}
            for key, comparison in comparisons.items()
        },
    }
