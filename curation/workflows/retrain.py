"""The Train & evaluate page's calls: start, follow and cancel a training job; what it trained on.

The job protocol itself (request, progress and result files; the worker process) is :mod:`curation.jobs`; every
learned model goes through it by its learner's name (:mod:`curation.learning.learner`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import duckdb

from curation import access
from curation.access import Action, Who
from curation.config import INDEX_BACKENDS, INDEX_KINDS, Settings
from curation.errors import CurationError
from curation.grades import Grade
from curation.jobs import retraining
from curation.jobs.result import job_result
from curation.learning.feedback import FeedbackConfig
from curation.learning.learner import LEARNERS, LINKER, RECOGNISER, RELATIONS, learner
from curation.learning.retrain_request import RetrainRequest
from curation.store.decisions import list_decisions
from curation.store.jobs import Job, active_jobs, get_job, list_jobs

Progress = retraining.Progress


# The retrain form's dense-index choices: (value, label) in the order shown; the setting's value first.
INDEX_KIND_LABELS = {"auto": "chosen from corpus size and memory", "flat": "flat (exact)", "hnsw": "HNSW",
                     "ivfpq": "IVF-PQ + refine (IVF_SQ8 on Milvus)"}
INDEX_BACKEND_LABELS = {"faiss": "FAISS files in the version folder",
                        "milvus": "Milvus (CURATION_MILVUS_URI, else a Milvus Lite file in the version folder)"}


def index_choices(settings: Settings) -> tuple[list[str], list[str]]:
    """The index kinds and backends the form offers, each list starting with what the settings choose."""
    kinds = [settings.index_kind, *(k for k in INDEX_KINDS if k != settings.index_kind)]
    backends = [settings.index_backend, *(b for b in INDEX_BACKENDS if b != settings.index_backend)]
    return kinds, backends


@dataclass(frozen=True)
class RetrainForm:
    """What the retrain form (and ``python -m curation retrain``) asks (0 = chosen for the device where the field
    says so; the fields after ``index_backend`` are the command's only)."""

    schema: str
    base_model: str = ""
    use_kb: bool = True
    use_decisions: bool = True
    epochs: int = 0
    max_steps: int = 0
    batch_size: int = 0
    max_seq_length: int = 0
    conflicts: str = "exclude"
    index_kind: str = ""  # "" = the CURATION_INDEX_KIND setting
    index_backend: str = ""  # "" = the CURATION_INDEX_BACKEND setting
    learning_rate: float = 2e-5
    device: str = ""  # "" = CUDA when present
    seed: int = 13
    decision_repeat: int = 1  # how many times each decision pair is used
    cross_encoder: str = "auto"  # also train the cross-encoder re-ranker: auto (on a GPU only), on or off


def start(con: duckdb.DuckDBPyConnection, form: RetrainForm, settings: Settings, *, who: Who = "") -> Job:
    """Start a background retraining job (one at a time).

    Raises:
        CurationError: a job is already running, the request is invalid, or the worker cannot start.
    """
    access.require(con, who, Action.TRAIN)
    request = RetrainRequest(
        schema=form.schema, base_model=form.base_model, use_kb=form.use_kb, use_decisions=form.use_decisions,
        epochs=form.epochs, max_steps=form.max_steps, batch_size=form.batch_size,
        max_seq_length=form.max_seq_length, feedback=FeedbackConfig(conflicts=form.conflicts,
                                                                    repeat=form.decision_repeat),
        index_kind=form.index_kind, index_backend=form.index_backend, learning_rate=form.learning_rate,
        device=form.device, seed=form.seed, cross_encoder=form.cross_encoder,
    )
    return retraining.start_retrain(con, request, settings)


def cancel(con: duckdb.DuckDBPyConnection, job_id: int, *, who: Who = "") -> Job:
    """Ask the running job ``job_id`` to stop (terminated after a grace period if it does not)."""
    access.require(con, who, Action.TRAIN)
    return retraining.cancel_job(con, get_job(con, job_id))


def recover_jobs(con: duckdb.DuckDBPyConnection, *, who: Who = "") -> list[Job]:
    """The shell's first step (``python -m curation retrain``): finish the jobs whose worker ended, fail those that
    never got one; the jobs that were active, as they are now.

    Raises:
        AccessDeniedError: ``who`` may not train; nothing is written.
    """
    access.require(con, who, Action.TRAIN)
    return retraining.recover_jobs(con)


def running_jobs(con: duckdb.DuckDBPyConnection) -> list[Job]:
    """The queued or running jobs, as stored."""
    return active_jobs(con)


def wait_for(con: duckdb.DuckDBPyConnection, job: Job,
             report: Callable[[Job, Progress | None], None] | None = None) -> Job:
    """``job`` followed until it finishes (the command line's loop; ``report`` hears each progress report)."""
    return retraining.wait_for(con, job, report=report)


def current_job(con: duckdb.DuckDBPyConnection, before_activate: Callable[[Path], None] | None = None, *,
                who: Who = "") -> Job | None:
    """The queued or running job, brought up to date (finished, and its version swapped in, when done).

    ``before_activate`` is called with the new version's folder before it becomes active (the app loads
    its retriever then, so the swap costs no search). Finishing a job writes: for someone without a role (on a
    team store) the job is shown as stored, and the next page run of someone with one finishes it.
    """
    jobs = active_jobs(con)
    if not jobs:
        return None
    if not access.allowed(con, who, Action.FOLLOW_JOBS):
        return jobs[0]
    job = follow_job(con, jobs[0], before_activate, who=who)
    return None if job.finished else job


def follow_job(con: duckdb.DuckDBPyConnection, job: Job, before_activate: Callable[[Path], None] | None = None,
               *, who: Who = "") -> Job:
    """``job`` brought up to date with its worker: finished, and what it built applied, when the worker is done.

    Raises:
        AccessDeniedError: ``who`` may not (no role on a team store); nothing is written.
    """
    access.require(con, who, Action.FOLLOW_JOBS)
    if job.finished:  # finished (and applied) before: nothing to do
        return job
    job = retraining.poll_job(con, job, before_activate=before_activate)
    if job.finished and job.kind == RECOGNISER:  # its recogniser becomes active, its annotations are loaded
        from curation.workflows.recogniser_training import apply_recogniser_job

        apply_recogniser_job(con, job)
    if job.finished and job.kind == LINKER:  # its linker becomes active (if not worse), the abstracts re-annotated
        from curation.workflows.linker_training import apply_linker_job

        apply_linker_job(con, job)
    if job.finished and job.kind == RELATIONS:  # its scorer becomes active (if not worse), its pairs are loaded
        from curation.workflows.relation_scoring import apply_relation_job

        apply_relation_job(con, job)
    return job


def is_running(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(active_jobs(con))


def progress(job: Job) -> Progress | None:
    """The worker's last progress report, or None before its first."""
    return retraining.read_progress(job)


def describe_progress(job: Job, reported: Progress | None) -> str:
    """One line for a progress bar: "Job 3 · running · 30/120 · loss 0.4321 · ETA 1.6 min"."""
    parts = [f"Job {job.job_id} · {reported.stage if reported else job.state}"]
    if reported and reported.step is not None and reported.total:
        parts.append(f"{reported.step}/{reported.total}")
    if reported and reported.loss is not None:
        parts.append(f"loss {reported.loss:.4f}")
    if reported and reported.eta_s:
        eta = reported.eta_s
        parts.append(f"ETA {eta / 60:.1f} min" if eta >= 90 else f"ETA {eta:.0f} s")
    return " · ".join(parts)


def status_line(job: Job) -> str:
    """The sidebar's line for a running job: "Retraining (job 3): training 40%"."""
    reported = progress(job)
    stage = reported.stage if reported else job.state
    share = f" {reported.fraction:.0%}" if reported and reported.fraction is not None else ""
    return f"{job_title(job)} (job {job.job_id}): {stage}{share}"


def job_title(job: Job) -> str:
    """What a job does, in two or three words ("Retraining", "Recogniser training"): its learner's title."""
    return learner(job.kind).title(job.params) if job.kind in LEARNERS else "Retraining"


def decision_counts(con: duckdb.DuckDBPyConnection, schema: str) -> Mapping[str, int]:
    """Active decisions of ``schema`` by grade (every grade present, 0 when none), and their ``total``."""
    grades = Counter(d.grade for d in list_decisions(con, schema=schema))
    return {**{grade: grades[grade] for grade in Grade}, "total": sum(grades.values())}


def history(con: duckdb.DuckDBPyConnection, limit: int = 20) -> list[Job]:
    """The latest jobs, newest first."""
    return list_jobs(con, limit=limit)


def trained_jobs(jobs: list[Job]) -> list[Job]:
    """Those of ``jobs`` whose result says what a new version was trained on."""
    return [job for job in jobs if (result := job_result(job)) is not None and result.training is not None]


def training_summary(job: Job) -> tuple[list[dict], str]:
    """A finished job's training pairs per source and class, and what became of the decisions."""
    result = job_result(job)
    if result is None or result.training is None:
        raise CurationError(f"job {job.job_id} trained no model version")
    training = result.training
    rows = [{"source": source, "class": name, "positive": counts.positive, "negative": counts.negative}
            for source, classes in sorted(training.report.items()) for name, counts in sorted(classes.items())]
    used = training.decisions
    summary = (
        f"{training.pairs} pairs. Decisions: {used.active_decisions} active, {used.ignored_superseded} "
        f"superseded or undone (ignored), {used.conflicts_excluded} items left out as unadjudicated "
        f"disagreements, {used.adjudicated_items} decided by adjudication, {used.ignored_missing_document} on "
        f"abstracts no longer in the corpus."
    )
    return rows, summary
