"""When a newly built model version replaces the active one.

Activated when no version of the schema is active, when the active one no longer covers the
corpus (or cannot be read), or when the new version's dev score on the primary metric is not
worse than the active version's, measured on the same dev split by the same worker, by more than
the tolerance. Otherwise it is kept, inactive, and the verdict says why (a person can still
activate it on the Train & evaluate page). Without a comparable score the new version waits.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from curation.versions import catalog, registry
from curation.versions.manifest import DevMetrics


@dataclass(frozen=True)
class Verdict:
    activate: bool
    reason: str


def judge(con: duckdb.DuckDBPyConnection, schema: str, version: registry.ModelVersion, metrics: DevMetrics,
          baseline_version: str = "", baseline: DevMetrics | None = None,
          metric: str = "ndcg@10", mode: str = "hybrid", tol: float = 0.01) -> Verdict:
    """Whether ``version`` replaces ``schema``'s active version.

    ``metrics`` are its dev metrics and ``baseline`` those of ``baseline_version`` (the version
    active when the job started), both measured by the worker on the same dev split.
    """
    name = f"dev {metric} ({mode})"
    active = catalog.active_version(con, schema)
    if active is None:
        return Verdict(True, f"activated: no {schema} version was active")
    if catalog.check_version(active) or active.manifest.documents != version.manifest.documents:
        return Verdict(True, f"activated: the active version {active.version} does not cover the current corpus")
    new = metrics.of(mode).get(metric)
    if new is None:
        return Verdict(False, f"kept inactive: no {name} to compare (the KB has no dev split with abstracts); "
                              f"activate it by hand on the Train & evaluate page")
    old = baseline.of(mode).get(metric) if baseline is not None and baseline_version == active.version else None
    if old is None:
        return Verdict(False, f"kept inactive: {active.version} could not be evaluated on the same dev split "
                              f"(new {name} {new:.3f}); compare and activate by hand")
    if new >= old - tol:
        return Verdict(True, f"activated: {name} {new:.3f} vs {old:.3f} for {active.version} (tolerance {tol})")
    return Verdict(False, f"kept inactive: {name} {new:.3f} is below {active.version}'s {old:.3f} "
                          f"by more than the tolerance {tol}")
