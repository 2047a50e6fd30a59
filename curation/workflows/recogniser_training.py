"""Training the entity recogniser from the app: start the background job, then swap its recogniser in.

The recogniser's home is :mod:`curation.learning.recogniser` (its corpora and split, its learner, the snapshot
annotated in the worker, its activation rule); its job is the one training job (:mod:`curation.jobs.retraining`,
kind ``recogniser``).

What the Train page calls:

* :func:`recogniser_overview`: the active recogniser (name, dev scores from its manifest) or the
  note that highlights come from dictionaries, and the trained folders under ``models/recognisers/``;
* :func:`start_recogniser_training`: a job that trains a new recogniser and annotates a snapshot of
  the documents with it (in the worker process: see :mod:`curation.learning.recogniser.annotations` for why);
* :func:`start_recogniser_activation`: a job that only annotates, with a recogniser trained earlier;
* :func:`apply_recogniser_jobs` (run by the job poll and at app start): for a recogniser job that
  succeeded, :func:`~curation.workflows.entities.activate_entity_model` (validates by loading; the
  active recogniser stays when it fails), then the worker's annotations are loaded in one
  transaction. A newly trained recogniser whose dev F1 is below the active one's (same dev set) by
  more than :data:`~curation.learning.recogniser.activation.TOLERANCE` is kept inactive; a recogniser chosen by
  hand is always activated (its learner's :meth:`~curation.learning.learner.Learner.judge`).
  Only the concept index changes: decisions, KB records and gold mentions are never touched.

Documents added or changed while the job ran are not in its snapshot: they keep their earlier
annotations, stay stale for the new annotator, and ``python -m curation reannotate`` (or the next
ingest of them) brings them up to date; the job's message says how many.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import duckdb

from curation import access
from curation.access import Action, Who
from curation.config import Settings
from curation.entities.served_annotator import REANNOTATE_HINT, EntityModelError, annotator_note
from curation.errors import CurationError
from curation.jobs.result import result_json, unapplied_result
from curation.jobs.retraining import start_training
from curation.learning.learner import learner
from curation.learning.recogniser.annotations import ANNOTATIONS, read_annotations
from curation.learning.recogniser.data import check_data_dir
from curation.learning.recogniser.learner import KIND, RECOGNISERS, RecogniserRequest, new_recogniser_name
from curation.relations.concept_index import store_annotated
from curation.store.annotations import get_active_entity_model
from curation.store.jobs import Job, get_job, list_jobs, set_job_result
from curation.workflows.entities import activate_entity_model, trained_models

__all__ = [
    "RecogniserOverview", "TrainedRecogniser", "apply_recogniser_jobs", "load_annotations", "recogniser_overview",
    "start_recogniser_activation", "start_recogniser_training",
]

@dataclass(frozen=True)
class TrainedRecogniser:
    """A recogniser folder, as the Train page lists it.

    Attributes:
        name, path: its manifest name and folder.
        active: whether the app uses it.
        scores: dev scores from its manifest (``ents_f``, ``ents_p``, ``ents_r``, ``GENE.f``, ...).
        selected_on: the dev set they were measured on.
        created: when it was trained.
    """

    name: str
    path: str
    active: bool
    scores: dict[str, float]
    selected_on: str
    created: str
    shipped: str = ""  # for the recogniser the code ships: where it comes from (its provenance), else ""

    def summary(self) -> str:
        """"dev F1 0.853 (P 0.871, R 0.836) on biored_dev; per type: CHEMICAL 0.90 · GENE 0.88"."""
        if "ents_f" not in self.scores:
            return "no dev scores in its manifest"
        s = self.scores
        types = " · ".join(f"{key[:-2]} {value:.2f}" for key, value in sorted(s.items())
                           if key.endswith(".f") and key[:-2].isupper())
        text = (f"dev F1 {s['ents_f']:.3f} (P {s.get('ents_p', 0):.3f}, R {s.get('ents_r', 0):.3f}) "
                f"on {self.selected_on}")
        text = f"{text}; per type: {types}" if types else text
        return f"{text}; {self.shipped}" if self.shipped else text

    def label(self) -> str:
        f1 = self.scores.get("ents_f")
        score = f", dev F1 {f1:.3f}" if f1 is not None else ""
        return f"{self.name} ({self.created[:16]}{score}{', active' if self.active else ''})"


@dataclass(frozen=True)
class RecogniserOverview:
    """The Train page's recogniser section: the active one (or the note), the trained folders, problems."""

    active: TrainedRecogniser | None
    note: str
    trained: tuple[TrainedRecogniser, ...]
    problems: tuple[str, ...]


def _trained(folder: Path, active: bool) -> TrainedRecogniser:
    from curation.entities.recogniser import read_recogniser_manifest
    from curation.learning.recogniser.shipped import PROVENANCE, read_provenance

    manifest = read_recogniser_manifest(folder)
    shipped = ""
    if (folder / PROVENANCE).is_file():  # installed from the code's shipped recogniser after a first load
        provenance = read_provenance(folder)
        shipped = (f"shipped with the code (trained at commit {provenance.code_version[:10] or 'unknown'} on "
                   f"{', '.join(provenance.data_digests)}; Train a recogniser on this page trains one on your data)")
    return TrainedRecogniser(manifest.name, str(folder.resolve()), active, dict(manifest.dev_scores),
                             manifest.selected_on, manifest.created, shipped)


def recogniser_overview(con: duckdb.DuckDBPyConnection, settings: Settings) -> RecogniserOverview:
    """The active recogniser and the trained ones under ``models/recognisers/`` (unreadable ones as problems)."""
    row = get_active_entity_model(con, "recogniser")
    active, trained, problems = trained_models(settings.models_dir / RECOGNISERS, row.path if row else "", _trained,
                                               "recogniser")
    return RecogniserOverview(active, annotator_note(con), tuple(trained), tuple(problems))


def _active_linker(con: duckdb.DuckDBPyConnection) -> str:
    row = get_active_entity_model(con, "linker")
    return row.path if row is not None else ""


def start_recogniser_training(
    con: duckdb.DuckDBPyConnection, settings: Settings, data_dir: str | Path | None = None, epochs: int = 25,
    width: int = 128, name: str = "", launch: Callable[[Path], int] | None = None, *, who: Who = "",
) -> Job:
    """Start a background job that trains a recogniser on the data directory and annotates the documents.

    Raises:
        CurationError: the data directory lacks a corpus file, a job is already running, or the
            worker cannot start.
    """
    access.require(con, who, Action.TRAIN)
    data_dir = Path(data_dir or settings.data_dir)
    check_data_dir(data_dir)
    request = RecogniserRequest(name=name or new_recogniser_name(), data_dir=str(data_dir), width=width,
                                max_epochs=epochs, linker=_active_linker(con))
    return start_training(con, settings, KIND, request, launch)


def start_recogniser_activation(
    con: duckdb.DuckDBPyConnection, settings: Settings, folder: str | Path,
    launch: Callable[[Path], int] | None = None, *, who: Who = "",
) -> Job:
    """Start a background job that annotates the documents with a trained recogniser, then activates it.

    Raises:
        CurationError: the folder is not a recogniser of this version, or the job cannot start.
    """
    access.require(con, who, Action.ACTIVATE)
    from curation.entities.recogniser import read_recogniser_manifest

    folder = Path(folder).expanduser().resolve()
    read_recogniser_manifest(folder)
    return start_training(con, settings, KIND, RecogniserRequest(folder=str(folder), linker=_active_linker(con)),
                          launch)


# --- when a job has succeeded ------------------------------------------------------------------------


def load_annotations(con: duckdb.DuckDBPyConnection, path: Path) -> tuple[int, int]:
    """Store the worker's annotations (:func:`curation.relations.concept_index.store_annotated`: one transaction,
    changed documents left stale, pairs scored); (documents loaded, documents left stale)."""
    version, documents = read_annotations(path)
    return store_annotated(con, version, documents)


def apply_recogniser_job(con: duckdb.DuckDBPyConnection, job: Job,
                         settings: Settings | None = None) -> Job:
    """Activate a succeeded recogniser job's recogniser and load its annotations (once; see module docstring)."""
    result = unapplied_result(job, KIND)
    if result is None:
        return job
    annotations = Path(job.job_dir) / ANNOTATIONS
    try:
        recogniser = learner(KIND)
        judged = recogniser.judge(con, recogniser.read_request(job.params, f"job {job.job_id}"), Path(result.path))
        activate, verdict = judged.activate, judged.reason
        if activate:
            activated = activate_entity_model(con, "recogniser", result.path, settings=settings,
                                              who=access.BACKGROUND_JOB)  # its start was checked
    except (CurationError, EntityModelError) as exc:
        activate, verdict = False, f"could not be activated ({exc}); the active recogniser stays"
    message = f"{result.message}; {verdict}"
    if activate:
        try:
            loaded, skipped = load_annotations(con, annotations)
            message = f"{activated.name} is active; {loaded:,} abstracts re-annotated ({verdict})"
            if skipped:
                message += (f"; {skipped:,} changed while it trained keep their earlier annotations until "
                            f"annotated again: {REANNOTATE_HINT}")
        except (CurationError, OSError, duckdb.Error) as exc:
            message = (f"{activated.name} is active, but its annotations could not be loaded ({exc}); the "
                       f"documents keep their earlier ones until annotated again: {REANNOTATE_HINT}")
    set_job_result(con, job.job_id, message, result_json(replace(result, activated=activate, verdict=verdict)))
    annotations.unlink(missing_ok=True)
    return get_job(con, job.job_id)


def apply_recogniser_jobs(con: duckdb.DuckDBPyConnection, settings: Settings | None = None,
                          recent: int = 5) -> list[Job]:
    """Apply the recent recogniser jobs that succeeded and were not applied yet (the poll, app start)."""
    return [apply_recogniser_job(con, job, settings) for job in list_jobs(con, limit=recent)
            if job.kind == KIND and job.state == "succeeded"]
