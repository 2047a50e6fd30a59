"""The one small interface every learned model is trained through, and the registry of those models by name.

A :class:`Learner` is a model's home seen from outside: jobs/ (the background worker), workflows/ and bench/ drive
every model the same way, by its name (``kind``):

* :meth:`Learner.read_request` — its request (what to train, with which settings) as its typed dataclass, read back
  from ``request.json`` (:func:`curation.learning.job_files.request_from_dict`);
* :meth:`Learner.prepare` — in the app, before a job starts: where the artifact is published, what it is compared
  with; refuses a request that cannot run (a folder that exists, an unknown schema);
* :meth:`Learner.train` — in the worker: train (through the one training loop, ``curation.training_loop``), write
  the artifact with its manifest (staged, then renamed into place), report progress, obey ``cancel``, and write
  what the app loads afterwards; returns a :class:`TrainedArtifact`;
* :meth:`Learner.judge` — in the app: the model's activation rule, read from the artifact's manifest.

What activating means differs and is done where the layers allow it: a model version (``versioned``) is registered
and activated by the job's finish (:func:`curation.jobs.retraining.finish`); a recogniser or a relation scorer is
activated by the workflow that loads what its worker wrote into the store (annotations, pairs).

The registry maps each name to the module that is its learner's home; the module is imported only when the learner
is asked for (they load torch, spaCy or the corpora). :data:`HOMES` names every learned model's home, serving,
artifact and learner, those no job trains (the learned ranker, the screening learner) with the reason.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from curation.errors import CurationError
from curation.files import write_atomic

if TYPE_CHECKING:
    import duckdb

    from curation.config import Settings
    from curation.learning.version_report import VersionReport
    from curation.versions.activation import Verdict

RETRAIN, RECOGNISER, RELATIONS, LINKER = "retrain", "recogniser", "relations", "linker"

#: every learned model the jobs can train, by name: the module that holds its ``LEARNER``
LEARNERS: Mapping[str, str] = {
    RETRAIN: "curation.learning.version_learner",  # the EDEL encoder version (+ cross-encoder, dense index)
    RECOGNISER: "curation.learning.recogniser.learner",  # the entity recogniser (spaCy CNN)
    RELATIONS: "curation.learning.relation_scorer",  # the relation scorer (its home: curation.relations)
    LINKER: "curation.learning.linker.learner",  # the entity linker (name encoder + calibrated apply rule)
}


@dataclass(frozen=True)
class Home:
    """Where one learned model lives: what trains it, what serves it, what it publishes and which learner runs it.

    Attributes:
        home: the package (or module) holding its data and training.
        serving: the modules that load and apply it (a lower layer where its users are: entities, ranking, index).
        artifact: the folder it publishes, under the models folder (``<version>``: a model version's folder); None
            when nothing is kept on disk.
        learner: its learner's kind in :data:`LEARNERS`; None when no job trains it.
        note: why it has no learner of its own, or how its learner trains it.
    """

    home: str
    serving: tuple[str, ...]
    artifact: str | None
    learner: str | None
    note: str = ""


#: every learned model of the workbench, by name: its home, its serving, its artifact and its learner (strings only:
#: nothing is imported here, so jobs/ may read it)
HOMES: Mapping[str, Home] = {
    "recogniser": Home("curation.learning.recogniser",
                       ("curation.entities.recogniser", "curation.entities.transformer_recogniser"),
                       "recognisers/<name>", RECOGNISER),
    "linker": Home("curation.learning.linker", ("curation.entities.linking", "curation.entities.link_calibration"),
                   "linkers/<name>", LINKER),
    "relation scorer": Home("curation.relations", ("curation.relations.active", "curation.relations.stored_pairs"),
                            "relations/<name>", RELATIONS,
                            "its learner (curation.learning.relation_scorer) drives curation.relations' training"),
    "learned ranker": Home("curation.learning.ranker", ("curation.ranking.stage", "curation.ranking.history"),
                           "<version>/ranker", None,
                           "trained in the app in seconds (curation.workflows.ranker_update): it needs the served "
                           "search, whose candidates it re-orders; every update kept in <version>/rankers/<stamp>"),
    "screening learner": Home("curation.screening.learner", ("curation.screening.kept_learners",), None, None,
                              "refitted after every grade of a topic, in the session; nothing is kept on disk"),
    "EDEL encoder": Home("curation.learning", ("curation.retrieval", "curation.versions.serving"), "<version>",
                         RETRAIN, "a model version: the encoder, its dense index and manifest.json"),
    "cross-encoder": Home("curation.learning.cross_encoder", ("index.rerank", "index.loading"),
                          "<version>/cross_encoder", RETRAIN,
                          "trained and published inside a model version by the build chain (its stage module)"),
}


@dataclass(frozen=True)
class Workspace:
    """Where a learner works in the worker: the job folder and the files of the job protocol in it.

    Attributes:
        folder: the job folder (a learner writes what the app loads afterwards here, e.g. ``annotations.jsonl``).
        snapshot: the store's snapshot the app exported (:func:`curation.learning.snapshot.load_snapshot`).
        progress: ``progress.json`` (:func:`curation.training_loop.write_progress`).
        cancel: the file whose presence asks the learner to stop.
        staging: the file naming the artifact being staged, so the app removes ``<name>.tmp`` if the worker dies.
    """

    folder: Path
    snapshot: Path
    progress: Path
    cancel: Path
    staging: Path

    def claim(self, name: str) -> None:
        """Name the artifact about to be staged (first: the app cleans up after a worker that dies)."""
        write_atomic(self.staging, name)

    def cancelled(self) -> bool:
        return self.cancel.exists()


@dataclass(frozen=True)
class TrainedArtifact:
    """What a learner made: the published folder (its manifest inside) and what the job's result says of it.

    Attributes:
        name: the artifact's name (a model version, a recogniser's or scorer's folder name).
        folder: where it is published.
        message: what a person reads about it.
        device: where it was trained ("" when the manifest does not say).
        scores: its dev scores as its manifest has them (``ents_f``, ``dev_pair_f1_mean``, ...).
        timings_s: seconds per stage.
        report: a model version's evidence (dev metrics, baseline, what it was trained on, settings); None for others.
    """

    name: str
    folder: Path
    message: str
    device: str = ""
    scores: Mapping[str, float] = field(default_factory=dict)
    timings_s: Mapping[str, float] = field(default_factory=dict)
    report: VersionReport | None = None


class Learner(Protocol):
    """One learned model, as jobs/, workflows/ and bench/ drive it (module docstring).

    Attributes:
        kind: its name in the registry, the job's kind and (but for the retriever's older format) ``request.json``'s.
        label: how a message names its job ("recogniser", "relation-scorer", "retraining").
        versioned: its artifact is a model version of the registry (:mod:`curation.versions`).
    """

    kind: str
    label: str
    versioned: bool

    def title(self, params: Mapping[str, Any]) -> str:
        """What a job with this request does, in two or three words ("Recogniser training")."""
        ...

    def read_request(self, data: Mapping[str, Any], where: str) -> Any:
        """The request as its dataclass (raises CurationError naming ``where`` when malformed)."""
        ...

    def prepare(self, con: duckdb.DuckDBPyConnection, request: Any, settings: Settings) -> Any:
        """The request filled in by the app before its job starts (raises CurationError when it cannot run)."""
        ...

    def train(self, request: Any, work: Workspace) -> TrainedArtifact:
        """Train and publish the artifact in the worker (raises TrainingCancelled when ``cancel`` appears)."""
        ...

    def judge(self, con: duckdb.DuckDBPyConnection, request: Any, folder: Path) -> Verdict:
        """Whether the artifact at ``folder`` replaces the active one, and why (its activation rule)."""
        ...


def learner(kind: str) -> Learner:
    """The learner named ``kind`` (its module imported now).

    Raises:
        CurationError: no learned model has that name.
    """
    if kind not in LEARNERS:
        raise CurationError(f"no learned model is named '{kind}'; the jobs train {', '.join(sorted(LEARNERS))}")
    return importlib.import_module(LEARNERS[kind]).LEARNER
