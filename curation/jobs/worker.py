"""The background worker: ``python -m curation.jobs.worker <job folder>`` — train model X, whichever X.

The request's ``kind`` names the learned model (:data:`curation.learning.learner.LEARNERS`: "recogniser",
"relations"; a request without one is the model version's, "retrain", whose format predates the key); the worker
reads it as that learner's request and runs its :meth:`~curation.learning.learner.Learner.train` in the job folder.

Reads only the job folder (``request.json`` and the ``snapshot/`` the app exported) and writes only the new
artifact under the models folder, what the app loads afterwards, ``progress.json`` and, last, ``result.json``
(renamed into place when complete). It never opens the store. See ``curation.jobs.retraining``.

Result: a :class:`~curation.jobs.result.JobResult` (state, message; for a trained artifact also its name, folder,
device, dev scores, timings; for a model version its dev metrics, the baseline's, what it was trained on, settings).
"""

from __future__ import annotations

import errno
import json
import os
import sys
import time
import traceback
from dataclasses import replace
from pathlib import Path

from curation.errors import CurationError
from curation.jobs import result as job_result
from curation.jobs.result import JobResult
from curation.jobs.retraining import CANCEL, PROGRESS, REQUEST, RESULT, SNAPSHOT, VERSION

WORKER_NICENESS = 19  # nice(1) step of the worker: it trains on the CPU the app leaves idle


def write_result(job_dir: Path, result: JobResult) -> None:
    """Atomically write ``result.json`` (the app reads it only once it is complete)."""
    job_result.write_result(job_dir / RESULT, result)


def failure_message(exc: BaseException) -> str:
    """What a person reads on the Train & evaluate page when the job fails."""
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        where = f" in {exc.filename}" if exc.filename else ""
        return (f"the disk is full{where}: {exc.strerror or exc}. Free some space (old model versions or job "
                f"folders), then retry; the active model keeps serving")
    if isinstance(exc, OSError):
        return f"cannot write the new version: {exc.strerror or exc} ({exc.filename}); the active model keeps serving"
    if isinstance(exc, CurationError):
        return f"{exc}; the active model keeps serving"
    return f"{type(exc).__name__}: {exc} (see worker.log); the active model keeps serving"


def run(job_dir: Path) -> JobResult:
    """Do the job in ``job_dir`` and return its result (also written to ``result.json``)."""
    from curation.training_loop import TrainingCancelled, write_progress

    started = time.time()
    progress, cancel = job_dir / PROGRESS, job_dir / CANCEL
    try:
        write_progress(progress, state="preparing", step=None, total=None, loss=None, eta_s=None, epoch=None)
        try:
            data = json.loads((job_dir / REQUEST).read_text())
        except (FileNotFoundError, json.JSONDecodeError) as exc:
            raise CurationError(f"{job_dir / REQUEST} is missing or unreadable ({exc})") from None
        result = train(job_dir, data, progress, cancel)
        result = replace(result, timings_s={**result.timings_s, "total": round(time.time() - started, 1)})
    except TrainingCancelled as exc:
        result = JobResult("cancelled", str(exc))
    except Exception as exc:  # every failure becomes a job message; the traceback goes to worker.log
        traceback.print_exc()
        result = JobResult("failed", failure_message(exc))
    write_result(job_dir, result)
    return result


def train(job_dir: Path, data: object, progress: Path, cancel: Path) -> JobResult:
    """Run the request's learner in ``job_dir``; its artifact as the job's result (failures raise)."""
    from curation.learning.learner import RETRAIN, Workspace, learner

    if not isinstance(data, dict):
        raise CurationError(f"{job_dir / REQUEST}: not a job request (a JSON object is expected)")
    chosen = learner(str(data.get("kind", RETRAIN)))  # a retraining request has no kind: its format predates it
    request = chosen.read_request(data, f"{job_dir / REQUEST}")
    work = Workspace(folder=job_dir, snapshot=job_dir / SNAPSHOT, progress=progress, cancel=cancel,
                     staging=job_dir / VERSION)
    artifact = chosen.train(request, work)
    result = JobResult("succeeded", artifact.message, version=artifact.name, path=str(artifact.folder),
                       device=artifact.device, timings_s=dict(artifact.timings_s), scores=dict(artifact.scores))
    if artifact.report is not None:  # a model version's evidence (format 1 keeps it at the top level)
        report = artifact.report
        result = replace(result, metrics=report.metrics, baseline=report.baseline, training=report.training,
                         settings=report.settings)
    return result


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m curation.jobs.worker <job folder>", file=sys.stderr)
        return 2
    try:
        os.nice(WORKER_NICENESS)  # curators' clicks and searches come first on a shared CPU
    except OSError:
        pass
    job_dir = Path(argv[0])
    if not job_dir.is_dir():
        print(f"error: {job_dir} is not a job folder", file=sys.stderr)
        return 2
    result = run(job_dir)
    print(f"{result.state}: {result.message}", flush=True)
    return 0 if result.succeeded else 1


if __name__ == "__main__":
    sys.exit(main())
