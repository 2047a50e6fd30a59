"""The background worker: ``python -m curation.jobs.worker <job folder>``.

A request whose ``kind`` is "recogniser" is a recogniser job (:mod:`curation.jobs.recogniser`), "relations" a
relation-scorer job (:mod:`curation.jobs.relations`);
any other is a retraining job, described below.

Reads only the job folder (``request.json`` and the ``snapshot/`` the app exported) and writes
only a new version under the models folder, ``progress.json`` and, last, ``result.json``
(renamed into place when complete). It never opens the store. See ``curation.jobs.retraining``.

Result: a :class:`~curation.jobs.result.JobResult` (state, message; for a built version also its
name, folder, dev metrics, the baseline's, what it was trained on, device, settings, timings).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sys
import time
import traceback
from dataclasses import replace
from pathlib import Path

from curation.errors import CurationError
from curation.files import write_atomic
from curation.jobs import result as job_result
from curation.jobs.result import DecisionSummary, JobResult, TrainingSummary, WorkerSettings
from curation.jobs.retrain_request import RetrainRequest
from curation.jobs.retraining import CANCEL, PROGRESS, REQUEST, RESULT, SNAPSHOT, VERSION
from curation.versions.manifest import training_report

WORKER_NICENESS = 19  # nice(1) step of the retraining worker: it trains on the CPU the app leaves idle
MIN_FREE_BYTES = 300 * 2**20  # a MiniLM version takes ~100 MB (weights + indexes); staged then renamed
FREE_BYTES_PER_DOCUMENT = 8 * 1024  # dense vectors, BM25 postings and the snapshot copy, generously


def write_result(job_dir: Path, result: JobResult) -> None:
    """Atomically write ``result.json`` (the app reads it only once it is complete)."""
    job_result.write_result(job_dir / RESULT, result)


def check_free_space(folder: Path, documents: int) -> None:
    """Fail early, with a clear message, when the models folder's disk cannot hold a new version.

    Raises:
        OSError: ENOSPC, naming the folder and what is needed.
    """
    folder.mkdir(parents=True, exist_ok=True)
    need = MIN_FREE_BYTES + documents * FREE_BYTES_PER_DOCUMENT
    free = shutil.disk_usage(folder).free
    if free < need:
        raise OSError(errno.ENOSPC, f"only {free / 2**20:.0f} MB free for a new version; it needs about "
                                    f"{need / 2**20:.0f} MB", str(folder))


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
        if isinstance(data, dict) and data.get("kind") == "recogniser":  # the recogniser job (jobs/recogniser.py)
            from curation.jobs.recogniser import run_recogniser_job

            result = run_recogniser_job(job_dir, data, progress, cancel)
        elif isinstance(data, dict) and data.get("kind") == "relations":  # the relation scorer (jobs/relations.py)
            from curation.jobs.relations import run_relations_job

            result = run_relations_job(job_dir, data, progress, cancel)
        else:
            result = _train(job_dir, RetrainRequest.from_dict(data, f"{job_dir / REQUEST}"), progress, cancel)
        result = replace(result, timings_s={**result.timings_s, "total": round(time.time() - started, 1)})
    except TrainingCancelled as exc:
        result = JobResult("cancelled", str(exc))
    except Exception as exc:  # every failure becomes a job message; the traceback goes to worker.log
        traceback.print_exc()
        result = JobResult("failed", failure_message(exc))
    write_result(job_dir, result)
    return result


def _train(job_dir: Path, request: RetrainRequest, progress: Path, cancel: Path) -> JobResult:
    import torch

    from curation.config import load_settings
    from curation.learning.build import BuildRequest, IndexChoice
    from curation.learning.chain import ChainOptions, build_from_snapshot
    from curation.learning.cross_encoder import CrossEncoderConfig
    from curation.learning.sampling import SamplingConfig
    from curation.learning.snapshot import load_snapshot
    from curation.learning.training import TrainConfig
    from curation.versions.registry import new_version_name

    cuda = request.device.startswith("cuda") or (not request.device and torch.cuda.is_available())
    request = request.for_device(cuda)
    print(f"device {'cuda' if cuda else 'cpu'}: batch {request.batch_size}, {request.max_seq_length} tokens",
          flush=True)
    snapshot = load_snapshot(job_dir / SNAPSHOT)
    schema = snapshot.schema(request.schema)
    models_dir = Path(request.models_dir)
    check_free_space(models_dir, len(snapshot.documents))
    build = BuildRequest(
        schema=schema,
        base_model=request.base_model,
        version=new_version_name(schema.name, "edel"),
        train_config=TrainConfig(max_seq_length=request.max_seq_length).with_loop(
            epochs=request.epochs, batch_size=request.batch_size, learning_rate=request.learning_rate,
            max_steps=request.max_steps, device=request.device, seed=request.seed, patience=request.patience),
        sampling=SamplingConfig(per_class=request.per_class, seed=request.seed),
        feedback=request.feedback,
        index=IndexChoice.from_settings(load_settings(), kind=request.index_kind, backend=request.index_backend),
        cross_encoder=(CrossEncoderConfig(max_pairs=request.cross_encoder_max_pairs).with_loop(
                           device=request.device, epochs=2 if cuda else 1, seed=request.seed)
                       if request.cross_encoder == "on" or (request.cross_encoder == "auto" and cuda) else None),
    )
    options = ChainOptions(
        seed=request.seed, decisions=snapshot.decisions if request.use_decisions else None, use_kb=request.use_kb,
        require_pairs=True, baseline=Path(request.baseline) if request.baseline else None, progress_file=progress,
        cancel_file=cancel,
        # the version's name first, so the app can clear its staging folder if this process dies
        before_training=lambda name: write_atomic(job_dir / VERSION, name),
        log=lambda line: print(line, flush=True),
    )
    built = build_from_snapshot(snapshot, build, models_dir, options)
    version, training, feedback = built.version, built.training, built.feedback
    dev_queries = set(built.dev.queries.values())
    return JobResult(
        state="succeeded",
        message=f"built {version.version}",
        version=version.version,
        path=str(version.path),
        metrics=version.manifest.dev,
        baseline=built.baseline,
        training=TrainingSummary(
            pairs=len(training.pairs),
            report=training_report(training.report()),
            decisions=DecisionSummary(**feedback.summary()),
            decision_pairs_on_dev_queries=sum(1 for p in feedback.pairs if p.query in dev_queries),
            dev_queries=len(built.dev.queries),
        ),
        device=version.manifest.device,
        settings=WorkerSettings(batch_size=request.batch_size, max_seq_length=request.max_seq_length,
                                epochs=request.epochs, learning_rate=request.learning_rate),
        timings_s=dict(built.timings_s),
    )


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
