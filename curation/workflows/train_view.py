"""The Train & evaluate page's calls: what it draws on opening (:func:`open_train` → a :class:`TrainView`) and
one query compared under two versions (:func:`compare_versions` → a :class:`Comparison`).

Orchestration only: the jobs are :mod:`curation.workflows.retrain`'s, the versions
:mod:`curation.workflows.versions`', the recogniser :mod:`curation.workflows.recogniser_training`'s, the linker
:mod:`curation.workflows.linker_training`'s and the relation scorer :mod:`curation.workflows.relation_scoring`'s;
this module gathers them for one page run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import duckdb

from curation.access import Who
from curation.config import Settings
from curation.entities.matching import Matcher
from curation.entities.query import QueryLinker
from curation.errors import USER_ERRORS
from curation.grades import Grade
from curation.retrieval.result_rows import curate_search
from curation.schemas import RelationSchema
from curation.store.jobs import Job
from curation.versions.catalog import RegisteredVersion
from curation.workflows import linker_training, recogniser_training, relation_scoring, retrain, versions
from curation.workflows.linker_training import LinkerOverview
from curation.workflows.recogniser_training import RecogniserOverview
from curation.workflows.session import schemas as store_schemas
from index.search import Retriever

COMPARED = 20  # the Curate page's first page of results: what a curator sees of a version


@dataclass(frozen=True)
class TrainingData:
    """What the newest job that trained a version was trained on: pairs per source and class, and a summary."""

    job_id: int
    rows: list[dict]
    summary: str


@dataclass(frozen=True)
class TrainView:
    """Everything the Train & evaluate page draws on opening.

    Attributes:
        schema: the schema retraining trains (the sidebar's, else the store's first).
        running: whether a background job (retraining, recogniser, relation scorer) is queued or running.
        decisions: the schema's active decisions by grade, and their ``total``.
        active: the schema's active version (None: the newest that fits, or BM25 alone).
        index_kinds, index_backends: the dense index choices of the retrain form.
        history: the latest jobs, newest first; training: what the newest trained version learnt from.
        recognisers, linkers: the recogniser's and the linker's sections; scorer: the relation scorer's line.
        versions: every published version; problems: what is wrong with the other folders.
        schemas: the store's relation schemas (a compared version's schema gives the query's slots).
        models_dir: where versions are published.
    """

    schema: str
    running: bool
    decisions: Mapping[str, int]
    active: RegisteredVersion | None
    index_kinds: list[str]
    index_backends: list[str]
    history: list[Job]
    training: TrainingData | None
    recognisers: RecogniserOverview
    linkers: LinkerOverview
    scorer: str
    versions: list[RegisteredVersion]
    problems: list[str]
    schemas: tuple[RelationSchema, ...]
    models_dir: Path

    @property
    def decision_line(self) -> str:
        """The schema's active decisions by grade, for a person."""
        counts = self.decisions
        return (f"{self.schema}: {counts['total']} active decisions ({counts[Grade.COMPLETE]} complete, "
                f"{counts[Grade.PARTIAL]} partial, {counts[Grade.NOT_RELEVANT]} not relevant)")

    @property
    def base_model(self) -> str:
        """The active version's weights folder ("" without an active version): what "Start from" it trains."""
        return str(self.active.path / "model") if self.active else ""

    def metrics(self, view: str) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
        """The versions' table under ``view`` ("dense", "hybrid") and the bars of its dev metrics."""
        rows = versions.version_rows(self.versions, view)
        return rows, versions.metric_bars(rows)

    @property
    def encoder_eta(self) -> str:
        """How long retraining the encoder takes on this machine: the last successful retraining's wall time ("" when
        none finished here yet)."""
        for job in self.history:
            if job.kind != "retrain" or job.state != "succeeded" or not (job.started_at and job.finished_at):
                continue
            seconds = (datetime.fromisoformat(job.finished_at) - datetime.fromisoformat(job.started_at)).total_seconds()
            return f"about {max(1, round(seconds / 60))} min on this machine (job {job.job_id} took {seconds:.0f} s)"
        return ""

    def schema_of(self, version: str) -> RelationSchema | None:
        """The relation schema ``version`` serves (None when the store no longer has it)."""
        name = next((v.schema for v in self.versions if v.version == version), None)
        return next((s for s in self.schemas if s.name == name), None)


def open_train(con: duckdb.DuckDBPyConnection, settings: Settings, schema: str | None,
               before_activate: Callable[[Path], None] | None = None, *, who: Who = "") -> TrainView:
    """Gather the page: jobs, the retrain form's choices, the recogniser, the linker, the relation scorer, the versions.

    The current job is brought up to date first (:func:`curation.workflows.retrain.current_job`, with
    ``before_activate``): a job whose worker is gone is failed, a finished one's version swapped in, so the
    view says what is running now. ``who`` is who reads the page: without a role (on a team store) neither the
    job nor the model registry is written to.
    """
    retrain.current_job(con, before_activate=before_activate, who=who)
    schemas = tuple(store_schemas(con))
    name = schema or (schemas[0].name if schemas else "PO")
    history = retrain.history(con, limit=20)
    trained = retrain.trained_jobs(history)
    training = TrainingData(trained[0].job_id, *retrain.training_summary(trained[0])) if trained else None
    kinds, backends = retrain.index_choices(settings)
    published, problems = versions.model_versions(con, settings.models_dir, who=who)
    return TrainView(
        schema=name, running=retrain.is_running(con), decisions=retrain.decision_counts(con, name),
        active=versions.active_version(con, name), index_kinds=kinds, index_backends=backends, history=history,
        training=training, recognisers=recogniser_training.recogniser_overview(con, settings),
        linkers=linker_training.linker_overview(con, settings),
        scorer=relation_scoring.overview(con), versions=published, problems=problems, schemas=schemas,
        models_dir=settings.models_dir,
    )


@dataclass(frozen=True)
class Comparison:
    """One partial relation's top results under two versions.

    Attributes:
        before, after: the chart's labels of the two versions ("before: <version>").
        shifts: each abstract of either top list with its rank in both (None when one could not search).
        problems: why a version could not be compared (it does not serve this corpus, a slot is unreadable).
    """

    before: str
    after: str
    shifts: tuple[versions.Shift, ...] | None = None
    problems: tuple[str, ...] = ()

    @property
    def lines(self) -> list[dict[str, object]]:
        return versions.shift_lines(self.shifts or (), self.before, self.after)

    @property
    def table(self) -> list[dict[str, object]]:
        return versions.shift_table(self.shifts or ())

    @property
    def summary(self) -> str:
        shifts = self.shifts or ()
        moved = sum(1 for s in shifts if s.describe() != "same")
        return f"{moved} of {len(shifts)} abstracts changed place, entered or left the top {COMPARED}."


def compare_versions(
    con: duckdb.DuckDBPyConnection, engines: Mapping[str, Retriever | None], matcher: Matcher, linker: QueryLinker,
    schema: RelationSchema, values: Mapping[str, str], before: str, after: str,
) -> Comparison:
    """The Curate page's top results for ``values`` under ``before`` and ``after``, side by side.

    Args:
        engines: version → the retriever it serves with (None, or another version's: it does not serve this
            corpus, its index covers another set of abstracts).
    """
    tops: dict[str, list[str]] = {}
    problems: list[str] = []
    for name in (before, after):
        engine = engines.get(name)
        if engine is None or engine.version != name:
            problems.append(f"{name} does not serve this corpus (its index covers another set of abstracts); "
                            f"rebuild it to compare.")
            continue
        try:
            result = curate_search(con, engine, matcher, schema, values, mode="hybrid", k=COMPARED, linker=linker)
        except USER_ERRORS as exc:
            problems.append(str(exc))
            continue
        tops[name] = [row.pmid for row in result.rows]
    shifts = tuple(versions.rank_shifts(tops[before], tops[after])) if len(tops) == 2 else None
    return Comparison(f"before: {before}", f"after: {after}", shifts, tuple(problems))
