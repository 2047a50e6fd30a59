"""The linker's :class:`~curation.learning.learner.Learner`: what a job of kind ``linker`` (and
``python -m curation train-linker``, in process: :func:`train_in_process`) runs.

The worker reads the linker's data from the data directory (:func:`~curation.learning.linker.data.load_linker_data`),
fine-tunes the name encoder through the one loop (progress to ``progress.json``, stopping when ``cancel`` appears),
chooses w and the apply rule on dev, and publishes ``models/linkers/<name>`` (staged as ``<name>.tmp``; the name is
claimed first). It prints the data's size and every 50th step, which the worker's log (or the terminal) keeps.

The app then judges it (:func:`~curation.learning.linker.activation.judge_linker`); activating a linker is
:func:`curation.workflows.entities.activate_entity_model`'s (the annotator loads it).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import duckdb

from curation.config import Settings
from curation.errors import CurationError
from curation.learning.job_files import JobRequest
from curation.learning.learner import LINKER, TrainedArtifact, Workspace
from curation.learning.linker.name_encoder import NAME_ENCODER_LOOP
from curation.training_loop import LoopEvent
from curation.versions.activation import Verdict
from curation.versions.registry import check_name, timestamped_name

KIND = LINKER
LINKERS = "linkers"  # the models folder's sub-folder of trained linkers
DEFAULT_NAME = "names-minilm"
REPORT_EVERY = 50  # steps between the printed progress lines


def new_linker_name(prefix: str = "names") -> str:
    """A folder name no earlier job used: ``names-20250101-120000``."""
    return timestamped_name(prefix)


@dataclass(frozen=True)
class LinkerRequest(JobRequest):
    """What a linker job does (``request.json``).

    Attributes:
        kind: always "linker" (the worker dispatches on it).
        name: the linker's folder name under ``models_dir``.
        data_dir: the data directory (BioRED, BC5CDR, DrugBank's vocabulary; :data:`~.data.FILES`).
        models_dir: where linkers live (``<models>/linkers``; filled in at start).
        steps: fine-tuning steps (the loop's ``max_steps``); device: "" = CUDA when present; seed: the loop's.
        base_model: a sentence-transformers name or folder ("" = the packaged MiniLM).
        vocabularies: add the installed MeSH and gene vocabularies' names (when installed).
    """

    WHAT = "linker request"

    kind: str = KIND
    name: str = DEFAULT_NAME
    data_dir: str = ""
    models_dir: str = ""
    steps: int = NAME_ENCODER_LOOP.max_steps
    device: str = ""
    seed: int = 13
    base_model: str = ""
    vocabularies: bool = True

    def __post_init__(self) -> None:
        if self.kind != KIND:
            raise CurationError(f"a linker request has kind '{KIND}', not '{self.kind}'")
        check_name(self.name)
        if self.steps < 1:
            raise CurationError("the linker trains for at least one step")


class LinkerLearner:
    """The entity linker's learner (module docstring)."""

    kind = KIND
    label = "linker"
    versioned = False

    def title(self, params: Mapping[str, Any]) -> str:
        return "Linker training"

    def read_request(self, data: Mapping[str, Any], where: str) -> LinkerRequest:
        return LinkerRequest.from_dict(dict(data), where)

    def prepare(self, con: duckdb.DuckDBPyConnection, request: LinkerRequest, settings: Settings) -> LinkerRequest:
        """The models folder (and, when not given, the data directory) filled in; the data must be there and the
        new linker's folder must not exist yet.

        Raises:
            CurationError: a data file is missing, or the folder exists already.
        """
        from curation.learning.linker.data import check_data_dir

        request = replace(request, models_dir=str(Path(settings.models_dir) / LINKERS),
                          data_dir=request.data_dir or str(settings.data_dir))
        check_data_dir(request.data_dir)
        if (Path(request.models_dir) / request.name).exists():
            raise CurationError(f"{Path(request.models_dir) / request.name} exists already; choose another name")
        return request

    def train(self, request: LinkerRequest, work: Workspace) -> TrainedArtifact:
        """Read the data, fine-tune, calibrate and publish the linker folder."""
        from curation.learning.linker.data import check_data_dir, load_linker_data
        from curation.learning.linker.name_encoder import NameEncoderConfig
        from curation.learning.linker.training import train_linker
        from curation.training_loop import check_cancel, progress_writer, write_progress

        started = time.time()
        check_data_dir(request.data_dir)
        write_progress(work.progress, state="reading the linker's data", step=None, total=None, loss=None,
                       eta_s=None, epoch=None)
        data = load_linker_data(request.data_dir, vocabularies=request.vocabularies)
        print(f"{len(data.sets)} concepts ({sum(len(set(v)) > 1 for v in data.sets.values())} with two names or "
              f"more), {len(data.dev)} dev mentions", flush=True)
        timings = {"data": round(time.time() - started, 1)}
        check_cancel(work.cancel, "cancelled before training; nothing was written")
        folder = Path(request.models_dir) / request.name
        work.claim(request.name)  # first: the app removes <name>.tmp if this process dies
        keep_file = progress_writer(work.progress, "fine-tuning the name encoder")

        def on_event(event: LoopEvent) -> None:
            keep_file(event)
            if event.phase == "step" and (event.step == event.total or event.step % REPORT_EVERY == 0):
                print(f"  step {event.step}/{event.total}  loss {event.loss:.4f}", flush=True)

        config = NameEncoderConfig().with_loop(max_steps=request.steps, device=request.device, seed=request.seed)
        _, manifest = train_linker(data.sets, data.kinds, data.lexicon, data.dev, folder, config,
                                   base_model=request.base_model, counts=data.counts, on_event=on_event,
                                   cancel_file=work.cancel)
        timings["train"] = round(time.time() - started - timings["data"], 1)
        accuracy = manifest.dev.get("dev_fuzzy_acc1")
        scores = {**({"dev_fuzzy_acc1": float(accuracy)} if accuracy is not None else {}),
                  **{f"dev_precision_{kind}": float(rule["dev_precision"])
                     for kind, rule in manifest.thresholds.items()}}
        figure = f"; dev accuracy@1 {accuracy:.3f} on names no exact name settles" if accuracy is not None else ""
        return TrainedArtifact(
            name=manifest.name, folder=folder, device=manifest.device, scores=scores, timings_s=timings,
            message=(f"trained {manifest.name} ({manifest.counts.get('train_concepts', 0):,} concepts, "
                     f"{manifest.config.get('steps')} steps on {manifest.device}; w = {manifest.weight}){figure}"),
        )

    def judge(self, con: duckdb.DuckDBPyConnection, request: LinkerRequest, folder: Path) -> Verdict:
        from curation.learning.linker.activation import judge_linker

        return judge_linker(con, folder)


LEARNER = LinkerLearner()


def train_in_process(request: LinkerRequest) -> TrainedArtifact:
    """Run :meth:`LinkerLearner.train` here, without a job (the CLI): its job files go to a scratch folder."""
    with tempfile.TemporaryDirectory(prefix="train-linker-") as scratch:
        folder = Path(scratch)
        work = Workspace(folder=folder, snapshot=folder / "snapshot", progress=folder / "progress.json",
                         cancel=folder / "cancel", staging=folder / "version")
        return LEARNER.train(request, work)
