"""The relation scorer in the app: activating one, scoring documents on request, training in the background.

What a scorer is, which one is active, what a document's pairs are and when they are scored, live in
:mod:`curation.relations`; here each is checked against the caller's role and orchestrated.
:func:`start_relation_training` starts the one training job for the relation scorer's learner
(:mod:`curation.learning.relation_scorer`, kind ``relations``) that trains one on
BioRED + BC5CDR Train (Dev and Test held out) and the curators' decisions and scores a snapshot of the documents;
when it succeeds, :func:`apply_relation_jobs` (the job poll, app start) activates it if it is not worse on Dev
than the active one (:func:`~curation.relations.active.judge`, the retriever's rule) and loads its pairs.
:func:`train_relation_scorer` does the same training in the caller (``python -m curation train-relations``);
:func:`rescore` scores what the active scorer has not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import duckdb

from curation import access
from curation.access import Action, Who
from curation.config import Settings
from curation.errors import CurationError
from curation.jobs.retraining import start_training
from curation.learning.learner import learner
from curation.learning.relation_scorer import KIND, PAIRS, RelationsRequest, read_pairs
from curation.relations.active import NO_SCORER, SCORE_THE_REST_HINT, ActiveScorer, active_scorer, judge
from curation.relations.pairs import RelationError
from curation.relations.scorer_folder import SCORERS, load_scorer_folder, new_scorer_name, write_scorer
from curation.relations.stored_pairs import Progress, ScoringReport, load_scored_pairs, score_documents
from curation.relations.training import describe_training, train_with_manifest
from curation.relations.training_data import decided_documents
from curation.runtime.background import Background
from curation.store.base import list_schemas, transaction
from curation.store.decisions import list_decisions
from curation.store.jobs import Job, get_job, list_jobs, set_job_result
from curation.store.relations import list_relation_scorers, list_unscored_documents, set_active_relation_scorer

__all__ = [
    "NO_SCORER", "ActiveScorer", "ScoringReport", "activate_scorer", "active_scorer", "apply_relation_job",
    "apply_relation_jobs", "describe_training", "judge", "load_pairs", "overview", "rescore", "rescore_state",
    "stale_documents", "start_relation_training", "start_rescore",
    "train_relation_scorer",
]


def activate_scorer(con: duckdb.DuckDBPyConnection, folder: str | Path, *, who: Who = "") -> ActiveScorer:
    """Make the scorer of ``folder`` the active one (checked first: a bad folder changes nothing).

    Documents are not re-scored here: call :func:`rescore`.

    Raises:
        RelationError: the folder does not hold a scorer of this version.
    """
    access.require(con, who, Action.ACTIVATE)
    folder = Path(folder).expanduser().resolve()
    scorer, manifest = load_scorer_folder(folder)
    name = str(manifest.get("name") or folder.name)
    with transaction(con):
        set_active_relation_scorer(con, str(folder), name)
    return ActiveScorer(scorer, name, str(folder))


_RESCORE: dict[str, Background] = {}  # this process's latest "Score the rest" (running or done)


def stale_documents(con: duckdb.DuckDBPyConnection) -> int:
    """How many annotated documents the active scorer has not scored (0: none, or no scorer is active)."""
    active = active_scorer(con)
    return len(list_unscored_documents(con, active.version)) if active.scorer is not None else 0


def start_rescore(con: duckdb.DuckDBPyConnection, who: Who = "") -> None:
    """Run :func:`rescore` in a background thread of the app (its own cursor), for the Train page's "Score the rest".

    Raises:
        CurationError: ``who`` may not train, or a scoring run is already going.
    """
    access.require(con, who, Action.TRAIN)
    running = _RESCORE.get("run")
    if running is not None and not running.ready():
        raise CurationError("the documents are already being scored; the outcome shows here when it ends")
    cursor = con.cursor()
    _RESCORE["run"] = Background(lambda: rescore(cursor, who=who), "relation-rescore")


def rescore_state() -> tuple[bool, str]:
    """(running, the last finished run's outcome in words or ""), for the Train page."""
    run = _RESCORE.get("run")
    if run is None:
        return False, ""
    if not run.ready():
        return True, ""
    try:
        return False, run.result().summary()
    except Exception as exc:  # shown on the page: the thread's failure is the curator's to see
        return False, f"scoring failed: {exc}"


def rescore(con: duckdb.DuckDBPyConnection, active: ActiveScorer | None = None,
            progress: Progress | None = None, *, who: Who = "") -> ScoringReport:
    """Score the annotated documents the active scorer has not scored (all of them after an activation)."""
    access.require(con, who, Action.TRAIN)
    active = active or active_scorer(con)
    return score_documents(con, active, list_unscored_documents(con, active.version), progress)


def train_relation_scorer(con: duckdb.DuckDBPyConnection, settings: Settings, data_dir: str | Path | None = None,
                          name: str | None = None, decisions: bool = True, *, who: Who = "") -> tuple[Path, dict]:
    """Train a relation scorer here (the CLI; the app starts :func:`start_relation_training`) on BioRED + BC5CDR
    Train and (``decisions``) the store's curator decisions, and write its folder under ``<models>/relations/``.
    Not activated here (:func:`~curation.relations.active.judge`, :func:`activate_scorer`).

    Raises:
        RelationError: no Train file in the data folder, or the pairs cannot train a scorer (named).
    """
    access.require(con, who, Action.TRAIN)
    from curation.entities.dictionaries import build_lexicon

    data_dir = Path(data_dir or settings.data_dir)
    name = name or new_scorer_name()
    folder = Path(settings.models_dir) / SCORERS / name
    if folder.exists():
        raise RelationError(f"{folder} already exists; give another --name")
    schemas = {s.name: s for s in list_schemas(con)}
    chosen = list_decisions(con) if decisions else None
    documents, mentions = decided_documents(con, chosen or [])
    scorer, manifest = train_with_manifest(data_dir, chosen, schemas, documents, mentions, build_lexicon(con), name)
    return write_scorer(folder, scorer, manifest), manifest


def start_relation_training(con: duckdb.DuckDBPyConnection, settings: Settings, data_dir: str | Path | None = None,
                            decisions: bool = True, launch: Callable[[Path], int] | None = None, *,
                            who: Who = "") -> Job:
    """Start the background job that trains a relation scorer and scores a snapshot of the documents with it.

    Raises:
        CurationError: another job is queued or running, or the worker cannot start.
    """
    access.require(con, who, Action.TRAIN)
    request = RelationsRequest(name=new_scorer_name(), data_dir=str(Path(data_dir or settings.data_dir)),
                               decisions=decisions)
    return start_training(con, settings, KIND, request, launch)


def load_pairs(con: duckdb.DuckDBPyConnection, path: Path) -> tuple[str, int, int]:
    """Store a relation job's pairs in one transaction: (scorer, documents loaded, documents left unscored)
    (:func:`~curation.relations.stored_pairs.load_scored_pairs`: one changed since the snapshot is left for
    :func:`rescore`)."""
    scorer, documents = read_pairs(path)
    loaded, skipped = load_scored_pairs(con, scorer, documents)
    return scorer, loaded, skipped


def apply_relation_job(con: duckdb.DuckDBPyConnection, job: Job) -> Job:
    """For a succeeded relation-scorer job (once): judge its scorer, activate it when not worse on Dev, load its
    pairs; the job's message says what happened."""
    from curation.jobs.result import result_json, unapplied_result

    result = unapplied_result(job, KIND)
    if result is None:
        return job
    pairs = Path(job.job_dir) / PAIRS
    try:
        scorer = learner(KIND)
        judged = scorer.judge(con, scorer.read_request(job.params, f"job {job.job_id}"), Path(result.path))
        activate, verdict = judged.activate, judged.reason
        if activate:
            active = activate_scorer(con, result.path, who=access.BACKGROUND_JOB)  # its start was checked
    except CurationError as exc:  # a RelationError (the folder does not load), or the job's request is not one
        activate, verdict = False, f"could not be activated ({exc}); the active scorer stays"
    message = f"{result.message}; {verdict}"
    if activate:
        try:
            _, loaded, skipped = load_pairs(con, pairs)
            message = f"{active.version} is active; {loaded:,} abstracts scored ({verdict})"
            if skipped:
                message += f"; {skipped:,} changed while it trained: {SCORE_THE_REST_HINT}"
        except (CurationError, OSError, duckdb.Error) as exc:
            message = f"{active.version} is active, but its pairs could not be loaded ({exc}); run rescore"
    set_job_result(con, job.job_id, message, result_json(replace(result, activated=activate, verdict=verdict)))
    pairs.unlink(missing_ok=True)
    return get_job(con, job.job_id)


def apply_relation_jobs(con: duckdb.DuckDBPyConnection, recent: int = 5) -> list[Job]:
    """Apply the recent relation-scorer jobs that succeeded and were not applied yet (the poll, app start)."""
    return [apply_relation_job(con, job) for job in list_jobs(con, limit=recent)
            if job.kind == KIND and job.state == "succeeded"]


def overview(con: duckdb.DuckDBPyConnection) -> str:
    """A line for the Train page: the active scorer, its Dev figures, and how many abstracts its scores cover."""
    active = active_scorer(con)
    by_scorer = list_relation_scorers(con)
    if active.scorer is None:
        return active.message
    try:
        _, manifest = load_scorer_folder(active.path)
    except RelationError:
        manifest = {}
    dev = manifest.get("dev_pair_f1") or {}
    figures = ", ".join(f"{k} {v:.3f}" for k, v in dev.items())
    stale = sum(n for name, n in by_scorer.items() if name != active.version)
    return (f"Active relation scorer {active.version}" + (f" (Dev pair F1: {figures}; "
            f"{manifest.get('decision_pairs', 0)} pairs from curator decisions)" if figures else "")
            + f"; {by_scorer.get(active.version, 0):,} abstracts scored with it"
            + (f", {stale:,} still with another scorer's scores ({SCORE_THE_REST_HINT})" if stale else ""))
