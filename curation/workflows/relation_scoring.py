"""The relation scorer in the app: which one is active, scoring documents when they are annotated, training.

Every annotated document's co-mentioned concept pairs are stored with the active scorer's probability that the
document relates them (:mod:`curation.store.relations`), in the same transaction as its annotations
(:func:`curation.workflows.entities.annotate_documents` calls :func:`pair_rows`); the Curate page's
suggestions read them and never score on a page view. Without an active scorer the pairs are stored unscored
(a co-mention), and suggestions rank by co-occurrence and say so.

A scorer is a folder (``scorer.json``: the logistic regression as JSON, no pickle; ``manifest.json``: what it
was trained on) recorded in the store's ``relation_scorers``; activating one re-scores, in the
background of the caller, only documents another scorer wrote (:func:`rescore`). :func:`train_relation_scorer`
trains one on BioRED + BC5CDR Train (Dev and Test held out) and the store's curator decisions.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from curation import store
from curation.config import Settings
from curation.entities.lexicon import Lexicon
from curation.entities.variants import variant_keys
from curation.grades import RELEVANT_GRADES, Grade
from curation.learning import relations as rel
from curation.records import Document, Mention
from curation.schemas import RelationSchema

SCORER_FILE = "scorer.json"
MANIFEST_FILE = "manifest.json"
BATCH = 200  # documents scored and written per transaction
NO_SCORER = ("no relation scorer active: suggestions rank candidates by co-occurrence; train one with "
             "python -m curation train-relations")

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


def activate_scorer(con: duckdb.DuckDBPyConnection, folder: str | Path) -> ActiveScorer:
    """Make the scorer of ``folder`` the active one (checked first: a bad folder changes nothing).

    Documents are not re-scored here: call :func:`rescore`.

    Raises:
        RelationError: the folder does not hold a scorer of this version.
    """
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
    mentions = [Mention(document.pmid, r.start, r.end, r.text, r.entity_type, r.concept_id, r.source)
                for r in annotations if 0 <= r.start < r.end <= len(document.text)]
    names: dict[str, str] = {}
    for r in annotations:
        for cid in rel.concept_ids(Mention(r.pmid, r.start, r.end, r.text, r.entity_type, r.concept_id)):
            if r.canonical and (cid not in names or r.source != "gold"):
                names[cid] = r.canonical
    return [store.PairRow(*(getattr(p, f) for f in store.PairRow._fields))
            for p in rel.score_document(document, mentions, active.scorer, names)]


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
            progress: Progress | None = None) -> ScoringReport:
    """Score the annotated documents the active scorer has not scored (all of them after an activation)."""
    active = active or active_scorer(con)
    return score_documents(con, active, store.list_unscored_documents(con, active.version), progress)


# --- training -------------------------------------------------------------------------------------------------


def _slot_concepts(lexicon: Lexicon, kind: str, value: str, mentions: Sequence[Mention]) -> list[str]:
    """The concept ids of a document's mentions that a typed value names (by the dictionaries, the mention's
    own text, or, for a variant, its notation)."""
    value = " ".join(value.split())
    if not value:
        return []
    known = {c for _, c in lexicon.lookup(value, kind)}
    keys = set(variant_keys(value)) if kind == "variant" else set()
    out = []
    for m in mentions:
        if m.type != kind:
            continue
        ids = rel.concept_ids(m)
        if (known & set(ids) or m.text.casefold() == value.casefold()
                or (keys and keys & set(variant_keys(m.text)))):
            out += ids
    return list(dict.fromkeys(out))


def decision_examples(con: duckdb.DuckDBPyConnection, schemas: Mapping[str, RelationSchema], lexicon: Lexicon,
                      held_out: Sequence[str] = ()) -> tuple[list[rel.Pair], dict[str, Document]]:
    """Curators' active decisions as labelled pairs (:func:`curation.learning.relations.decision_pairs`): an
    accepted decision with an answer the document mentions → a positive for (query concepts, answer); a
    rejection → negatives for the answer-kind concepts it mentions with the query's."""
    decisions = [d for d in store.list_decisions(con) if d.schema in schemas]
    if not decisions:
        return [], {}
    pmids = list(dict.fromkeys(d.pmid for d in decisions))
    documents = {d.pmid: d for d in store.get_documents(con, pmids)}
    mentions = {pmid: [Mention(r.pmid, r.start, r.end, r.text, r.entity_type, r.concept_id, r.source)
                       for r in rows] for pmid, rows in store.list_annotations(con, pmids).items()}
    rows: list[tuple[str, tuple[str, list[str], str, int]]] = []
    for d in decisions:
        schema = schemas[d.schema]
        found = mentions.get(d.pmid, [])
        query = [c for slot, value in d.query_entities if slot in schema.query_types
                 for c in _slot_concepts(lexicon, schema.kind(slot), value, found)]
        kind = schema.kind(schema.answer)
        if d.grade in RELEVANT_GRADES and d.answer.strip():
            rows += [(kind, (d.pmid, query, a, 1)) for a in _slot_concepts(lexicon, kind, d.answer, found)[:1]]
        elif d.grade == Grade.NOT_RELEVANT:
            rows.append((kind, (d.pmid, query, "", 0)))
    pairs: list[rel.Pair] = []
    used: dict[str, Document] = {}
    for kind, row in rows:
        got, docs = rel.decision_pairs([row], documents, mentions, kind, held_out)
        pairs += got
        used.update(docs)
    return pairs, used


def new_scorer_name() -> str:
    return "relations-" + datetime.now(UTC).strftime("%Y%m%d-%H%M%S")


def train_relation_scorer(con: duckdb.DuckDBPyConnection, settings: Settings, data_dir: str | Path | None = None,
                          name: str | None = None, decisions: bool = True) -> tuple[Path, dict]:
    """Train a relation scorer on BioRED + BC5CDR Train and (``decisions``) the store's curator decisions, and
    write its folder under ``<models>/relations/``. Not activated here.

    Raises:
        RelationError: a corpus is missing, or the pairs cannot train a scorer (named).
    """
    from curation.entities.dictionaries import build_lexicon

    started = time.time()
    data_dir = Path(data_dir or settings.data_dir)
    training = rel.corpus_training_set(data_dir)
    extra: list[rel.Pair] = []
    extra_documents: dict[str, Document] = {}
    if decisions:
        schemas = {s.name: s for s in store.list_schemas(con)}
        extra, extra_documents = decision_examples(con, schemas, build_lexicon(con), sorted(training.held_out))
    scorer = rel.train_scorer(training, extra, extra_documents)
    dev = rel.dev_pair_f1(scorer, data_dir)
    name = name or new_scorer_name()
    folder = Path(settings.models_dir) / "relations" / name
    if folder.exists():
        raise rel.RelationError(f"{folder} already exists; give another --name")
    tmp = folder.with_name(folder.name + ".partial")
    tmp.mkdir(parents=True, exist_ok=False)
    scorer.save(tmp / SCORER_FILE)
    manifest = {
        "name": name, "format_version": rel.FORMAT_VERSION, "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "data_dir": str(data_dir), "corpus_documents": training.per_corpus, "corpus_pairs": len(training.pairs),
        "corpus_positives": sum(p.label for p in training.pairs), "held_out_pmids": len(training.held_out),
        "decision_pairs": len(extra), "decision_positives": sum(p.label for p in extra),
        "threshold": round(scorer.threshold, 6), "dev_pair_f1": dev,
        "dev_pair_f1_mean": round(sum(dev.values()) / len(dev), 4), "seconds": round(time.time() - started, 1),
    }
    (tmp / MANIFEST_FILE).write_text(json.dumps(manifest, indent=1))
    tmp.replace(folder)
    return folder, manifest


GATE_TOLERANCE = 0.005  # a new scorer may lose this much mean Dev F1 (noise) and still replace the active one


def judge(con: duckdb.DuckDBPyConnection, manifest: Mapping[str, object]) -> tuple[bool, str]:
    """Whether a newly trained scorer replaces the active one, and why: the retriever's rule — not worse on dev
    (the mean of its Dev pair F1s, BioRED any relation and BC5CDR chemical-induced disease)."""
    new = float(manifest.get("dev_pair_f1_mean", 0.0))  # type: ignore[arg-type]
    row = store.get_active_relation_scorer(con)
    if row is None:
        return True, f"activated: no relation scorer was active (Dev pair F1 {new:.3f})"
    old_manifest = {}
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


def describe(con: duckdb.DuckDBPyConnection) -> dict[str, object]:
    """The active scorer and which scorer wrote the stored pairs (for ``stats`` and the Train page)."""
    active = active_scorer(con)
    return {"active": active.version, "path": active.path, "message": active.message,
            "documents_by_scorer": store.list_relation_scorers(con)}
