"""The one training job: train any learned model in a worker process, follow it, and swap its model in safely.

DuckDB lets one process write the store, so the worker never opens it. The app (or
``python -m curation retrain``) is the only writer:

1. :func:`start_training` takes a learner's name (:data:`curation.learning.learner.LEARNERS`) and its request,
   lets the learner prepare it, records a job of that kind, exports a snapshot (KB records, decisions,
   documents) into the job's folder with the request, and starts ``python -m curation.jobs.worker <folder>``
   in its own process group (its own session: it outlives a stopped app). :func:`start_retrain` is the
   model version's (``retrain``).
2. The worker runs the learner: it reads only that folder and writes only the new artifact under the models
   folder, what the app loads afterwards, ``progress.json`` (stage, step, total, loss, ETA) and finally
   ``result.json``.
3. :func:`poll_job` (called by the app's polling fragment, the sidebar and the CLI) reads those
   files; once the result is there, :func:`finish` records it. A model version (the learner is
   ``versioned``) is registered there and activated only when its learner's rule says so (the
   paired-bootstrap interval of its dev gain over the active version above 0). Model and index swap
   together: the app loads the new retriever before flipping the active flag. A recogniser's or a
   relation scorer's result is recorded as it is: the workflow that loads what its worker wrote
   activates it (:func:`curation.workflows.retrain.follow_job`).
4. :func:`recover_jobs` runs when the app starts: a running job whose worker is still alive is
   re-attached, one that finished meanwhile is finished, one whose worker died is marked
   failed; nothing is forgotten.

A killed worker, a full disk or an unreachable base model leaves the active version serving
and the job failed with a message saying which. What a retraining job builds is its request
(:class:`~curation.learning.version_learner.RetrainRequest`).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import duckdb

from curation.config import PROJECT_ROOT, Settings
from curation.errors import USER_ERRORS, CurationError
from curation.files import write_atomic
from curation.jobs.processes import pid_alive
from curation.jobs.result import JobResult, JobResultError, read_result, result_json
from curation.learning.learner import LEARNERS, RETRAIN, learner
from curation.learning.retrain_request import RetrainRequest
from curation.store.jobs import (
    TERMINAL_STATES,
    Job,
    active_jobs,
    create_job,
    finish_job,
    get_job,
    set_job_dir,
    set_job_message,
    start_job,
)
from curation.versions import catalog, registry

__all__ = [  # RetrainRequest: what bench/ and the tests start a retraining with, from here
    "CANCEL", "LOG", "PROGRESS", "REQUEST", "RESULT", "SNAPSHOT", "VERSION", "Progress", "RetrainRequest",
    "cancel_job", "finish", "job_folder", "launch_job", "poll_job", "read_progress", "recover_jobs", "spawn_worker",
    "start_retrain", "start_training", "wait_for", "worker_alive",
]

REQUEST, RESULT, PROGRESS, CANCEL, LOG, SNAPSHOT, VERSION = (
    "request.json", "result.json", "progress.json", "cancel", "worker.log", "snapshot", "version.txt"
)
CANCEL_GRACE_S = 60.0  # after a cancel request, how long the worker may take before it is terminated
_CHILDREN: dict[int, subprocess.Popen] = {}  # workers this process started (reaped through Popen.poll)
_FINISH_LOCK = threading.Lock()


@dataclass(frozen=True)
class Progress:
    """What the worker last reported (``progress.json``)."""

    stage: str
    step: int | None = None
    total: int | None = None
    loss: float | None = None
    eta_s: float | None = None
    epoch: int | None = None
    updated_at: float | None = None

    @property
    def fraction(self) -> float | None:
        if self.step is None or not self.total:
            return None
        return min(1.0, self.step / self.total)


def job_folder(settings: Settings, job_id: int) -> Path:
    return settings.jobs_dir / f"job-{job_id}"


# --- starting -----------------------------------------------------------------------------


def spawn_worker(job_dir: Path) -> int:
    """Start ``python -m curation.jobs.worker job_dir`` in its own session; returns its pid."""
    with (job_dir / LOG).open("ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "curation.jobs.worker", str(job_dir)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            cwd=str(PROJECT_ROOT), start_new_session=True,
        )
    _CHILDREN[proc.pid] = proc
    # Reaped as soon as it exits, whether or not a page polls the job: no zombie is left behind a finished worker.
    threading.Thread(target=proc.wait, name=f"reap-worker-{proc.pid}", daemon=True).start()
    return proc.pid


def start_training(
    con: duckdb.DuckDBPyConnection,
    settings: Settings,
    kind: str,
    request: object,
    launch: Callable[[Path], int] | None = None,
) -> Job:
    """Start the job that trains the learned model ``kind`` with ``request`` (its learner's request dataclass).

    Raises:
        CurationError: no such learner, the learner refuses the request (e.g. its folder exists), another job is
            queued or running, or the worker could not be started (the job is then recorded as failed, with the
            reason).
    """
    chosen = learner(kind)
    request = chosen.prepare(con, request, settings)
    return launch_job(con, settings, kind, request.to_dict(), chosen.label, launch)


def start_retrain(
    con: duckdb.DuckDBPyConnection,
    request: RetrainRequest,
    settings: Settings,
    launch: Callable[[Path], int] | None = None,
) -> Job:
    """Start a job that builds a new model version (:func:`start_training` of ``retrain``).

    Raises:
        CurationError: unknown schema, another job queued or running, or the worker could not
            be started (the job is then recorded as failed, with the reason).
    """
    return start_training(con, settings, RETRAIN, request, launch)


def launch_job(
    con: duckdb.DuckDBPyConnection,
    settings: Settings,
    kind: str,
    request: dict,
    label: str,
    launch: Callable[[Path], int] | None = None,
) -> Job:
    """Record a job of ``kind``, export the store's snapshot and the request into its folder, start its worker.

    Raises:
        CurationError: another job is queued or running, or the worker could not be started (the job is
            then recorded as failed, with the reason, and its snapshot removed).
    """
    job = create_job(con, kind, request)
    job_dir = job_folder(settings, job.job_id)
    try:
        if job_dir.exists():
            shutil.rmtree(job_dir)  # the remains of a store that was reset; job ids are never reused in one store
        job_dir.mkdir(parents=True)
        set_job_dir(con, job.job_id, str(job_dir))
        from curation.learning.snapshot import export_snapshot

        export_snapshot(con, job_dir / SNAPSHOT)
        write_atomic(job_dir / REQUEST, json.dumps(request, indent=2))
        pid = (launch or spawn_worker)(job_dir)
    except (OSError, *USER_ERRORS, subprocess.SubprocessError) as exc:
        message = _os_message(exc, job_dir) if isinstance(exc, OSError) else str(exc)
        finish_job(con, job.job_id, "failed", f"could not start the worker: {message}")
        shutil.rmtree(job_dir / SNAPSHOT, ignore_errors=True)
        raise CurationError(f"{label} job {job.job_id} could not start: {message}") from None
    start_job(con, job.job_id, pid, str(job_dir))
    return get_job(con, job.job_id)


def _os_message(exc: OSError, where: Path) -> str:
    import errno

    if exc.errno == errno.ENOSPC:
        return f"the disk is full (no space left writing under {where}); free some space and retry"
    return f"{exc.strerror or exc} ({exc.filename or where})"


# --- following ----------------------------------------------------------------------------


def read_progress(job: Job) -> Progress | None:
    """The worker's last progress report, or None before its first."""
    if not job.job_dir:
        return None
    data = _read_json(Path(job.job_dir) / PROGRESS)
    if not data:
        return None
    return Progress(
        stage=str(data.get("state", "")), step=data.get("step"), total=data.get("total"), loss=data.get("loss"),
        eta_s=data.get("eta_s"), epoch=data.get("epoch"), updated_at=data.get("updated_at"),
    )


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
        return None  # not there yet (or being replaced: the writer renames complete files into place)


def worker_alive(pid: int | None) -> bool:
    """Whether the worker process ``pid`` is still running (not exited, not a zombie)."""
    if not pid:
        return False
    proc = _CHILDREN.get(pid)
    if proc is not None:
        return proc.poll() is None
    return pid_alive(pid, command_contains=b"curation.jobs.worker")


def poll_job(
    con: duckdb.DuckDBPyConnection, job: Job, before_activate: Callable[[Path], None] | None = None
) -> Job:
    """Bring a job's record up to date with its worker (finishing it when the worker is done)."""
    if job.finished or job.state != "running":
        return job
    job_dir = Path(job.job_dir)
    result = _worker_result(job_dir)
    if result is None and not worker_alive(job.pid):
        result = _worker_result(job_dir)  # it may have written its result just before exiting
        if result is None:
            _remove_staging(job)
            if (job_dir / CANCEL).exists():
                result = JobResult("cancelled", "cancelled; the worker was stopped")
            else:
                result = JobResult("failed", (
                    f"the worker process (pid {job.pid}) stopped without finishing — killed, or out of memory. "
                    f"The active model keeps serving; retry the job.{_log_tail(job_dir)}"))
    elif result is None and (job_dir / CANCEL).exists():
        if time.time() - (job_dir / CANCEL).stat().st_mtime > CANCEL_GRACE_S:
            _terminate(job.pid)
        return job
    if result is None:
        return job
    return finish(con, job, result, before_activate)


def _worker_result(job_dir: Path) -> JobResult | None:
    """The worker's ``result.json`` (None before it is written); one that does not read fails the job."""
    try:
        return read_result(job_dir / RESULT)
    except JobResultError as exc:
        return JobResult("failed", f"the worker's result could not be read: {exc}; the active model keeps serving")


def _remove_staging(job: Job) -> None:
    """The half-built version of a worker that died (never a published one: those have no .tmp)."""
    try:
        name = (Path(job.job_dir) / VERSION).read_text().strip()
        models_dir = Path(job.params.get("models_dir", ""))
    except (FileNotFoundError, AttributeError):
        return
    if name and models_dir.name:
        shutil.rmtree(models_dir / f"{registry.check_name(name)}.tmp", ignore_errors=True)


def _log_tail(job_dir: Path, lines: int = 5) -> str:
    try:
        tail = (job_dir / LOG).read_text(errors="replace").strip().splitlines()[-lines:]
    except FileNotFoundError:
        return ""
    return (" Last lines of its log:\n" + "\n".join(tail)) if tail else ""


def _terminate(pid: int | None) -> None:
    if pid and worker_alive(pid):
        try:
            os.killpg(pid, signal.SIGTERM)  # the worker leads its own process group
        except (ProcessLookupError, PermissionError):
            pass


def cancel_job(con: duckdb.DuckDBPyConnection, job: Job) -> Job:
    """Ask the worker to stop (it checks between steps); a job whose worker is gone is cancelled now."""
    if job.finished:
        return job
    if job.job_dir:
        Path(job.job_dir).mkdir(parents=True, exist_ok=True)
        (Path(job.job_dir) / CANCEL).touch()
    set_job_message(con, job.job_id, "cancelling: the worker stops at its next step")
    job = get_job(con, job.job_id)
    if job.state == "queued" or not worker_alive(job.pid):
        return finish(con, job, JobResult("cancelled", "cancelled"))
    return job


def recover_jobs(con: duckdb.DuckDBPyConnection,
                 before_activate: Callable[[Path], None] | None = None) -> list[Job]:
    """After an app (re)start: re-attach running jobs, finish those whose worker ended, fail the rest.

    A queued job never got its worker (the app stopped while starting it): it is marked failed.
    """
    out = []
    for job in active_jobs(con):
        if job.state == "queued":
            finish(con, job, JobResult("failed", "the app stopped before the worker started; start the job again"))
        else:
            poll_job(con, job, before_activate)
        out.append(get_job(con, job.job_id))
    return out


# --- finishing ----------------------------------------------------------------------------


def finish(con: duckdb.DuckDBPyConnection, job: Job, result: JobResult,
           before_activate: Callable[[Path], None] | None = None) -> Job:
    """Record the worker's outcome; for a new version, register it and activate it if it is good enough.

    ``before_activate(path)`` runs before the active flag flips (the app loads the new
    retriever there, so no search waits on it and none fails).
    """
    with _FINISH_LOCK:
        job = get_job(con, job.job_id)
        if job.finished:
            return job
        state, message = result.state, result.message
        # A learner that is not versioned (recogniser, relation scorer) has its result recorded as it is: the
        # workflow layer activates the model and loads what the worker wrote (curation.workflows.retrain.follow_job).
        chosen = learner(job.kind) if state == "succeeded" and job.kind in LEARNERS else None
        if chosen is not None and chosen.versioned:
            try:
                request = chosen.read_request(job.params, f"job {job.job_id}")
                version = registry.read_version(result.path)
                catalog.register_version(con, version)
                verdict = chosen.judge(con, request, version.path)  # on the evidence in its manifest
                if verdict.activate:
                    if before_activate is not None:
                        before_activate(version.path)
                    catalog.activate_version(con, version.version)
                message = f"{version.version}: {verdict.reason}"
                result = replace(result, activated=verdict.activate, verdict=verdict.reason)
            except (*USER_ERRORS, OSError) as exc:
                state, message = "failed", f"the new version could not be used: {exc}; the active model keeps serving"
        if state not in TERMINAL_STATES:
            state, message = "failed", f"the worker reported an unknown state '{state}': {message}"
        finish_job(con, job.job_id, state, message, result_json(result))
        if job.job_dir:
            shutil.rmtree(Path(job.job_dir) / SNAPSHOT, ignore_errors=True)  # the corpus copy; digest kept
        return get_job(con, job.job_id)


def wait_for(con: duckdb.DuckDBPyConnection, job: Job, interval_s: float = 2.0,
             report: Callable[[Job, Progress | None], None] | None = None,
             timeout_s: float | None = None) -> Job:
    """Poll a job until it finishes (the CLI's loop)."""
    started = time.time()
    while not job.finished:
        if timeout_s is not None and time.time() - started > timeout_s:
            raise CurationError(f"job {job.job_id} did not finish within {timeout_s:.0f} s")
        time.sleep(interval_s)
        job = poll_job(con, get_job(con, job.job_id))
        if report is not None:
            report(job, read_progress(job))
    return job
