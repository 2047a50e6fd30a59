"""The activation check's evidence: is the new version better than the active one, beyond noise?

Both versions are evaluated as the Curate page would serve them (the concept search at each version's
own dense share and re-ranking, :func:`curation.learning.served_fusion.served_run`) on the same dev
queries, one NDCG@10 per query (:func:`curation.learning.statistics.per_query`). The evidence is the mean
per-query difference (new minus active) with its percentile bootstrap interval
(:func:`curation.learning.statistics.bootstrap_ci`, paired: the resampled unit is the query). The check
passes when the interval's lower bound is above zero and at least :data:`MIN_QUERIES` queries were scored;
:func:`curation.versions.activation.judge` reads it from the new version's manifest.
"""

from __future__ import annotations

from collections.abc import Mapping

from curation.learning.served_fusion import ServedSearch, served_run
from curation.learning.splits import EvalSet
from curation.learning.statistics import bootstrap_ci, per_query
from curation.retrieval.relation_search import SearchOptions
from curation.versions.manifest import GateEvidence
from index.search import Retriever

METRIC = "ndcg@10"
CONFIDENCE = 0.95
MIN_QUERIES = 5  # below this a bootstrap interval says nothing: a one-query "gain" is not evidence
SYSTEM = "served concept search (each version's dense share and re-ranking), top 50"


def judged(dev: EvalSet) -> tuple[dict[str, Mapping[str, str]], dict[str, Mapping[str, int]]]:
    """The dev queries the served search can be scored on: typed values and a relevant document."""
    values = {q: v for q, v in dev.values.items()
              if v and q in dev.qrels and any(r > 0 for r in dev.qrels[q].values())}
    return values, {q: dev.qrels[q] for q in values}


def served_scores(engine: Retriever, search: ServedSearch, dev: EvalSet, k: int = 50) -> dict[str, float]:
    """Per dev query, the :data:`METRIC` of ``engine`` (a loaded version: ``index.loading.open_retriever``)
    served as the app serves it: its own dense share and re-ranking."""
    values, qrels = judged(dev)
    if not values:
        return {}
    run = served_run(engine, search, values, SearchOptions(mode="hybrid", k=k))
    return per_query(run, qrels, METRIC)


def evidence(new: Mapping[str, float], old: Mapping[str, float] | None, baseline: str, dev_source: str,
             seed: int = 13, minimum: int = MIN_QUERIES, unit: str = "dev queries") -> GateEvidence:
    """The gate's evidence from both versions' per-query scores (``old`` None: no baseline to compare).

    ``minimum`` units (``unit`` in words: dev queries, or held-out topics) must be scored before an interval counts.
    """
    if old is None or not baseline:
        mean = sum(new.values()) / len(new) if new else 0.0
        return GateEvidence(baseline="", dev_source=dev_source, metric=METRIC, system=SYSTEM, queries=len(new),
                            new_mean=round(mean, 4), verdict="no active version evaluated on these dev queries")
    shared = sorted(set(new) & set(old))
    if not shared:
        return GateEvidence(baseline=baseline, dev_source=dev_source, metric=METRIC, system=SYSTEM,
                            verdict="no dev query to compare on")
    deltas = [new[q] - old[q] for q in shared]
    interval = bootstrap_ci(deltas, confidence=CONFIDENCE, seed=seed)
    improved = interval.low > 0 and len(shared) >= minimum
    if improved:
        verdict = f"better: the {CONFIDENCE:.0%} interval of the gain excludes zero"
    elif len(shared) < minimum:
        verdict = f"not shown: {len(shared)} {unit}, fewer than the {minimum} an interval needs"
    else:
        verdict = f"not shown: the {CONFIDENCE:.0%} interval of the gain includes zero or is below it"
    return GateEvidence(
        baseline=baseline, dev_source=dev_source, metric=METRIC, system=SYSTEM, queries=len(shared),
        new_mean=round(sum(new[q] for q in shared) / len(shared), 4),
        baseline_mean=round(sum(old[q] for q in shared) / len(shared), 4),
        mean_delta=round(interval.mean, 4), low=round(interval.low, 4), high=round(interval.high, 4),
        confidence=CONFIDENCE, improved=improved, verdict=verdict,
    )

