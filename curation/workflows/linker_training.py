"""Training the entity linker from the app: start the background job, then make the linker it trained active.

The linker's home is :mod:`curation.learning.linker` (its corpora, the name encoder's fine-tuning and calibration,
its learner, its activation rule); its job is the one training job (:mod:`curation.jobs.retraining`, kind
``linker``). The command line's ``train-linker`` and ``activate-linker`` do the same in the foreground.

What the Train page calls:

* :func:`linker_overview`: the active linker (name, dev figures from its manifest) or the note that names are
  linked only when a dictionary holds them exactly, and the trained folders under ``models/linkers/``;
* :func:`start_linker_training`: a job that fine-tunes a new name encoder and calibrates it on dev;
* :func:`activate_linker`: a linker trained earlier, made active now (by hand: always);
* :func:`apply_linker_jobs` (run by the job poll and at app start): for a linker job that succeeded, its learner's
  judge (:func:`~curation.learning.linker.activation.judge_linker`: not worse on dev accuracy@1 than the active
  one), then :func:`~curation.workflows.entities.activate_entity_model` (it validates by loading; the active
  linker stays when that fails). Once only: the job's message records what was done.

Activating a linker changes how recognised names link, so the stored annotations of the active recogniser are out
of date (their annotator version names the linker). Annotating every abstract again with a recogniser and a name
encoder takes minutes to hours on a CPU: too heavy for the app's process (the poll runs inside a page run). So
activation starts the recogniser's activation job for the active recogniser instead
(:func:`~curation.workflows.recogniser_training.start_recogniser_activation`): its worker annotates the abstracts
with the recogniser and the now active linker, and its own apply step loads them. When that job cannot start
(another job runs, the recogniser's folder is gone), the message says how to do it later
(:data:`~curation.entities.served_annotator.REANNOTATE_HINT`). Without an active recogniser the stored annotations
come from dictionaries and use no linker: nothing is annotated again. Searches use the active linker at once.

Loading a linker to validate it needs the store's lexicon: the page passes its cached matcher's; the poll reads the
copy the app keeps under ``cache_dir/lexicon`` (seconds; built once, ~25 s at full size, when none is kept).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import duckdb

from curation import access
from curation.access import Action, Who
from curation.config import Settings, load_settings
from curation.entities.lexicon import Lexicon
from curation.entities.linking import LinkerManifest, read_manifest
from curation.entities.served_annotator import REANNOTATE_HINT, EntityModelError
from curation.errors import CurationError
from curation.jobs.result import result_json, unapplied_result
from curation.jobs.retraining import start_training
from curation.learning.learner import learner
from curation.learning.linker.learner import KIND, LINKERS, LinkerRequest, new_linker_name
from curation.learning.linker.name_encoder import NAME_ENCODER_LOOP
from curation.store.annotations import get_active_entity_model
from curation.store.jobs import Job, get_job, list_jobs, set_job_result
from curation.workflows.entities import activate_entity_model, dictionary_matcher, trained_models

__all__ = [
    "DEFAULT_STEPS", "LinkerActivation", "LinkerOverview", "TrainedLinkerFolder", "activate_linker",
    "apply_linker_job", "apply_linker_jobs", "linker_overview", "start_linker_training",
]

DEFAULT_STEPS = NAME_ENCODER_LOOP.max_steps  # the learner's default fine-tuning steps
NO_LINKER = "no linker active: recognised names are linked only when the dictionaries hold them exactly"


@dataclass(frozen=True)
class TrainedLinkerFolder:
    """A linker folder, as the Train page lists it.

    Attributes:
        name, path: its manifest name and folder.
        active: whether the app uses it.
        accuracy: dev accuracy@1 on the names no exact dictionary name settles (None: not in its manifest).
        dev_names: how many dev names it was calibrated on.
        precision: kind -> (dev precision, applied, of total) of the fuzzy links its rule applies.
        created: when it was trained; steps: its fine-tuning steps; base_model: what it was fine-tuned from.
    """

    name: str
    path: str
    active: bool
    accuracy: float | None
    dev_names: int
    precision: dict[str, tuple[float, int, int]]
    created: str
    steps: int
    base_model: str

    @classmethod
    def of(cls, manifest: LinkerManifest, folder: Path, active: bool) -> TrainedLinkerFolder:
        accuracy = manifest.dev.get("dev_fuzzy_acc1")
        precision = {kind: (float(rule.get("dev_precision", 0.0)), int(rule.get("dev_applied", 0)),
                            int(rule.get("dev_total", 0))) for kind, rule in sorted(manifest.thresholds.items())}
        return cls(manifest.name, str(folder), active, float(accuracy) if accuracy is not None else None,
                   int(manifest.dev.get("dev_names", 0)), precision, manifest.created,
                   int(manifest.config.get("steps", 0)), manifest.base_model)

    def summary(self) -> str:
        """"dev accuracy@1 0.912 on 1,204 dev names; fuzzy links applied at precision: chemical 0.98 (40 of 90)"."""
        if self.accuracy is None:
            text = "no dev accuracy in its manifest"
        else:
            text = f"dev accuracy@1 {self.accuracy:.3f} on {self.dev_names:,} dev names"
        applied = " · ".join(f"{kind} {p:.2f} ({n} of {total})" for kind, (p, n, total) in self.precision.items())
        text = f"{text}; fuzzy links applied at precision: {applied}" if applied else text
        return f"{text}; {self.steps:,} steps from {self.base_model}" if self.steps else text

    def label(self) -> str:
        score = f", dev acc@1 {self.accuracy:.3f}" if self.accuracy is not None else ""
        return f"{self.name} ({self.created[:16]}{score}{', active' if self.active else ''})"


@dataclass(frozen=True)
class LinkerOverview:
    """The Train page's linker section: the active one (or the note), the trained folders, problems, and the
    default number of fine-tuning steps."""

    active: TrainedLinkerFolder | None
    note: str
    trained: tuple[TrainedLinkerFolder, ...]
    problems: tuple[str, ...]
    default_steps: int = DEFAULT_STEPS


@dataclass(frozen=True)
class LinkerActivation:
    """What activating a linker did: its name and folder, a line for a person, and the re-annotation job (None:
    none was started; ``message`` says why)."""

    name: str
    path: str
    message: str
    job: Job | None = None


def _note(con: duckdb.DuckDBPyConnection, active: bool) -> str:
    if not active:
        return NO_LINKER
    if get_active_entity_model(con, "recogniser") is None:
        return "it links typed names in searches; the abstracts' highlights come from dictionaries (no recogniser)"
    return "it links the names the active recogniser finds, and typed names in searches"


def linker_overview(con: duckdb.DuckDBPyConnection, settings: Settings) -> LinkerOverview:
    """The active linker and the trained ones under ``models/linkers/`` (unreadable ones as problems)."""
    row = get_active_entity_model(con, KIND)

    def read(folder: Path, active: bool) -> TrainedLinkerFolder:
        return TrainedLinkerFolder.of(read_manifest(folder), folder, active)

    active, trained, problems = trained_models(settings.models_dir / LINKERS, row.path if row else "", read, "linker")
    return LinkerOverview(active, _note(con, row is not None), tuple(trained), tuple(problems))


def start_linker_training(
    con: duckdb.DuckDBPyConnection, settings: Settings, steps: int = DEFAULT_STEPS,
    data_dir: str | Path | None = None, name: str = "", launch: Callable[[Path], int] | None = None,
    vocabularies: bool = True, *, who: Who = "",
) -> Job:
    """Start a background job that fine-tunes a linker's name encoder on the data directory and calibrates it.

    ``vocabularies``: add the installed MeSH and gene vocabularies' names (False: the corpora's and DrugBank's
    only, which skips about a minute of reading them).

    Raises:
        CurationError: the data directory lacks a file the linker trains on, fewer than one step, a job is
            already running, or the worker cannot start.
    """
    access.require(con, who, Action.TRAIN)
    request = LinkerRequest(name=name or new_linker_name(), data_dir=str(data_dir or settings.data_dir),
                            steps=int(steps), vocabularies=vocabularies)
    return start_training(con, settings, KIND, request, launch)


def _lexicon(con: duckdb.DuckDBPyConnection, settings: Settings) -> Lexicon:
    """The store's lexicon, from the matcher the app keeps under ``cache_dir/lexicon`` (built when none is)."""
    return dictionary_matcher(con, settings.cache_dir / "lexicon").lexicon


def _reannotate(con: duckdb.DuckDBPyConnection, settings: Settings, launch: Callable[[Path], int] | None,
                who: Who) -> tuple[Job | None, str]:
    """Start the active recogniser's activation job (it annotates with the now active linker); (job, a line)."""
    from curation.workflows.recogniser_training import start_recogniser_activation

    row = get_active_entity_model(con, "recogniser")
    if row is None:
        return None, "no recogniser is active, so the stored annotations use no linker: nothing to annotate again"
    try:
        job = start_recogniser_activation(con, settings, row.path, launch, who=who)
    except CurationError as exc:
        return None, (f"the abstracts keep the annotations of the earlier linker ({exc}); {REANNOTATE_HINT}")
    return job, f"job {job.job_id} annotates the abstracts again with recogniser {row.name} and this linker"


def activate_linker(
    con: duckdb.DuckDBPyConnection, settings: Settings, folder: str | Path, lexicon: Lexicon | None = None,
    launch: Callable[[Path], int] | None = None, *, who: Who = "",
) -> LinkerActivation:
    """Load a trained linker, make it active, and start annotating the abstracts again (module docstring).

    Args:
        lexicon: the store's lexicon (the app's cached matcher's); None: read as the poll does.

    Raises:
        EntityModelError: it does not load; the active linker stays and nothing is written.
        AccessDeniedError: ``who`` may not activate a model.
    """
    access.require(con, who, Action.ACTIVATE)
    lexicon = lexicon if lexicon is not None else _lexicon(con, settings)
    activated = activate_entity_model(con, KIND, folder, lexicon, settings=settings, who=who)
    job, line = _reannotate(con, settings, launch, who)
    return LinkerActivation(activated.name, activated.path, f"{activated.name} is active; {line}", job)


# --- when a job has succeeded ------------------------------------------------------------------------


def apply_linker_job(con: duckdb.DuckDBPyConnection, job: Job, settings: Settings | None = None,
                     launch: Callable[[Path], int] | None = None) -> Job:
    """Judge a succeeded linker job's linker and, when it should serve, activate it (once; module docstring)."""
    result = unapplied_result(job, KIND)
    if result is None:
        return job
    settings = settings or load_settings()
    try:
        linker = learner(KIND)
        judged = linker.judge(con, linker.read_request(job.params, f"job {job.job_id}"), Path(result.path))
        activate, verdict = judged.activate, judged.reason
        if activate:
            activated = activate_entity_model(con, KIND, result.path, _lexicon(con, settings), settings=settings,
                                              who=access.BACKGROUND_JOB)  # its start was checked
    except (CurationError, EntityModelError) as exc:
        activate, verdict = False, f"could not be activated ({exc}); the active linker stays"
    message = f"{result.message}; {verdict}"
    if activate:
        _, line = _reannotate(con, settings, launch, access.BACKGROUND_JOB)
        message = f"{activated.name} is active ({verdict}); {line}"
    set_job_result(con, job.job_id, message, result_json(replace(result, activated=activate, verdict=verdict)))
    return get_job(con, job.job_id)


def apply_linker_jobs(con: duckdb.DuckDBPyConnection, settings: Settings | None = None, recent: int = 5,
                      launch: Callable[[Path], int] | None = None) -> list[Job]:
    """Apply the recent linker jobs that succeeded and were not applied yet (the poll, app start)."""
    return [apply_linker_job(con, job, settings, launch) for job in list_jobs(con, limit=recent)
            if job.kind == KIND and job.state == "succeeded"]
