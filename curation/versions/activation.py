"""When a newly built model version replaces the active one.

Activated when no version of the schema is active, or when the active one no longer covers the
corpus (or cannot be read). Otherwise only on evidence: the new version's manifest carries the
activation check (:class:`~curation.versions.manifest.GateEvidence`, measured by the worker on the same
dev queries for both versions, :mod:`curation.learning.gate`), and it is activated when the bootstrap
interval of its per-query gain over the active version excludes zero. No tolerance: a gain the dev
queries cannot tell from noise keeps the new version inactive, and the verdict says why (a person can
still activate it on the Train & evaluate page).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import duckdb

from curation.versions import catalog, registry

M = TypeVar("M")  # an entity model's manifest


@dataclass(frozen=True)
class Verdict:
    activate: bool
    reason: str


def judge(con: duckdb.DuckDBPyConnection, schema: str, version: registry.ModelVersion) -> Verdict:
    """Whether ``version`` replaces ``schema``'s active version (module docstring)."""
    active = catalog.active_version(con, schema)
    if active is None:
        return Verdict(True, f"activated: no {schema} version was active")
    if catalog.check_version(active) or active.manifest.documents != version.manifest.documents:
        return Verdict(True, f"activated: the active version {active.version} does not cover the current corpus")
    gate = version.manifest.gate
    if gate is None or not gate.queries:
        return Verdict(False, "kept inactive: no dev ndcg@10 to compare (the KB has no dev split with abstracts "
                              "and no curator's decision is held out as dev); activate it by hand on the "
                              "Train & evaluate page")
    if gate.baseline != active.version:
        return Verdict(False, f"kept inactive: {active.version} could not be evaluated on the same dev split "
                              f"({gate.describe()}); compare and activate by hand")
    if gate.improved:
        return Verdict(True, f"activated: {gate.describe()}")
    return Verdict(False, f"kept inactive: {gate.describe()}")


def judge_entity_model(con: duckdb.DuckDBPyConnection, kind: str, new: M, read: Callable[[Path], M],
                       figure: Callable[[M, M], tuple[float | None, float | None] | str], measure: str,
                       tolerance: float, anyway: str) -> Verdict:
    """The rule a newly trained entity model (recogniser, linker) is activated by: when none of its ``kind`` is
    active, or the active one cannot be read any more (``read``: its manifest from its folder); otherwise unless
    its dev ``measure`` is below the active one's by more than ``tolerance``. ``figure(new, active)``: the two
    figures, or why they are not comparable (activated, saying so); ``anyway``: how a person activates it all the
    same."""
    from curation.errors import CurationError
    from curation.store.annotations import get_active_entity_model

    row = get_active_entity_model(con, kind)
    if row is None:
        return Verdict(True, f"activated: no {kind} was active")
    try:
        active = read(Path(row.path))
    except CurationError:
        return Verdict(True, f"activated: the active {kind} {row.name} cannot be read any more")
    figures = figure(new, active)
    if isinstance(figures, str):
        return Verdict(True, f"activated: {figures}")
    ours, theirs = figures
    name = getattr(active, "name", row.name)  # the manifest's name, as the Train page lists it
    if ours is None or theirs is None:
        return Verdict(True, f"activated: no {measure} to compare")
    if ours >= theirs - tolerance:
        return Verdict(True, f"activated: {measure} {ours:.3f} vs {theirs:.3f} of {name}")
    return Verdict(False, f"kept inactive: {measure} {ours:.3f} is below {theirs:.3f} of the active {name} by "
                          f"more than {tolerance}; {anyway}")
