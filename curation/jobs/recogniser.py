"""The recogniser job: train an entity recogniser (or take a trained one) and annotate a snapshot with it.

The same protocol as retraining (:mod:`curation.jobs.retraining`): a ``jobs`` row of kind
``recogniser``, a job folder with ``request.json`` and the store's ``snapshot/``, the worker
``python -m curation.jobs.worker <folder>`` in its own session (the worker dispatches on the
request's ``kind``), ``progress.json``, ``cancel`` and, last, ``result.json``. Polling, cancelling,
recovery after an app restart and the clean-up of a dead worker's staging folder are
retraining's own functions, unchanged.

The worker:

1. trains with :func:`~curation.learning.recogniser_data.train_standard_recogniser` into
   ``models/recognisers/<name>.tmp`` (renamed to ``<name>`` when complete; the name is written
   to ``version.txt`` first, so the app removes the staging folder of a worker that died), with a
   spaCy logger that writes each evaluation (epoch, dev F1, loss) to ``progress.json`` and stops
   training when ``cancel`` appears — or, for an activation job, takes the trained folder it is given;
2. annotates every document of the snapshot with the app's annotator built the app's way (the
   snapshot's lexicon → :class:`~curation.entities.matching.Matcher`, the new recogniser, the
   linker active when the job started) and writes ``annotations.jsonl``: a header line with the
   annotator version, then one line per document: PMID, text length, and its concept-index rows
   (gold mentions as :func:`~curation.entities.gold.gold_rows` makes them, then the predicted ones).

Why the worker annotates: re-annotating ~3,700 abstracts takes 1–2 minutes of CPU. In the worker it
costs the app nothing and survives an app restart (the file waits in the job folder); in a thread of
the app it would compete with every page render for the interpreter, race the ingest path's writes
and be lost, half done, when the app stops. The app then only loads the file, in one transaction
(:mod:`curation.workflows.recogniser_training`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from curation.config import Settings
from curation.errors import USER_ERRORS, CurationError
from curation.files import write_atomic
from curation.jobs.protocol import read_worker_lines, request_from_dict
from curation.jobs.result import JobResult
from curation.jobs.retraining import REQUEST, SNAPSHOT, VERSION, launch_job
from curation.store.annotations import AnnotationRow
from curation.store.jobs import Job
from curation.versions.registry import check_name

KIND = "recogniser"
RECOGNISERS = "recognisers"  # the models folder's sub-folder of trained recognisers
ANNOTATIONS = "annotations.jsonl"
BATCH = 200  # documents annotated between progress reports and cancel checks
LOGGER = "curation.job_progress.v1"


@dataclass(frozen=True)
class RecogniserRequest:
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

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict, where: str = "recogniser request") -> RecogniserRequest:
        return request_from_dict(cls, data, where)


def new_recogniser_name(prefix: str = "biomed") -> str:
    """A folder name no earlier job used: ``biomed-20250101-120000``."""
    return f"{prefix}-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}"


# --- the app's side: starting ------------------------------------------------------------------


def start_recogniser_job(
    con: duckdb.DuckDBPyConnection, request: RecogniserRequest, settings: Settings,
    launch: Callable[[Path], int] | None = None,
) -> Job:
    """Record a recogniser job, export its snapshot and start the worker (``launch``: ``spawn_worker``).

    Raises:
        CurationError: another job is queued or running, the new folder exists already, or the
            worker could not be started (the job is then recorded as failed, with the reason).
    """
    request = replace(request, models_dir=str(settings.models_dir / RECOGNISERS))
    if request.name and (Path(request.models_dir) / request.name).exists():
        raise CurationError(f"{Path(request.models_dir) / request.name} exists already; choose another name")
    return launch_job(con, settings, KIND, request.to_dict(), "recogniser", launch)


# --- the worker's side -------------------------------------------------------------------------


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


def run_recogniser_job(job_dir: Path, data: dict, progress: Path, cancel: Path) -> JobResult:
    """Do the recogniser job in ``job_dir`` (the worker's dispatch); failures raise as in retraining."""
    from curation.entities.recogniser import load_recogniser, read_recogniser_manifest
    from curation.training_loop import write_progress

    request = RecogniserRequest.from_dict(data, f"{job_dir / REQUEST}")
    timings: dict[str, float] = {}
    started = time.time()
    if request.name:
        from curation.learning.recogniser_data import check_data_dir, train_standard_recogniser

        check_data_dir(Path(request.data_dir))
        folder = Path(request.models_dir) / request.name
        write_atomic(job_dir / VERSION, request.name)  # first: the app removes <name>.tmp if this process dies
        _register_progress_logger()
        logger = {"@loggers": LOGGER, "progress": str(progress), "cancel": str(cancel),
                  "max_epochs": request.max_epochs}
        write_progress(progress, state="training", step=0, total=request.max_epochs, loss=None, eta_s=None, epoch=0)
        train_standard_recogniser(Path(request.data_dir), folder, width=request.width, max_epochs=request.max_epochs,
                                  use_gpu=request.use_gpu, overrides={"training.logger": logger})
        timings["train"] = round(time.time() - started, 1)
    else:
        folder = Path(request.folder)
    manifest = read_recogniser_manifest(folder)
    recogniser = load_recogniser(folder)
    annotated, version, note = annotate_snapshot(job_dir, recogniser, request.linker, progress, cancel)
    timings["annotate"] = round(time.time() - started - timings.get("train", 0.0), 1)
    f1 = manifest.dev_scores.get("ents_f")
    what = f"trained {manifest.name}" if request.name else f"{manifest.name}"
    score = f" (dev F1 {f1:.3f} on {manifest.selected_on})" if f1 is not None else ""
    return JobResult(
        state="succeeded",
        message=f"{what}{score}; {annotated:,} abstracts annotated with it{note}",
        version=manifest.name, path=str(folder), device=manifest.device, timings_s=timings,
        scores=dict(manifest.dev_scores),
    )


def annotate_snapshot(job_dir: Path, recogniser, linker_folder: str, progress: Path,
                      cancel: Path) -> tuple[int, str, str]:
    """Annotate the snapshot's documents as the app would and write ``annotations.jsonl``.

    Returns:
        (documents annotated, the annotator version, a note when the linker could not be loaded).
    """
    from curation.entities.annotation import Annotator
    from curation.entities.dictionaries import snapshot_lexicon
    from curation.entities.gold import gold_rows
    from curation.entities.matching import Matcher
    from curation.learning.snapshot import load_snapshot
    from curation.training_loop import TrainingCancelled, write_progress

    snapshot = load_snapshot(job_dir / SNAPSHOT)
    matcher = Matcher(snapshot_lexicon(snapshot))
    linker, note = None, ""
    if linker_folder:
        try:
            from curation.entities.linking import load_linker

            linker = load_linker(Path(linker_folder), matcher.lexicon)
        except (*USER_ERRORS, ImportError, OSError, ValueError) as exc:
            note = f"; the active linker could not be loaded ({exc}), recognised names are linked exactly only"
    annotator = Annotator(matcher, recogniser=recogniser, linker=linker)
    documents = list(snapshot.documents.values())
    lines = [json.dumps({"annotator": annotator.version, "documents": len(documents)})]
    for first in range(0, len(documents), BATCH):
        if cancel.exists():
            raise TrainingCancelled("cancelled while annotating; the recogniser folder is kept, not activated")
        chunk = documents[first : first + BATCH]
        write_progress(progress, state="annotating", step=first, total=len(documents), loss=None, eta_s=None,
                       epoch=None)
        for document, found in zip(chunk, annotator.annotate([d.text for d in chunk]), strict=True):
            rows = [list(row) for row in gold_rows(document, matcher.lexicon)]
            rows += [[document.pmid, a.start, a.end, a.text, a.type, a.concept_id, a.canonical, a.confidence,
                      a.source, annotator.version] for a in found]
            lines.append(json.dumps({"pmid": document.pmid, "chars": len(document.text), "rows": rows},
                                    ensure_ascii=False))
    write_atomic(job_dir / ANNOTATIONS, "\n".join(lines) + "\n")
    return len(documents), annotator.version, note


# --- reading the worker's annotations (the app) --------------------------------------------------


@dataclass(frozen=True)
class DocumentAnnotations:
    """One line of ``annotations.jsonl``: a document's text length and its concept-index rows (gold and predicted)."""

    pmid: str
    chars: int
    rows: tuple[AnnotationRow, ...]


def read_annotations(path: Path) -> tuple[str, Iterator[DocumentAnnotations]]:
    """The annotator version of ``annotations.jsonl`` and its documents (read lazily).

    Raises:
        CurationError: the file is missing, its header is not one, or a line is corrupted (the message names the
            file and line).
    """
    def parse(data: dict) -> DocumentAnnotations:
        pmid = str(data["pmid"])
        rows = tuple(AnnotationRow(*row) for row in data["rows"])
        if any(row.pmid != pmid for row in rows):
            raise ValueError(f"a row of another document than {pmid}")
        return DocumentAnnotations(pmid, int(data["chars"]), rows)

    return read_worker_lines(path, "annotator", "annotations", parse)
