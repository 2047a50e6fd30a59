"""The recogniser's :class:`~curation.learning.learner.Learner`: what a job of kind ``recogniser`` runs.

The worker:

1. trains with :func:`~curation.learning.recogniser.data.train_standard_recogniser` into
   ``models/recognisers/<name>.tmp`` (renamed to ``<name>`` when complete; the name is claimed first, so the app
   removes the staging folder of a worker that died), with a spaCy logger that writes each evaluation (epoch, dev
   F1, loss) to ``progress.json`` and stops training when ``cancel`` appears — or, for an activation job, takes the
   trained folder it is given;
2. annotates every document of the snapshot with it (:mod:`.annotations`) for the app to load.

The app then judges it (:func:`~curation.learning.recogniser.activation.judge_recogniser`), activates it and loads the
annotations (:func:`curation.workflows.recogniser_training.apply_recogniser_job`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import duckdb

from curation.config import Settings
from curation.errors import CurationError
from curation.learning.job_files import JobRequest
from curation.learning.learner import RECOGNISER, TrainedArtifact, Workspace
from curation.versions.activation import Verdict
from curation.versions.registry import check_name, timestamped_name

KIND = RECOGNISER
RECOGNISERS = "recognisers"  # the models folder's sub-folder of trained recognisers
LOGGER = "curation.job_progress.v1"


@dataclass(frozen=True)
class RecogniserRequest(JobRequest):
    """What a recogniser job does (``request.json``).

    Attributes:
        kind: always "recogniser" (the worker dispatches on it).
        name: the new folder's name under ``models_dir`` (train); "" for an activation job.
        folder: an already trained recogniser folder to annotate with (an activation job; no training).
        data_dir: the annotated corpora (BioRED, BC5CDR) to train on.
        models_dir: where recognisers live (``<models>/recognisers``; filled in at start).
        width: token vector width; max_epochs: at most this many epochs (best dev checkpoint kept).
        use_gpu: GPU id, -1 = the CPU.
        linker: the linker folder active when the job started ("" = none): the annotations use it.
    """

    WHAT = "recogniser request"

    kind: str = KIND
    name: str = ""
    folder: str = ""
    data_dir: str = ""
    models_dir: str = ""
    width: int = 128
    max_epochs: int = 25
    use_gpu: int = -1
    linker: str = ""

    def __post_init__(self) -> None:
        if self.kind != KIND:
            raise CurationError(f"a recogniser request has kind '{KIND}', not '{self.kind}'")
        if bool(self.name) == bool(self.folder):
            raise CurationError("a recogniser job either trains a new recogniser (a name) or annotates with a "
                                "trained one (a folder)")
        if self.name:
            check_name(self.name)
        if self.width < 8 or self.max_epochs < 1:
            raise CurationError("the width must be at least 8 and the epochs at least 1")


def new_recogniser_name(prefix: str = "biomed") -> str:
    """A folder name no earlier job used: ``biomed-20250101-120000``."""
    return timestamped_name(prefix)


def _register_progress_logger() -> None:
    """A spaCy training logger that reports each evaluation to ``progress.json`` and obeys ``cancel``."""
    import spacy

    if LOGGER in spacy.registry.loggers:
        return

    def make(progress: str, cancel: str, max_epochs: int):
        from curation.training_loop import TrainingCancelled, write_progress

        def setup(nlp, stdout=None, stderr=None):
            started = time.time()

            def log_step(info: dict | None) -> None:
                if Path(cancel).exists():
                    raise TrainingCancelled("cancelled while training; the staging folder was removed")
                if info is None:  # a step without an evaluation
                    return
                epoch = int(info.get("epoch") or 0) + 1
                write_progress(Path(progress), state=f"training · dev F1 {float(info.get('score') or 0):.3f}",
                               step=min(epoch, max_epochs), total=max_epochs,
                               loss=float((info.get("losses") or {}).get("ner", 0.0)), eta_s=None, epoch=epoch,
                               training_step=info.get("step"), elapsed_s=round(time.time() - started, 1))
                print(f"epoch {epoch} step {info.get('step')}: dev score {info.get('score')}", flush=True)

            return log_step, lambda: None

        return setup

    spacy.registry.loggers(LOGGER, func=make)


class RecogniserLearner:
    """The entity recogniser's learner (module docstring)."""

    kind = KIND
    label = "recogniser"
    versioned = False

    def title(self, params: Mapping[str, Any]) -> str:
        return "Recogniser training" if params.get("name") else "Recogniser activation"

    def read_request(self, data: Mapping[str, Any], where: str) -> RecogniserRequest:
        return RecogniserRequest.from_dict(dict(data), where)

    def prepare(self, con: duckdb.DuckDBPyConnection, request: RecogniserRequest,
                settings: Settings) -> RecogniserRequest:
        """The models folder filled in; a new recogniser's folder must not exist yet.

        Raises:
            CurationError: the new folder exists already.
        """
        request = replace(request, models_dir=str(settings.models_dir / RECOGNISERS))
        if request.name and (Path(request.models_dir) / request.name).exists():
            raise CurationError(f"{Path(request.models_dir) / request.name} exists already; choose another name")
        return request

    def train(self, request: RecogniserRequest, work: Workspace) -> TrainedArtifact:
        """Train a recogniser (or take the folder given) and annotate the snapshot with it."""
        from curation.entities.recogniser import load_recogniser, read_recogniser_manifest
        from curation.learning.recogniser.annotations import annotate_snapshot
        from curation.training_loop import write_progress

        timings: dict[str, float] = {}
        started = time.time()
        if request.name:
            from curation.learning.recogniser.data import check_data_dir, train_standard_recogniser

            check_data_dir(Path(request.data_dir))
            folder = Path(request.models_dir) / request.name
            work.claim(request.name)  # first: the app removes <name>.tmp if this process dies
            _register_progress_logger()
            logger = {"@loggers": LOGGER, "progress": str(work.progress), "cancel": str(work.cancel),
                      "max_epochs": request.max_epochs}
            write_progress(work.progress, state="training", step=0, total=request.max_epochs, loss=None, eta_s=None,
                           epoch=0)
            train_standard_recogniser(Path(request.data_dir), folder, width=request.width,
                                      max_epochs=request.max_epochs, use_gpu=request.use_gpu,
                                      overrides={"training.logger": logger})
            timings["train"] = round(time.time() - started, 1)
        else:
            folder = Path(request.folder)
        manifest = read_recogniser_manifest(folder)
        recogniser = load_recogniser(folder)
        annotated, _, note = annotate_snapshot(work, recogniser, request.linker)
        timings["annotate"] = round(time.time() - started - timings.get("train", 0.0), 1)
        f1 = manifest.dev_scores.get("ents_f")
        what = f"trained {manifest.name}" if request.name else f"{manifest.name}"
        score = f" (dev F1 {f1:.3f} on {manifest.selected_on})" if f1 is not None else ""
        return TrainedArtifact(
            name=manifest.name, folder=folder, device=manifest.device, scores=dict(manifest.dev_scores),
            message=f"{what}{score}; {annotated:,} abstracts annotated with it{note}", timings_s=timings,
        )

    def judge(self, con: duckdb.DuckDBPyConnection, request: RecogniserRequest, folder: Path) -> Verdict:
        from curation.learning.recogniser.activation import judge_recogniser

        return judge_recogniser(con, folder, chosen=bool(request.folder))


LEARNER = RecogniserLearner()
