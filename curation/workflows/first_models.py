"""The learned parts a first load makes active without being asked: the relation scorer and a base encoder version.

A load of the sample planned with training (the app's "Load the sample", ``python -m curation quickstart`` without
``--no-train``) ends with two steps recorded like its others (:mod:`curation.store.loads`), run once the
abstracts are annotated:

* ``relations``: the relation scorer trained on BioRED + BC5CDR Train (their Dev and Test held out, selected on
  Dev; a data folder without some of these files trains on the Train files it has, and the line says what was held
  out and judged on), activated when not worse than the active one, the stored pairs re-scored: in the app as the
  background job the Train page starts (a worker process; the app applies it when it ends, also after a restart),
  on the command line here;
* ``base-version``: the offline MiniLM indexing the corpus, untrained (a zero-shot version, as ``python -m
  curation train --zero-shot``): a dense index for the served search and the vectors Explore embeddings shows.
  It serves as the newest version that covers the corpus (:mod:`curation.versions.serving`).

* ``recogniser``: the recogniser the code ships (:mod:`curation.learning.recogniser.shipped`; the CNN trains for
  ~50 min on this 2-core CPU, so it is trained once by a documented command and kept in the repository) installed into
  ``models/recognisers/`` and activated by the job that annotates the corpus with it (a worker process, as the
  Train page's "Activate"); skipped when a recogniser is already active or none ships.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

import duckdb

from curation import access
from curation.config import Settings
from curation.errors import USER_ERRORS
from curation.store.jobs import Job
from curation.store.loads import DONE, FAILED, PENDING, finish_step, unfinished_load
from curation.workflows.quickstart import BASE_VERSION, RECOGNISER, RELATIONS, TRAIN_STEPS, LoadStopped

BASE_SCHEMA = "PO"
# In the app the learned parts begin once the curators pause (runtime.foreground.wait_for_quiet): their store exports
# (~6 s each, on every core) and the base version's snapshot (~9 s holding the GIL) made the first search after a
# load take 9 s instead of 2.4 s (bench/first_run.py).
TRAIN_DELAY_S = 15.0  # after the load's message: the time to read it and open Curate
TRAIN_QUIET_S = 10.0  # ... then once no search or grade has run for this long
TRAIN_QUIET_WAIT_S = 300.0  # ... or this long after the delay, with curators working without a pause
WAITING = "the learned parts: waiting for a pause in the curators' work"
STEP_LABELS = {RELATIONS: "the relation scorer (BioRED + BC5CDR Train)",
               BASE_VERSION: "the base encoder version (MiniLM indexing the abstracts)",
               RECOGNISER: "the shipped recogniser (annotating the abstracts)"}

Report = Callable[[str, int, int], None]


def train_relations_here(con: duckdb.DuckDBPyConnection, settings: Settings) -> str:
    """Train the relation scorer in this process, activate it when not worse on Dev, re-score (the command line)."""
    from curation.relations.training import describe_training
    from curation.workflows.relation_scoring import activate_scorer, judge, rescore, train_relation_scorer

    who = access.local_operator()
    folder, manifest = train_relation_scorer(con, settings, who=who)
    activate, verdict = judge(con, manifest)
    if not activate:
        return f"relation scorer {manifest['name']} trained ({describe_training(manifest)}), not activated: {verdict}"
    active = activate_scorer(con, folder, who=who)
    scored = rescore(con, active, who=who)
    return f"relation scorer {active.version} active ({describe_training(manifest)}); {scored.summary()}"


def start_relations_job(con: duckdb.DuckDBPyConnection, settings: Settings) -> Job:
    """Start the relation scorer's background job (the app); :func:`follow_job` sees it applied."""
    from curation.workflows.relation_scoring import start_relation_training

    return start_relation_training(con, settings, who=access.local_operator())


def start_shipped_recogniser(con: duckdb.DuckDBPyConnection, settings: Settings) -> tuple[Job | None, str]:
    """Install the shipped recogniser and start the job that annotates the corpus with it and activates it; (the
    job, a line). No job when a recogniser is already active (a curator's choice is kept) or none ships."""
    from curation.learning.recogniser.learner import RECOGNISERS
    from curation.learning.recogniser.shipped import install, shipped_recogniser
    from curation.store.annotations import get_active_entity_model
    from curation.workflows.recogniser_training import start_recogniser_activation

    active = get_active_entity_model(con, "recogniser")
    if active is not None:
        return None, f"recogniser {active.name} already active: the shipped one is not installed"
    shipped = shipped_recogniser(settings.data_dir)
    if shipped is None:
        return None, "no recogniser ships with this code (or not for this spaCy): highlights come from dictionaries"
    folder = install(shipped, Path(settings.models_dir) / RECOGNISERS)
    job = start_recogniser_activation(con, settings, folder, who=access.local_operator())
    return job, f"{shipped.note()}: background job {job.job_id}"


def load_start_note(settings: Settings, message: str) -> str:
    """What a load planned with training says at its start about the annotator (``message``: why the active
    recogniser does not annotate). Without an active recogniser but with a shipped one: that the load's last step
    annotates again with it, instead of "no recogniser trained"."""
    from curation.entities.served_annotator import NO_RECOGNISER
    from curation.learning.recogniser.shipped import shipped_recogniser

    if message != NO_RECOGNISER or shipped_recogniser(settings.data_dir) is None:
        return message
    return ("the abstracts are annotated with the dictionaries first; the load's last step annotates them again with "
            "the shipped recogniser (a background job) and activates it")


def follow_job(con: duckdb.DuckDBPyConnection, job: Job, report: Report, stop: Callable[[], bool] | None,
               step: str, interval_s: float = 2.0) -> str:
    """Follow a background job until it ends and what it made is applied (as the sidebar does on each run, so
    that it happens with no page open); a line for the summary. Stopped early (the process exits), the job goes
    on: the app's next start applies it."""
    from curation.workflows import retrain

    while not job.finished:
        if stop is not None and stop():
            return f"background job {job.job_id} goes on; the app's next start applies it"
        time.sleep(interval_s)
        job = retrain.follow_job(con, job, who=access.BACKGROUND_JOB)
        reported = retrain.progress(job)
        report(f"{step}: {retrain.describe_progress(job, reported)}", 0, 0)
    return f"job {job.job_id} {job.state}: {job.message}"


def build_base_version(con: duckdb.DuckDBPyConnection, settings: Settings, schema_name: str = BASE_SCHEMA) -> str:
    """The offline MiniLM, untrained, indexing the corpus: a zero-shot model version published under the models
    folder (it then serves as the newest version covering the corpus)."""
    from curation.learning.build import BuildRequest, IndexChoice
    from curation.learning.chain import build_from_snapshot
    from curation.learning.snapshot import store_snapshot
    from curation.schemas import resolve_schema
    from curation.store.base import list_schemas

    schema = resolve_schema(schema_name, list_schemas(con))
    snapshot = store_snapshot(con)
    request = BuildRequest(schema=schema, train=False, index=IndexChoice.from_settings(settings))
    built = build_from_snapshot(snapshot, request, Path(settings.models_dir), log=lambda _line: None)
    return f"base encoder version {built.version.path.name} serves ({built.version.manifest.total_seconds} s)"


@contextmanager
def yielding_cpu() -> Iterator[None]:
    """While the app builds the base version in its own process: the building thread at the workers' niceness (on
    Linux a thread's own; this is the training steps' thread, which ends with them) and torch computing in that
    thread alone, so that a curator's search in the same process has the other core and comes first. The command
    line builds at full speed.
    """
    import torch

    from curation.jobs.worker import WORKER_NICENESS

    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WORKER_NICENESS)
    except (AttributeError, OSError):  # another OS, or not permitted: the priority stays
        pass
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def train_pending(con: duckdb.DuckDBPyConnection, settings: Settings, report: Report, *, background: bool,
                  stop: Callable[[], bool] | None = None) -> str:
    """Run the newest load's training steps still pending, each marked done or failed; a line per step, in the
    steps' order.

    ``background``: the relation scorer as a background job (the app) instead of here (the command line).

    A job's worker runs beside this process (one job at a time, :mod:`curation.jobs.retraining`), so the first
    job step starts first, the steps done here run while it works, and the other job steps start once it ends:
    in the app the relation scorer's job trains while the base version is built, then the recogniser's job
    annotates; on the command line the recogniser's job annotates while the scorer and the base version are built.

    Raises:
        LoadStopped: ``stop`` said so between steps (the step not begun stays pending).
    """
    load = unfinished_load(con)
    if load is None:
        return ""
    pending = [s for s in load.steps if s.kind in TRAIN_STEPS and s.state == PENDING]
    numbers = {step.position: number for number, step in enumerate(pending, start=1)}
    lines: dict[int, str] = {}

    def is_job(kind: str) -> bool:
        return kind == RECOGNISER or (kind == RELATIONS and background)

    def label(step) -> str:
        return f"{numbers[step.position]}/{len(pending)} · {STEP_LABELS[step.kind]}"

    def begin(step) -> tuple[Job | None, float]:
        """Run (or start, for a job) one step and mark it; its job when it started one."""
        if stop is not None and stop():
            raise LoadStopped("the training steps left are run at the next start")
        report(label(step), numbers[step.position] - 1, len(pending))
        started = time.perf_counter()
        job = None
        try:
            if step.kind == RELATIONS and background:
                job = start_relations_job(con, settings)
                line = f"relation scorer: background job {job.job_id}"
            elif step.kind == RELATIONS:
                line = train_relations_here(con, settings)
            elif step.kind == RECOGNISER:
                job, line = start_shipped_recogniser(con, settings)
            else:
                with yielding_cpu() if background else nullcontext():
                    line = build_base_version(con, settings)
        except (*USER_ERRORS, OSError) as exc:
            finish_step(con, load.load_id, step.position, FAILED, str(exc)[:500])
            lines[step.position] = f"{step.kind} failed: {exc}"
            return None, started
        # Done once started: a job outlives this process (the next start applies it), it is never started twice.
        finish_step(con, load.load_id, step.position, DONE, line)
        lines[step.position] = f"{line} [{time.perf_counter() - started:.0f} s]"
        return job, started

    def end(step, job: Job | None, started: float) -> None:
        if job is not None:
            what = "recogniser" if step.kind == RECOGNISER else "relation scorer"
            lines[step.position] = (f"{what} {follow_job(con, job, report, stop, label(step))} "
                                    f"[{time.perf_counter() - started:.0f} s]")

    jobs = [s for s in pending if is_job(s.kind)]
    first = [(step, *begin(step)) for step in jobs[:1]]
    for step in (s for s in pending if not is_job(s.kind)):
        begin(step)
    for step, job, started in first:
        end(step, job, started)
    for step in jobs[1:]:
        end(step, *begin(step))
    return "; ".join(lines[s.position] for s in pending if s.position in lines) + "." if lines else ""
