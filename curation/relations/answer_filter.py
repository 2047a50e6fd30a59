"""Which candidates for a chemical answer slot are of the slot's kind: a Treatment is a drug or a therapy, not
the reagent, solvent, ion, nucleotide or fixative an abstract also names beside the gene.

The filter is learned from the KB itself, per (schema, answer slot): the slot's KB values (each part of a
combination, "Selumetinib (AZD6244)" as both names) are the positives, and every other chemical concept the
corpus mentions is a negative. A logistic regression reads the display name's character n-grams (drug stems
"-tinib", "-mab", "-platin", code names "AZD8055" against "-ide", "-ate", "acid", "sodium") and where the
concept's id comes from (a DrugBank id: a drug vocabulary filed it; a MeSH supplementary "C" id: mostly
research chemicals). Its threshold, and the choice between it and the plain rule "filed under a DrugBank id",
were made on a held-out quarter of the names (:func:`choose_on_dev`, run by bench/_treatments.py:
:data:`RULE`, :data:`THRESHOLD`); the filter a store serves is fitted on every name of its KB and corpus.

A concept the KB names as an answer is always kept ("unless the KB says so"). A schema whose own records name
too few answers learns from the KB's values of the slot's name in every schema (a Disease-Treatment schema
with no records learns what a Treatment is from CIViC's therapies). Slots of other kinds, and KBs with fewer
than :data:`MIN_KB_ANSWERS` linked answers to learn from, are not filtered (:func:`answer_filter`
returns None and the suggestion says nothing is left out).
"""

from __future__ import annotations

import hashlib
import json
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np

from curation.entities.lexicon import Lexicon
from curation.files import write_atomic
from curation.schemas import RelationSchema
from curation.store.annotations import list_annotated_concepts
from curation.store.kb import list_entity_values, list_slot_values
from curation.store.relations import list_pair_concepts

FILTERED_KINDS = ("chemical",)
MIN_KB_ANSWERS = 30  # linked KB answers needed to learn from
#: the rule and the learned model's threshold, chosen on dev (bench/_treatments.py records the figures: on the
#: sample's CIViC + corpus, dev F1 0.862 (precision 0.928, recall 0.805) at 0.65; DrugBank ids alone 0.307)
RULE = "learned"
THRESHOLD = 0.65
DEV_SHARE = 4  # one name in DEV_SHARE is held out (by a hash of the name: the same split every time)
_PARTS = re.compile(r"\s*(?:,|\+|;|/|\(|\)|\band\b|\bplus\b)\s*", re.IGNORECASE)
_DRUGBANK = re.compile(r"DB\d{5}")
_SUPPLEMENTARY = re.compile(r"C\d{6,9}")


@dataclass(frozen=True)
class AnswerFilter:
    """Keeps the candidates of the slot's kind. ``rule``: "learned" or "drugbank" (chosen on dev), or "decided"
    (a learned filter's decisions for every candidate of the store, :func:`answer_filter`)."""

    slot: str
    rule: str
    kb_concepts: frozenset[str]
    threshold: float = 0.5
    model: object = field(default=None, repr=False, compare=False)  # (vectoriser, classifier) for "learned"
    examples: int = 0
    decided: frozenset[str] | None = None  # rule "decided": the candidates kept, decided when it was learned

    def keep(self, concept_id: str, name: str) -> bool:
        """Whether a candidate (one of its concept ids and its display name) is of the slot's kind."""
        if concept_id in self.kb_concepts:
            return True
        if self.rule == "decided":
            return concept_id in (self.decided or ())
        if self.rule == "drugbank":
            return bool(_DRUGBANK.fullmatch(concept_id))
        return bool(self.scores([concept_id], [name])[0] >= self.threshold)

    def keep_many(self, candidates: Sequence[tuple[Sequence[str], str]]) -> list[bool]:
        """:meth:`keep` for many candidates at once, each (its concept ids, its display name): kept when one of
        its ids is."""
        rows = [(i, cid, name) for i, (ids, name) in enumerate(candidates) for cid in ids]
        if self.rule == "decided":
            return [any(c in self.kb_concepts or c in (self.decided or ()) for c in ids) for ids, _ in candidates]
        if self.rule == "learned" and rows:
            scores = self.scores([cid for _, cid, _ in rows], [name for _, _, name in rows])
        else:
            scores = np.array([float(bool(_DRUGBANK.fullmatch(cid))) for _, cid, _ in rows])
        out = [False] * len(candidates)
        for (i, cid, _), score in zip(rows, scores, strict=True):
            out[i] = out[i] or cid in self.kb_concepts or bool(score >= self.threshold)
        return out

    def scores(self, concept_ids: Sequence[str], names: Sequence[str]) -> np.ndarray:
        """The learned probability that each (id, name) is an answer of the slot."""
        vectoriser, classifier = self.model  # type: ignore[misc]
        return classifier.predict_proba(_features(vectoriser, concept_ids, names))[:, 1]


def _shape(concept_id: str, name: str) -> list[float]:
    return [float(bool(_DRUGBANK.fullmatch(concept_id))), float(bool(_SUPPLEMENTARY.fullmatch(concept_id))),
            float(any(c.isdigit() for c in name)), float(len(name) <= 4), float(len(name.split()) >= 3)]


def _features(vectoriser, concept_ids: Sequence[str], names: Sequence[str]):
    from scipy.sparse import csr_matrix, hstack

    shapes = csr_matrix(np.array([_shape(c, n) for c, n in zip(concept_ids, names, strict=True)]).reshape(-1, 5))
    return hstack([vectoriser.transform([n.casefold() for n in names]), shapes]).tocsr()


def _fit(concept_ids: Sequence[str], names: Sequence[str], labels: Sequence[int]):
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    vectoriser = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), min_df=2, sublinear_tf=True)
    vectoriser.fit([n.casefold() for n in names])
    classifier = LogisticRegression(C=4.0, class_weight="balanced", solver="liblinear")
    classifier.fit(_features(vectoriser, concept_ids, names), np.asarray(labels))
    return vectoriser, classifier


def _prf(predicted: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    tp = float((predicted & gold).sum())
    p = tp / float(predicted.sum()) if predicted.sum() else 0.0
    r = tp / float(gold.sum()) if gold.sum() else 0.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(2 * p * r / (p + r) if p + r else 0.0, 4)}


def kb_answers(con: duckdb.DuckDBPyConnection, schema: RelationSchema) -> list[tuple[str, int]]:
    """The KB's answers of the schema's answer slot; when they are fewer than :data:`MIN_KB_ANSWERS`, the
    values of that slot name in every schema's records."""
    own = list_entity_values(con, schema.name, schema.answer)
    return own if len(own) >= MIN_KB_ANSWERS else list_slot_values(con, schema.answer)


def training_examples(con: duckdb.DuckDBPyConnection, schema: RelationSchema, lexicon: Lexicon
                      ) -> tuple[list[tuple[str, str, int]], frozenset[str]]:
    """(concept id or "", name, label) per example, and the concept ids the KB names as answers."""
    kind = schema.kind(schema.answer)
    positives: dict[str, str] = {}  # name -> concept id ("" when the lexicon does not know the name)
    for value, _ in kb_answers(con, schema):
        for part in {p.strip() for p in _PARTS.split(value) if len(p.strip()) > 1}:
            found = lexicon.lookup(part, kind)
            positives.setdefault(part, found[0][1] if found else "")
    kb_concepts = frozenset(c for c in positives.values() if c)
    examples = [(c, lexicon.canonical(kind, c) or n, 1) for n, c in positives.items()]
    seen = {(c or n.casefold()) for c, n, _ in examples}
    for concept, _ in list_annotated_concepts(con, kind):
        name = lexicon.canonical(kind, concept)
        if name and concept not in kb_concepts and concept not in seen:
            seen.add(concept)
            examples.append((concept, name, 0))
    return examples, kb_concepts


def choose_on_dev(examples: Sequence[tuple[str, str, int]]) -> dict[str, dict[str, float]]:
    """Dev figures behind :data:`THRESHOLD` and :data:`RULE`: the learned model fitted on three quarters of the
    names and scored on the held-out quarter at each threshold, and the DrugBank-id rule on the same quarter."""
    dev_mask = np.array([zlib.crc32(n.casefold().encode()) % DEV_SHARE == 0 for _, n, _ in examples])
    ids = [c for c, _, _ in examples]
    names = [n for _, n, _ in examples]
    labels = np.array([y for _, _, y in examples], dtype=bool)
    train, dev = np.flatnonzero(~dev_mask), np.flatnonzero(dev_mask)
    held = AnswerFilter("", "learned", frozenset(), model=_fit([ids[i] for i in train], [names[i] for i in train],
                                                               labels[train]))
    scores = held.scores([ids[i] for i in dev], [names[i] for i in dev])
    out = {f"learned@{t:.2f}": _prf(scores >= t, labels[dev]) for t in np.round(np.arange(0.05, 0.96, 0.05), 2)}
    out["drugbank"] = _prf(np.array([bool(_DRUGBANK.fullmatch(ids[i])) for i in dev]), labels[dev])
    out["sizes"] = {"train": float(len(train)), "dev": float(len(dev)), "positives": float(labels.sum())}
    return out


def learn_answer_filter(examples: Sequence[tuple[str, str, int]], kb_concepts: frozenset[str], slot: str,
                        rule: str = RULE, threshold: float = THRESHOLD) -> AnswerFilter:
    """The filter fitted on every example (:func:`training_examples`)."""
    if rule == "drugbank":
        return AnswerFilter(slot, rule, kb_concepts, examples=len(examples))
    model = _fit([c for c, _, _ in examples], [n for _, n, _ in examples], [y for _, _, y in examples])
    return AnswerFilter(slot, rule, kb_concepts, threshold, model, len(examples))


CACHE_FORMAT = 1
CACHE_KEEP = 4  # decision files kept in the cache folder (each KB, corpus or code change makes a new one)
_CACHE: dict[str, AnswerFilter | None] = {}


def _digest(schema: RelationSchema, answers: Sequence[tuple[str, int]], candidates: Sequence[tuple[str, str]],
            lexicon: Lexicon) -> str:
    hasher = hashlib.sha256(f"format {CACHE_FORMAT}\n{schema.name}\n{schema.answer}\n".encode())
    hasher.update(Path(__file__).read_bytes())  # a change of the rule is a miss
    kind = schema.kind(schema.answer)
    for row in (*answers, *((c, n, lexicon.canonical(kind, c), lexicon.lookup(n, kind)[:1]) for c, n in candidates)):
        hasher.update(repr(row).encode() + b"\n")
    return hasher.hexdigest()[:32]


def _decide(con: duckdb.DuckDBPyConnection, schema: RelationSchema, lexicon: Lexicon,
            candidates: Sequence[tuple[str, str]]) -> AnswerFilter | None:
    """Learn the filter and decide every candidate now (None: too few KB answers to learn from)."""
    examples, kb_concepts = training_examples(con, schema, lexicon)
    if len(kb_concepts) < MIN_KB_ANSWERS or not any(y == 0 for _, _, y in examples):
        return None
    learned = learn_answer_filter(examples, kb_concepts, schema.answer)
    kind = schema.kind(schema.answer)
    kept = learned.keep_many([([c], lexicon.canonical(kind, c) or n) for c, n in candidates])
    return AnswerFilter(schema.answer, "decided", kb_concepts, learned.threshold, examples=len(examples),
                        decided=frozenset(c for (c, _), k in zip(candidates, kept, strict=True) if k))


def _read(path: Path, slot: str) -> AnswerFilter | None | bool:
    """The decisions a file holds: an AnswerFilter, None ("not filtered"), or False when it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != CACHE_FORMAT:
            return False
        if data["kept"] is None:
            return None
        return AnswerFilter(slot, "decided", frozenset(data["kb_concepts"]), float(data["threshold"]),
                            examples=int(data["examples"]), decided=frozenset(data["kept"]))
    except (OSError, ValueError, KeyError, TypeError):
        return False  # a miss: learned again and written anew


def _write(path: Path, decided: AnswerFilter | None) -> None:
    body = {"format": CACHE_FORMAT, "kept": None} if decided is None else {
        "format": CACHE_FORMAT, "threshold": decided.threshold, "examples": decided.examples,
        "kb_concepts": sorted(decided.kb_concepts), "kept": sorted(decided.decided or ())}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(body))
        for old in sorted(path.parent.glob("answers-*.json"), key=lambda p: p.stat().st_mtime)[:-CACHE_KEEP]:
            old.unlink(missing_ok=True)
    except OSError:
        pass  # a read-only or full cache folder only costs the next process the learning


def answer_filter(con: duckdb.DuckDBPyConnection, schema: RelationSchema, lexicon: Lexicon,
                  cache_dir: Path | None = None) -> AnswerFilter | None:
    """The filter of ``schema``'s answer slot over this store, None when the slot is not filtered.

    The filter is learned from the KB's answers and the corpus's chemicals, and every candidate the stored pairs
    can offer is decided at once; the decisions are kept in memory and, with ``cache_dir``, as JSON named by a
    digest of everything they depend on (the KB's answers, the candidates and their names, this module), so
    another process (a CLI command) reads them instead of learning again.
    """
    if schema.kind(schema.answer) not in FILTERED_KINDS:
        return None
    answers = kb_answers(con, schema)
    candidates = list_pair_concepts(con, schema.kind(schema.answer))
    key = _digest(schema, answers, candidates, lexicon)
    if key not in _CACHE:
        path = Path(cache_dir) / f"answers-{key}.json" if cache_dir is not None else None
        found = _read(path, schema.answer) if path is not None and path.exists() else False
        if found is False:
            found = _decide(con, schema, lexicon, candidates)
            if path is not None:
                _write(path, found)
        _CACHE.clear()  # one store at a time: a new KB or corpus replaces the old decisions
        _CACHE[key] = found
    return _CACHE[key]
