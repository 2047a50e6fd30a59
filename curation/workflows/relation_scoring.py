"""The relation scorer in the app: which one is active, scoring documents when they are annotated, training.

Every annotated document's co-mentioned concept pairs are stored with the active scorer's probability that the
document relates them (:mod:`curation.store.relations`), in the same transaction as its annotations
(:func:`curation.workflows.entities.annotate_documents` calls :func:`pair_rows`); the Curate page's
suggestions read them and never score on a page view. Without an active scorer the pairs are stored unscored
(a co-mention), and suggestions rank by co-occurrence and say so.

A scorer is a folder (``scorer.json``: the logistic regression as JSON, no pickle; ``manifest.json``: what it
was trained on and its Dev pair F1) recorded in the store's ``relation_scorers``. :func:`start_relation_training`
starts the background job (:mod:`curation.jobs.relations`) that trains one on BioRED + BC5CDR Train (Dev and
Test held out) and the curators' decisions and scores a snapshot of the documents; when it succeeds,
:func:`apply_relation_jobs` (the job poll, app start) activates it if it is not worse on Dev than the active one
(:func:`judge`, the retriever's rule) and loads its pairs. :func:`train_relation_scorer` does the same training
in the caller (``python -m curation train-relations``); :func:`rescore` scores what the active scorer has not.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import duckdb

from curation import access, store
from curation.access import Action, Who
from curation.config import Settings
from curation.entities.lexicon import Lexicon
from curation.errors import CurationError
from curation.jobs import relations as relations_job
from curation.learning import relation_data
from curation.learning import relations as rel
from curation.records import Document, Mention
from curation.schemas import RelationSchema

SCORER_FILE = relations_job.SCORER_FILE
MANIFEST_FILE = relations_job.MANIFEST_FILE
BATCH = 200  # documents scored and written per transaction
NO_SCORER = ("no relation scorer active: suggestions rank candidates by co-occurrence; train one on Train & "
             "evaluate (Relation scorer) or with python -m curation train-relations")

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ActiveScorer:
    """The scorer that scores pairs now (None: none active, pairs stored unscored) and its version name."""

    scorer: rel.RelationScorer | None
    version: str = store.UNSCORED
    path: str = ""
    message: str = ""

    @property
    def threshold(self) -> float:
        """The probability at which a document counts as stating the relation (a co-mention: any)."""
        return self.scorer.threshold if self.scorer is not None else 0.0


@dataclass(frozen=True)
class ScoringReport:
    scorer: str
    documents: int
    pairs: int
    seconds: float

    def summary(self) -> str:
        return (f"{self.documents:,} documents scored for relations ({self.pairs:,} concept pairs, "
                f"{self.scorer}) in {self.seconds:.1f} s")


# --- which scorer ---------------------------------------------------------------------------------------------


def load_scorer_folder(folder: str | Path) -> tuple[rel.RelationScorer, dict]:
    """The scorer and manifest of a folder ``train-relations`` wrote.

    Raises:
        RelationError: the folder or a file is missing, unreadable or for other features (named).
    """
    folder = Path(folder)
    if not (folder / SCORER_FILE).is_file():
        raise rel.RelationError(f"{folder}: no {SCORER_FILE}; give a folder `python -m curation train-relations` "
                                "wrote")
    scorer = rel.RelationScorer.load(folder / SCORER_FILE)
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text()) if (folder / MANIFEST_FILE).is_file() else {}
    except ValueError as exc:
        raise rel.RelationError(f"{folder / MANIFEST_FILE}: not JSON ({exc})") from None
    return scorer, manifest


def active_scorer(con: duckdb.DuckDBPyConnection) -> ActiveScorer:
    """The active relation scorer; never raises: one that fails to load comes back as none, with the reason."""
    row = store.get_active_relation_scorer(con)
    if row is None:
        return ActiveScorer(None, message=NO_SCORER)
    path, name = row
    try:
        scorer, _ = load_scorer_folder(path)
    except rel.RelationError as exc:
        return ActiveScorer(None, message=f"the active relation scorer could not be loaded ({exc}): suggestions "
                                          "rank candidates by co-occurrence")
    return ActiveScorer(scorer, name, path)


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
    with store.transaction(con):
        store.set_active_relation_scorer(con, str(folder), name)
    return ActiveScorer(scorer, name, str(folder))


# --- scoring documents ----------------------------------------------------------------------------------------


def pair_rows(document: Document, annotations: Sequence[store.AnnotationRow], active: ActiveScorer
              ) -> list[store.PairRow]:
    """The stored pairs of one document from its annotation rows (every source), scored by ``active``."""
    return rel.annotated_pairs(document, annotations, active.scorer)


def score_documents(con: duckdb.DuckDBPyConnection, active: ActiveScorer, pmids: Sequence[str],
                    progress: Progress | None = None, batch: int = BATCH) -> ScoringReport:
    """Score the stored annotations of ``pmids`` and store their pairs, one transaction per batch."""
    started = time.time()
    pmids = list(dict.fromkeys(pmids))
    done = pairs = 0
    for first in range(0, len(pmids), batch):
        chunk = pmids[first:first + batch]
        documents = store.get_documents(con, chunk)
        stored = store.list_annotations(con, chunk)
        rows = [row for d in documents if d.pmid in stored for row in pair_rows(d, stored[d.pmid], active)]
        with store.transaction(con):
            pairs += store.replace_relation_pairs(con, active.version, [d.pmid for d in documents if d.pmid in stored],
                                                  rows)
        done += len(chunk)
        if progress is not None:
            progress(done, len(pmids))
    return ScoringReport(active.version, done, pairs, round(time.time() - started, 2))


def rescore(con: duckdb.DuckDBPyConnection, active: ActiveScorer | None = None,
            progress: Progress | None = None, *, who: Who = "") -> ScoringReport:
    """Score the annotated documents the active scorer has not scored (all of them after an activation)."""
    access.require(con, who, Action.TRAIN)
    active = active or active_scorer(con)
    return score_documents(con, active, store.list_unscored_documents(con, active.version), progress)


# --- training -------------------------------------------------------------------------------------------------


def decision_examples(con: duckdb.DuckDBPyConnection, schemas: Mapping[str, RelationSchema], lexicon: Lexicon,
                      held_out: Sequence[str] = ()) -> tuple[list[rel.Pair], dict[str, Document]]:
    """The store's active curator decisions as labelled pairs
    (:func:`curation.learning.relations.decision_training_pairs`)."""
    decisions = [d for d in store.list_decisions(con) if d.schema in schemas]
    if not decisions:
        return [], {}
    documents, mentions = _decided_documents(con, decisions)
    return relation_data.decision_training_pairs(decisions, schemas, documents, mentions, lexicon, held_out)


def _decided_documents(con: duckdb.DuckDBPyConnection, decisions: Sequence
                       ) -> tuple[dict[str, Document], dict[str, list[Mention]]]:
    """The decided documents and their stored mentions (what decisions become training pairs from)."""
    pmids = list(dict.fromkeys(d.pmid for d in decisions))
    documents = {d.pmid: d for d in store.get_documents(con, pmids)}
    mentions = {pmid: [Mention(r.pmid, r.start, r.end, r.text, r.entity_type, r.concept_id, r.source)
                       for r in rows] for pmid, rows in store.list_annotations(con, pmids).items()}
    return documents, mentions


def train_relation_scorer(con: duckdb.DuckDBPyConnection, settings: Settings, data_dir: str | Path | None = None,
                          name: str | None = None, decisions: bool = True, *, who: Who = "") -> tuple[Path, dict]:
    """Train a relation scorer here (the CLI; the app starts :func:`start_relation_training`) on BioRED + BC5CDR
    Train and (``decisions``) the store's curator decisions, and write its folder under ``<models>/relations/``.
    Not activated here (:func:`judge`, :func:`activate_scorer`).

    Raises:
        RelationError: a corpus is missing, or the pairs cannot train a scorer (named).
    """
    access.require(con, who, Action.TRAIN)
    from curation.entities.dictionaries import build_lexicon

    data_dir = Path(data_dir or settings.data_dir)
    name = name or relations_job.new_scorer_name()
    folder = Path(settings.models_dir) / relations_job.SCORERS / name
    if folder.exists():
        raise rel.RelationError(f"{folder} already exists; give another --name")
    schemas = {s.name: s for s in store.list_schemas(con)}
    chosen = store.list_decisions(con) if decisions else None
    documents, mentions = _decided_documents(con, chosen or [])
    scorer, manifest = relations_job.train(data_dir, chosen, schemas, documents, mentions, build_lexicon(con), name)
    return relations_job.write_scorer(folder, scorer, manifest), manifest


def start_relation_training(con: duckdb.DuckDBPyConnection, settings: Settings, data_dir: str | Path | None = None,
                            decisions: bool = True, launch: Callable[[Path], int] | None = None, *,
                            who: Who = "") -> store.Job:
    """Start the background job that trains a relation scorer and scores a snapshot of the documents with it.

    Raises:
        CurationError: another job is queued or running, or the worker cannot start.
    """
    access.require(con, who, Action.TRAIN)
    request = relations_job.RelationsRequest(name=relations_job.new_scorer_name(),
                                             data_dir=str(Path(data_dir or settings.data_dir)), decisions=decisions)
    return relations_job.start_relations_job(con, request, settings, launch)


def load_pairs(con: duckdb.DuckDBPyConnection, path: Path) -> tuple[str, int, int]:
    """Store a relation job's pairs in one transaction: (scorer, documents loaded, documents left unscored).

    A document is loaded only when it still has the number of annotations it was scored from (one re-annotated
    or gone since the snapshot is left for :func:`rescore`).
    """
    scorer, documents = relations_job.read_pairs(path)
    counts = dict(con.execute("SELECT pmid, annotations FROM annotated_documents").fetchall())
    loaded = skipped = 0
    batch: list[relations_job.DocumentPairs] = []

    def flush() -> None:
        nonlocal loaded
        store.replace_relation_pairs(con, scorer, [d.pmid for d in batch], [r for d in batch for r in d.rows])
        loaded += len(batch)
        batch.clear()

    with store.transaction(con):
        for document in documents:
            if counts.get(document.pmid) != document.annotations:
                skipped += 1
                continue
            batch.append(document)
            if len(batch) >= BATCH:
                flush()
        if batch:
            flush()
    return scorer, loaded, skipped


def apply_relation_job(con: duckdb.DuckDBPyConnection, job: store.Job) -> store.Job:
    """For a succeeded relation-scorer job (once): judge its scorer, activate it when not worse on Dev, load its
    pairs; the job's message says what happened."""
    from curation.jobs.result import JobResultError, job_result, result_json

    try:
        result = job_result(job)
    except JobResultError:
        return job
    if job.kind != relations_job.KIND or job.state != "succeeded" or result is None or result.activated is not None:
        return job
    pairs = Path(job.job_dir) / relations_job.PAIRS
    try:
        _, manifest = load_scorer_folder(result.path)
        activate, verdict = judge(con, manifest)
        if activate:
            active = activate_scorer(con, result.path, who=access.BACKGROUND_JOB)  # its start was checked
    except rel.RelationError as exc:
        activate, verdict = False, f"could not be activated ({exc}); the active scorer stays"
    message = f"{result.message}; {verdict}"
    if activate:
        try:
            _, loaded, skipped = load_pairs(con, pairs)
            message = f"{active.version} is active; {loaded:,} abstracts scored ({verdict})"
            if skipped:
                message += f"; {skipped:,} changed while it trained wait for `python -m curation rescore`"
        except (CurationError, OSError, duckdb.Error) as exc:
            message = f"{active.version} is active, but its pairs could not be loaded ({exc}); run rescore"
    store.set_job_result(con, job.job_id, message, result_json(replace(result, activated=activate, verdict=verdict)))
    pairs.unlink(missing_ok=True)
    return store.get_job(con, job.job_id)


def apply_relation_jobs(con: duckdb.DuckDBPyConnection, recent: int = 5) -> list[store.Job]:
    """Apply the recent relation-scorer jobs that succeeded and were not applied yet (the poll, app start)."""
    return [apply_relation_job(con, job) for job in store.list_jobs(con, limit=recent)
            if job.kind == relations_job.KIND and job.state == "succeeded"]


GATE_TOLERANCE = 0.005  # a new scorer may lose this much mean Dev F1 (noise) and still replace the active one


def judge(con: duckdb.DuckDBPyConnection, manifest: Mapping[str, object]) -> tuple[bool, str]:
    """Whether a newly trained scorer replaces the active one, and why: the retriever's rule — not worse on dev
    (the mean of its Dev pair F1s, BioRED any relation and BC5CDR chemical-induced disease)."""
    new = float(manifest.get("dev_pair_f1_mean", 0.0))  # type: ignore[arg-type]
    row = store.get_active_relation_scorer(con)
    if row is None:
        return True, f"activated: no relation scorer was active (Dev pair F1 {new:.3f})"
    try:
        _, old_manifest = load_scorer_folder(row[0])
    except rel.RelationError as exc:
        return True, f"activated: the active scorer does not load ({exc})"
    old = old_manifest.get("dev_pair_f1_mean")
    if old is None:
        return True, f"activated: the active scorer {row[1]} has no Dev figure (Dev pair F1 {new:.3f})"
    if new >= float(old) - GATE_TOLERANCE:
        return True, f"activated: Dev pair F1 {new:.3f} against {float(old):.3f} for {row[1]}"
    return False, f"kept {row[1]}: Dev pair F1 {new:.3f} is worse than its {float(old):.3f}"


def overview(con: duckdb.DuckDBPyConnection) -> str:
    """A line for the Train page: the active scorer, its Dev figures, and how many abstracts its scores cover."""
    active = active_scorer(con)
    by_scorer = store.list_relation_scorers(con)
    if active.scorer is None:
        return active.message
    try:
        _, manifest = load_scorer_folder(active.path)
    except rel.RelationError:
        manifest = {}
    dev = manifest.get("dev_pair_f1") or {}
    figures = ", ".join(f"{k} {v:.3f}" for k, v in dev.items())
    stale = sum(n for name, n in by_scorer.items() if name != active.version)
    return (f"Active relation scorer {active.version}" + (f" (Dev pair F1: {figures}; "
            f"{manifest.get('decision_pairs', 0)} pairs from curator decisions)" if figures else "")
            + f"; {by_scorer.get(active.version, 0):,} abstracts scored with it"
            + (f", {stale:,} still with another scorer's scores (`python -m curation rescore`)" if stale else ""))
