"""The relation-scorer job: train a relation scorer on the corpora and the curators' decisions, score a snapshot.

The retraining protocol (:mod:`curation.jobs.retraining`): a ``jobs`` row of kind ``relations``, a job folder
with ``request.json`` and the store's ``snapshot/``, the worker ``python -m curation.jobs.worker <folder>``
(dispatching on the request's ``kind``), ``progress.json``, ``cancel`` and, last, ``result.json``.

The worker:

1. trains a scorer on BioRED + BC5CDR Train (every Dev and Test PMID the data folder has held out) and the
   snapshot's decisions (:func:`curation.relations.training.train_with_manifest`), measures its Dev pair F1 (what
   the app's gate compares), and writes ``models/relations/<name>`` (staged as ``<name>.tmp``; the name goes to
   ``version.txt`` first);
2. scores every annotated document of the snapshot with it and writes ``pairs.jsonl``: a header with the scorer
   name, then per document its PMID, how many annotations it had (the app loads a document's pairs only if
   that still holds) and its pairs.

The app then judges the scorer (not worse on Dev than the active one), activates it and loads the pairs in one
transaction (:func:`curation.workflows.relation_scoring.apply_relation_jobs`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import duckdb

from curation.config import Settings
from curation.errors import CurationError
from curation.files import write_atomic
from curation.jobs.protocol import read_worker_lines, request_from_dict
from curation.jobs.result import JobResult
from curation.jobs.retraining import REQUEST, SNAPSHOT, VERSION, launch_job
from curation.relations.scorer_folder import SCORERS, write_scorer
from curation.relations.stored_pairs import DocumentPairs, annotated_pairs
from curation.relations.training import describe_training, train_with_manifest
from curation.store.jobs import Job
from curation.store.relations import PairRow
from curation.versions.registry import check_name

KIND = "relations"
PAIRS = "pairs.jsonl"
BATCH = 200  # documents scored between progress reports and cancel checks


@dataclass(frozen=True)
class RelationsRequest:
    """What a relation-scorer job does (``request.json``).

    Attributes:
        kind: always "relations" (the worker dispatches on it).
        name: the new scorer's folder name under ``models_dir``.
        data_dir: the corpora (BioRED, BC5CDR) to train on.
        models_dir: where scorers live (``<models>/relations``; filled in at start).
        decisions: train on the snapshot's curator decisions too.
    """

    kind: str = KIND
    name: str = ""
    data_dir: str = ""
    models_dir: str = ""
    decisions: bool = True

    def __post_init__(self) -> None:
        if self.kind != KIND:
            raise CurationError(f"a relation-scorer request has kind '{KIND}', not '{self.kind}'")
        check_name(self.name)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict, where: str = "relation-scorer request") -> RelationsRequest:
        return request_from_dict(cls, data, where)


def start_relations_job(con: duckdb.DuckDBPyConnection, request: RelationsRequest, settings: Settings,
                        launch: Callable[[Path], int] | None = None) -> Job:
    """Record a relation-scorer job, export its snapshot and start the worker.

    Raises:
        CurationError: another job is queued or running, the folder exists already, or the worker cannot start.
    """
    request = replace(request, models_dir=str(Path(settings.models_dir) / SCORERS))
    if (Path(request.models_dir) / request.name).exists():
        raise CurationError(f"{Path(request.models_dir) / request.name} exists already; choose another name")
    return launch_job(con, settings, KIND, request.to_dict(), "relation-scorer", launch)


def run_relations_job(job_dir: Path, data: dict, progress: Path, cancel: Path) -> JobResult:
    """Do the relation-scorer job in ``job_dir`` (the worker's dispatch); failures raise as in retraining."""
    from curation.entities.dictionaries import snapshot_lexicon
    from curation.learning.snapshot import load_snapshot
    from curation.records import Mention
    from curation.training_loop import TrainingCancelled, write_progress

    request = RelationsRequest.from_dict(data, f"{job_dir / REQUEST}")
    started = time.time()
    write_atomic(job_dir / VERSION, request.name)
    write_progress(progress, state="training the relation scorer", step=None, total=None, loss=None, eta_s=None,
                   epoch=None)
    snapshot = load_snapshot(job_dir / SNAPSHOT)
    mentions = {pmid: [Mention(pmid, a.start, a.end, a.text, a.type, a.concept_id, a.source) for a in found]
                for pmid, found in snapshot.annotations.items()}
    schemas = {s.name: s for s in snapshot.schemas}
    decisions = snapshot.decisions if request.decisions else None
    scorer, manifest = train_with_manifest(Path(request.data_dir), decisions, schemas, snapshot.documents, mentions,
                                           snapshot_lexicon(snapshot), request.name)
    timings = {"train": round(time.time() - started, 1)}
    if cancel.exists():
        raise TrainingCancelled("cancelled after training; nothing was written")
    folder = write_scorer(Path(request.models_dir) / request.name, scorer, manifest)
    documents = [snapshot.documents[p] for p in sorted(snapshot.annotations) if p in snapshot.documents]
    lines = [json.dumps({"scorer": request.name, "documents": len(documents)})]
    for first in range(0, len(documents), BATCH):
        if cancel.exists():
            raise TrainingCancelled("cancelled while scoring; the scorer folder is kept, not activated")
        write_progress(progress, state="scoring the documents", step=first, total=len(documents), loss=None,
                       eta_s=None, epoch=None)
        for document in documents[first:first + BATCH]:
            found = snapshot.annotations[document.pmid]
            pairs = annotated_pairs(document, found, scorer)
            lines.append(json.dumps({"pmid": document.pmid, "annotations": len(found),
                                     "pairs": [list(p) for p in pairs]}, ensure_ascii=False))
    write_atomic(job_dir / PAIRS, "\n".join(lines) + "\n")
    timings["score"] = round(time.time() - started - timings["train"], 1)
    dev, mean = manifest["dev_pair_f1"], manifest["dev_pair_f1_mean"]
    return JobResult(
        state="succeeded",
        message=(f"trained {request.name} ({describe_training(manifest)}; {manifest['decision_pairs']} pairs from "
                 f"curator decisions); {len(documents):,} abstracts scored"),
        version=request.name, path=str(folder), timings_s=timings,
        scores={**({"dev_pair_f1_mean": mean} if mean is not None else {}),
                **{f"dev_pair_f1_{k}": v for k, v in dev.items()}},
    )


def read_pairs(path: Path) -> tuple[str, Iterator[DocumentPairs]]:
    """The scorer name of ``pairs.jsonl`` and its documents, one a line (read lazily).

    Raises:
        CurationError: the file is missing, its header is not one, or a line is corrupted (named).
    """
    def parse(data: dict) -> DocumentPairs:
        pmid = str(data["pmid"])
        rows = tuple(PairRow(*row) for row in data["pairs"])
        if any(row.pmid != pmid for row in rows):
            raise ValueError(f"a pair of another document than {pmid}")
        return DocumentPairs(pmid, int(data["annotations"]), rows)

    return read_worker_lines(path, "scorer", "relation pairs", parse)
