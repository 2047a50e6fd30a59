"""A training job's outcome (any learner's): the worker's ``result.json`` and the copy the store keeps.

:class:`JobResult` is the one typed form; :func:`read_result` and :func:`write_result` are the
only code that reads or writes ``result.json`` (the worker writes it last, atomically; the app
reads it to finish the job), and :func:`job_result` reads the copy a finished job keeps in the
store (with what the app did: ``activated``, ``verdict``). A missing or unknown key, a value of
the wrong type or a file that is not JSON raises :class:`JobResultError` naming the file (or
the job) and the field.

Format 1 is what the worker has written since background retraining exists (commit 73ba5b5):
``state`` and ``message`` always; for a succeeded job also ``version``, ``path``, ``metrics``,
``baseline``, ``training``, ``device``, ``settings`` and ``timings_s``; ``activated`` and
``verdict`` once the app has judged it. ``scores`` (a recogniser's or relation scorer's dev scores) came later and
may be absent. ``DecisionSummary``, ``TrainingSummary`` and ``WorkerSettings`` are the model version's
learner's report (:mod:`curation.learning.version_report`), kept here as they were. Files and store
records without ``format`` read as format 1; in them the keys a failed or cancelled job has no use for
may be absent (read as empty), a baseline written as ``{}`` (none evaluated) reads as None, and an empty record (a
job that finished without a result, e.g. its worker never started) is no result at all.
This code writes every field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from curation.errors import CurationError
from curation.files import write_atomic
from curation.learning.version_report import DecisionSummary, TrainingSummary, WorkerSettings
from curation.store.jobs import Job
from curation.versions.manifest import Baseline, DevMetrics
from curation.versions.typed_json import OPTIONAL, check_format, decode, encode, load_json

__all__ = [  # the model version's report is read from here as it always was
    "DecisionSummary", "JobResult", "JobResultError", "TrainingSummary", "WorkerSettings", "job_result", "parse_result",
    "read_result", "result_json", "write_result",
]

FORMAT = 1  # the result format this code writes (and the newest it reads)
SUCCEEDED_KEYS = ("version", "path", "metrics", "baseline", "training", "device", "settings", "timings_s")


class JobResultError(CurationError):
    """A job result that cannot be read (or written so that it reads back)."""


@dataclass(frozen=True)
class JobResult:
    """What a training job came to, whichever learner it ran (:mod:`curation.learning.learner`).

    Attributes:
        format: the result format (absent from files older than the key: 1).
        state: ``succeeded``, ``failed`` or ``cancelled``.
        message: what a person reads about it.
        version, path: the new model version and its folder (succeeded jobs).
        metrics: its dev metrics (empty without a dev split).
        baseline: the active version's dev metrics on the same split (None: not evaluated).
        training: what it was trained on.
        device: where it was trained.
        settings: the training settings used.
        timings_s: seconds per stage (``prepare``, ``baseline_eval``, ``build``, ``total``).
        scores: the artifact's dev scores as its manifest has them (a recogniser's ``ents_f``, ``GENE.f``, ...; a
            relation scorer's ``dev_pair_f1_mean``, ...); empty for a model version (its ``metrics``).
        activated: whether the app made it the active version (None until the app judged it).
        verdict: why it was or was not activated.
    """

    state: Literal["succeeded", "failed", "cancelled"]
    message: str
    format: int = field(default=FORMAT, metadata=OPTIONAL)
    version: str = field(default="", metadata=OPTIONAL)
    path: str = field(default="", metadata=OPTIONAL)
    metrics: DevMetrics = field(default_factory=DevMetrics, metadata=OPTIONAL)
    baseline: Baseline | None = field(default=None, metadata=OPTIONAL)
    training: TrainingSummary | None = field(default=None, metadata=OPTIONAL)
    device: str = field(default="", metadata=OPTIONAL)
    settings: WorkerSettings | None = field(default=None, metadata=OPTIONAL)
    timings_s: Mapping[str, float] = field(default_factory=dict, metadata=OPTIONAL)
    scores: Mapping[str, float] = field(default_factory=dict, metadata=OPTIONAL)
    activated: bool | None = field(default=None, metadata=OPTIONAL)
    verdict: str = field(default="", metadata=OPTIONAL)

    @property
    def succeeded(self) -> bool:
        return self.state == "succeeded"


def parse_result(data: object, where: str) -> JobResult:
    """A job result from parsed JSON (``where`` names its file or record in messages).

    Raises:
        JobResultError: a newer format, a missing or unknown field, or a value of the wrong type.
    """
    if isinstance(data, dict):
        check_format(data, FORMAT, where, JobResultError, "result")
        if "format" not in data and data.get("baseline") == {}:
            data = {**data, "baseline": None}  # format 1 before the key: no baseline was written as {}
        if data.get("state") == "succeeded":
            missing = [key for key in SUCCEEDED_KEYS if key not in data]
            if missing:
                raise JobResultError(f"{where}: field '{missing[0]}' is missing (a succeeded job's result has it)")
    return decode(JobResult, data, where, JobResultError)


def read_result(path: str | Path) -> JobResult | None:
    """The result in the file ``path``; None when the worker has not written it (yet).

    Raises:
        JobResultError: the file is unreadable, not JSON, or not a job result of a known format
            (the message names the file and the field).
    """
    path = Path(path)
    try:
        data = load_json(path, JobResultError, "job result")
    except FileNotFoundError:
        return None
    return parse_result(data, str(path))


def write_result(path: str | Path, result: JobResult) -> None:
    """Write ``result`` to the file ``path`` atomically (the app reads it only once it is complete).

    Raises:
        JobResultError: ``result`` holds a value its file could not be read back with.
        OSError: the file cannot be written.
    """
    path = Path(path)
    text = json.dumps(result_json(result), indent=2, default=str)
    parse_result(json.loads(text), str(path))  # what is written must read back
    write_atomic(path, text)


def result_json(result: JobResult) -> dict[str, object]:
    """The JSON object of ``result`` (as written to ``result.json`` and kept in the store)."""
    return encode(result)


def job_result(job: Job) -> JobResult | None:
    """The result the store keeps for ``job``; None while it runs or when it finished without one.

    Raises:
        JobResultError: the recorded result is not a job result of a known format.
    """
    if not job.result:
        return None
    return parse_result(job.result, f"the result recorded for job {job.job_id}")


def unapplied_result(job: Job, kind: str) -> JobResult | None:
    """The result of a succeeded job of ``kind`` that the app has not applied yet (its ``activated`` still unset);
    None for any other job, and for a result that cannot be read (there is nothing to apply)."""
    if job.kind != kind or job.state != "succeeded":
        return None
    try:
        result = job_result(job)
    except JobResultError:
        return None
    return result if result is not None and result.activated is None else None
