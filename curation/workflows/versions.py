"""Model versions as the pages show them: the registry in sync with the store, the table, activation.

The registry and the activation rule live in :mod:`curation.versions`; this module shapes them for a page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from curation import access
from curation.access import Action, Who
from curation.errors import CurationError
from curation.learning import holdout
from curation.versions import catalog, serving
from curation.versions.catalog import RegisteredVersion

# What the Train & evaluate and Explore pages say when no version is published yet.
BUILD_HELP = (
    "No model version yet: the Curate page ranks with BM25 alone. Press Retrain on the Train & evaluate page, "
    "or build one from a terminal — the base model indexing the corpus (minutes), or an EDEL-trained one:\n\n"
    "```\npython -m curation train --schema PO --zero-shot --out models/po-base\n"
    "python -m curation train --schema PO --out models/po-edel-1\n```\n\n"
    "Versions appear once published under the models folder."
)

# Metrics in reading order; a version shows those its manifest has.
METRICS = ("ndcg@10", "ndcg@50", "map@10", "map@50", "entity_recall@10", "entity_recall@50")


def model_versions(con: duckdb.DuckDBPyConnection, models_dir: Path, *,
                   who: Who = "") -> tuple[list[RegisteredVersion], list[str]]:
    """Every published version, registered in the store (new folders added), and what is wrong with the others.

    Registering is a write: someone without a role (on a team store) is shown the registered versions only.
    """
    if access.allowed(con, who, Action.REGISTER_VERSIONS):
        return register_versions(con, models_dir, who=who)
    return catalog.sync_model_versions(con, models_dir, register=False)


def register_versions(con: duckdb.DuckDBPyConnection, models_dir: Path, *,
                      who: Who = "") -> tuple[list[RegisteredVersion], list[str]]:
    """Register the versions published under ``models_dir`` that the store has not seen; then as
    :func:`model_versions`.

    Raises:
        AccessDeniedError: ``who`` may not register versions (no role on a team store).
    """
    access.require(con, who, Action.REGISTER_VERSIONS)
    return catalog.sync_model_versions(con, models_dir)


def active_version(con: duckdb.DuckDBPyConnection, schema: str) -> RegisteredVersion | None:
    """The version that is to serve ``schema`` (None: the newest that fits, or BM25 alone)."""
    return catalog.active_version(con, schema)


def registered(con: duckdb.DuckDBPyConnection, version: str) -> RegisteredVersion:
    """The registered version named ``version`` (it was listed by :func:`model_versions`)."""
    found = catalog.get_version(con, version)
    if found is None:
        raise KeyError(version)
    return found


def activate(con: duckdb.DuckDBPyConnection, version: str, *, who: Who = "") -> RegisteredVersion:
    """Make ``version`` its schema's active version (one transaction; the app swaps it in on the next search).

    A version whose vectors live in Milvus is opened first: when its engine is down or its collection is gone,
    nothing changes and the error says why (the active version keeps serving).

    Raises:
        CurationError: it is not registered, its folder is incomplete or unreadable, or its engine cannot serve it.
    """
    access.require(con, who, Action.ACTIVATE)
    found = catalog.get_version(con, version)
    if found is not None:
        problem = serving.engine_problem(found.path)
        if problem:
            raise CurationError(f"cannot activate {version}: {problem}; the active version keeps serving")
    return catalog.activate_version(con, version)


def version_rows(versions: Sequence[RegisteredVersion], view: str = "dense") -> list[dict[str, object]]:
    """One row per version for the versions table: identity, training, and the dev metrics of ``view``."""
    rows = []
    for v in versions:
        metrics = v.metrics if view == "dense" else v.metrics_hybrid
        rows.append({
            "version": v.version,
            "schema": v.schema,
            "active": v.active,
            "trained": v.manifest.trained,
            "base model": v.manifest.base_model,
            "documents": v.manifest.documents,
            "training pairs": v.manifest.training_pairs,
            "train s": v.manifest.train_seconds,
            "device": v.manifest.device,
            **{name: metrics.get(name) for name in METRICS},
        })
    return rows


def gate_rows(versions: Sequence[RegisteredVersion]) -> list[dict[str, object]]:
    """The activation check's evidence of each version that has it (its manifest's ``gate``): the table's rows."""
    rows = []
    for v in versions:
        gate = v.manifest.gate
        if gate is None:
            continue
        rows.append({
            "version": v.version,
            "compared with": gate.baseline or "—",
            "dev source": holdout.SOURCE_LABELS.get(gate.dev_source, gate.dev_source),
            "dev queries": gate.queries,
            f"new {gate.metric}": gate.new_mean,
            f"active {gate.metric}": gate.baseline_mean if gate.baseline else None,
            "mean gain": gate.mean_delta if gate.baseline else None,
            f"{gate.confidence:.0%} low": gate.low if gate.baseline else None,
            f"{gate.confidence:.0%} high": gate.high if gate.baseline else None,
            "better": gate.improved,
            "verdict": gate.verdict,
            "served dense share": v.manifest.served.dense_share if v.manifest.served else None,
            "cross-encoder": v.manifest.served.rerank_rule if v.manifest.served and v.manifest.served.rerank_k
            else "—",
        })
    return rows


def metric_bars(rows: Sequence[dict[str, object]]) -> list[dict[str, object]]:
    """(version, metric, value) for every dev metric the rows have: the bar chart's data."""
    return [{"version": row["version"], "metric": name, "value": row[name]}
            for row in rows for name in METRICS if row[name] is not None]


def loss_curves(versions: Sequence[RegisteredVersion]) -> list[dict[str, object]]:
    """(version, step, loss) for every trained version: the loss chart's data."""
    return [{"version": v.version, "step": step, "loss": loss}
            for v in versions for step, loss in enumerate(v.loss_curve, start=1)]


# --- what changed: one query, two versions ---------------------------------------------------------


@dataclass(frozen=True)
class Shift:
    """One abstract in either version's top list: its rank in each (None: not in that top list)."""

    pmid: str
    before: int | None
    after: int | None

    @property
    def moved(self) -> int | None:
        """Places it moved up (negative: down); None when it is in only one of the lists."""
        return None if self.before is None or self.after is None else self.before - self.after

    def describe(self) -> str:
        if self.before is None:
            return "new"
        if self.after is None:
            return "dropped"
        return "same" if self.moved == 0 else (f"up {self.moved}" if self.moved > 0 else f"down {-self.moved}")


def rank_shifts(before: Sequence[str], after: Sequence[str]) -> list[Shift]:
    """Each PMID of either ranking (best first) with its rank in both; ordered by the new ranking, then the
    dropped ones by their old rank."""
    old = {pmid: rank for rank, pmid in enumerate(before, start=1)}
    new = {pmid: rank for rank, pmid in enumerate(after, start=1)}
    shifts = [Shift(pmid, old.get(pmid), rank) for pmid, rank in new.items()]
    shifts += [Shift(pmid, rank, None) for pmid, rank in old.items() if pmid not in new]
    return shifts


def shift_lines(shifts: Sequence[Shift], before: str, after: str) -> list[dict[str, object]]:
    """The chart's points: per PMID its rank under ``before`` and under ``after`` (one point when in one list)."""
    rows = []
    for s in shifts:
        for side, rank in ((before, s.before), (after, s.after)):
            if rank is not None:
                rows.append({"version": side, "rank": rank, "pmid": s.pmid, "change": s.describe()})
    return rows


def shift_table(shifts: Sequence[Shift]) -> list[dict[str, object]]:
    return [{"PMID": s.pmid, "before": s.before, "after": s.after, "change": s.describe()} for s in shifts]
