"""The relation scorer's :class:`~curation.learning.learner.Learner`: what a job of kind ``relations`` runs.

The scorer's home is :mod:`curation.relations` (its pairs, features, training data, training with its manifest,
folder and activation rule); this module drives it through the learner interface with its public functions only
(:func:`~curation.relations.training.train_with_manifest`, :func:`~curation.relations.scorer_folder.write_scorer`,
:func:`~curation.relations.scorer_folder.load_scorer_folder`, :func:`~curation.relations.active.judge`).

The worker:

1. trains a scorer on BioRED + BC5CDR Train (every Dev and Test PMID the data folder has held out) and the
   snapshot's decisions, measures its Dev pair F1 (what the app's rule compares), and writes
   ``models/relations/<name>`` (staged as ``<name>.tmp``; the name is claimed first);
2. scores every annotated document of the snapshot with it and writes ``pairs.jsonl``: a header with the scorer
   name, then per document its PMID, how many annotations it had (the app loads a document's pairs only if
   that still holds) and its pairs.

The app then judges the scorer (not worse on Dev than the active one), activates it and loads the pairs in one
transaction (:func:`curation.workflows.relation_scoring.apply_relation_jobs`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import duckdb

from curation.config import Settings
from curation.errors import CurationError
from curation.files import write_atomic
from curation.learning.job_files import JobRequest, read_worker_lines
from curation.learning.learner import RELATIONS, TrainedArtifact, Workspace
from curation.relations.stored_pairs import DocumentPairs
from curation.store.relations import PairRow
from curation.versions.activation import Verdict
from curation.versions.registry import check_name

KIND = RELATIONS
PAIRS = "pairs.jsonl"
BATCH = 200  # documents scored between progress reports and cancel checks


@dataclass(frozen=True)
class RelationsRequest(JobRequest):
    """What a relation-scorer job does (``request.json``).

    Attributes:
        kind: always "relations" (the worker dispatches on it).
        name: the new scorer's folder name under ``models_dir``.
        data_dir: the corpora (BioRED, BC5CDR) to train on.
        models_dir: where scorers live (``<models>/relations``; filled in at start).
        decisions: train on the snapshot's curator decisions too.
    """

    WHAT = "relation-scorer request"

    kind: str = KIND
    name: str = ""
    data_dir: str = ""
    models_dir: str = ""
    decisions: bool = True

    def __post_init__(self) -> None:
        if self.kind != KIND:
            raise CurationError(f"a relation-scorer request has kind '{KIND}', not '{self.kind}'")
        check_name(self.name)


class RelationScorerLearner:
    """The relation scorer's learner (module docstring)."""

    kind = KIND
    label = "relation-scorer"
    versioned = False

    def title(self, params: Mapping[str, Any]) -> str:
        return "Relation-scorer training"

    def read_request(self, data: Mapping[str, Any], where: str) -> RelationsRequest:
        return RelationsRequest.from_dict(dict(data), where)

    def prepare(self, con: duckdb.DuckDBPyConnection, request: RelationsRequest,
                settings: Settings) -> RelationsRequest:
        """The models folder filled in; the new scorer's folder must not exist yet.

        Raises:
            CurationError: the folder exists already.
        """
        from curation.relations.scorer_folder import SCORERS

        request = replace(request, models_dir=str(Path(settings.models_dir) / SCORERS))
        if (Path(request.models_dir) / request.name).exists():
            raise CurationError(f"{Path(request.models_dir) / request.name} exists already; choose another name")
        return request

    def train(self, request: RelationsRequest, work: Workspace) -> TrainedArtifact:
        """Train a scorer on the corpora and the snapshot's decisions, write it, score the snapshot with it."""
        from curation.entities.dictionaries import snapshot_lexicon
        from curation.learning.snapshot import load_snapshot
        from curation.records import Mention
        from curation.relations.scorer_folder import write_scorer
        from curation.relations.stored_pairs import annotated_pairs
        from curation.relations.training import describe_training, train_with_manifest
        from curation.training_loop import TrainingCancelled, write_progress

        started = time.time()
        work.claim(request.name)
        write_progress(work.progress, state="training the relation scorer", step=None, total=None, loss=None,
                       eta_s=None, epoch=None)
        snapshot = load_snapshot(work.snapshot)
        mentions = {pmid: [Mention(pmid, a.start, a.end, a.text, a.type, a.concept_id, a.source) for a in found]
                    for pmid, found in snapshot.annotations.items()}
        schemas = {s.name: s for s in snapshot.schemas}
        decisions = snapshot.decisions if request.decisions else None
        scorer, manifest = train_with_manifest(Path(request.data_dir), decisions, schemas, snapshot.documents,
                                               mentions, snapshot_lexicon(snapshot), request.name)
        timings = {"train": round(time.time() - started, 1)}
        if work.cancelled():
            raise TrainingCancelled("cancelled after training; nothing was written")
        folder = write_scorer(Path(request.models_dir) / request.name, scorer, manifest)
        documents = [snapshot.documents[p] for p in sorted(snapshot.annotations) if p in snapshot.documents]
        lines = [json.dumps({"scorer": request.name, "documents": len(documents)})]
        for first in range(0, len(documents), BATCH):
            if work.cancelled():
                raise TrainingCancelled("cancelled while scoring; the scorer folder is kept, not activated")
            write_progress(work.progress, state="scoring the documents", step=first, total=len(documents),
                           loss=None, eta_s=None, epoch=None)
            for document in documents[first:first + BATCH]:
                found = snapshot.annotations[document.pmid]
                pairs = annotated_pairs(document, found, scorer)
                lines.append(json.dumps({"pmid": document.pmid, "annotations": len(found),
                                         "pairs": [list(p) for p in pairs]}, ensure_ascii=False))
        write_atomic(work.folder / PAIRS, "\n".join(lines) + "\n")
        timings["score"] = round(time.time() - started - timings["train"], 1)
        dev, mean = manifest["dev_pair_f1"], manifest["dev_pair_f1_mean"]
        return TrainedArtifact(
            name=request.name, folder=Path(folder), timings_s=timings,
            message=(f"trained {request.name} ({describe_training(manifest)}; {manifest['decision_pairs']} pairs "
                     f"from curator decisions); {len(documents):,} abstracts scored"),
            scores={**({"dev_pair_f1_mean": mean} if mean is not None else {}),
                    **{f"dev_pair_f1_{k}": v for k, v in dev.items()}},
        )

    def judge(self, con: duckdb.DuckDBPyConnection, request: RelationsRequest, folder: Path) -> Verdict:
        """Not worse on Dev than the active scorer (:func:`curation.relations.active.judge`).

        Raises:
            RelationError: ``folder`` holds no scorer of this version.
        """
        from curation.relations.active import judge
        from curation.relations.scorer_folder import load_scorer_folder

        _, manifest = load_scorer_folder(folder)
        return Verdict(*judge(con, manifest))


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


LEARNER = RelationScorerLearner()
