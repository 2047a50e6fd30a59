"""The relation scorer: does a document state a relation between two concepts it mentions?

For every pair of distinct concepts co-mentioned in a document (:func:`candidate_pairs`), a feature vector
(:func:`pair_features`: sentence co-occurrence, distances, mention counts, title mentions, trigger words
between and around the mentions, the pair's entity types) and a classifier (:class:`RelationScorer`:
scikit-learn's logistic regression over standardised features, kept as plain JSON — no pickle) give the
probability that the document relates them. Labels come from corpora with document-level relations
(BioRED: any relation type; BC5CDR: chemical-induced disease): a co-mentioned pair with an annotated
relation is a positive, one without is a negative.

:func:`training_pairs` builds the training set from documents and refuses any document whose PMID is held
out (a Dev or Test document of any corpus), so a benchmark never trains on what it scores.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from curation.errors import CurationError
from curation.records import Document, Mention

FORMAT_VERSION = 1
# Words that state a relation rather than a co-mention (lower-cased prefixes), grouped so that each group is
# one feature: the learner weighs them, the list only says where to look.
TRIGGERS = {
    "cause": ("induc", "caus", "provok", "elicit", "produc", "result", "lead", "led ", "associat", "develop"),
    "treat": ("treat", "therap", "respon", "sensitiv", "efficac", "benefit", "improv", "prevent", "protect"),
    "resist": ("resist", "refractor", "insensitiv", "fail"),
    "regulate": ("inhibit", "activat", "increas", "decreas", "reduc", "enhanc", "suppress", "regulat", "bind",
                 "express", "phosphorylat", "mediat", "block", "attenuat", "elevat"),
    "harm": ("toxic", "advers", "side effect", "damage", "injur"),
    "variant": ("mutat", "variant", "polymorphism", "carrier", "allele", "genotype"),
    "negation": (" no ", " not ", "without", "neither", "absence"),
}
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")
_ID_SPLIT = re.compile(r"[,;]")


class RelationError(CurationError):
    """A relation scorer that cannot be trained, saved or loaded; the message names the file or the reason."""


@dataclass(frozen=True)
class Pair:
    """Two concepts co-mentioned in one document (``concept_a`` < ``concept_b``), with the gold label if known."""

    pmid: str
    concept_a: str
    type_a: str
    concept_b: str
    type_b: str
    label: int = 0


def concept_ids(mention: Mention) -> list[str]:
    """A mention's concept ids (PubTator joins several with "," or ";"; "-" and "" mean none)."""
    return [c.strip() for c in _ID_SPLIT.split(mention.concept_id or "") if c.strip() and c.strip() != "-"]


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text`` (a regular expression: ends at . ! ? before a capital/digit)."""
    spans, start = [], 0
    for match in _SENTENCE.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return [(s, e) for s, e in spans if e > s]


def _by_concept(mentions: Iterable[Mention]) -> dict[str, list[Mention]]:
    found: dict[str, list[Mention]] = defaultdict(list)
    for m in mentions:
        for cid in concept_ids(m):
            found[cid].append(m)
    return found


def _related(document: Document) -> set[tuple[str, str]]:
    related = set()
    for r in document.relations:
        for a in _ID_SPLIT.split(r.concept1):
            for b in _ID_SPLIT.split(r.concept2):
                related.add(tuple(sorted((a.strip(), b.strip()))))
    return related


def candidate_pairs(document: Document, mentions: Sequence[Mention] | None = None,
                    types: set[frozenset[str]] | None = None) -> list[Pair]:
    """Every pair of distinct concepts co-mentioned in ``document`` (its gold mentions unless ``mentions``),
    labelled from its gold relations; ``types`` keeps only pairs of those entity-type pairs."""
    by_concept = _by_concept(document.mentions if mentions is None else mentions)
    related = _related(document)
    names = sorted(by_concept)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            type_a, type_b = by_concept[a][0].type, by_concept[b][0].type
            if types is not None and frozenset((type_a, type_b)) not in types:
                continue
            out.append(Pair(document.pmid, a, type_a, b, type_b, int((a, b) in related)))
    return out


def training_pairs(documents: Iterable[Document], held_out: set[str],
                   types: set[frozenset[str]] | None = None) -> tuple[list[Pair], list[Document]]:
    """Labelled pairs of the documents that have gold relations, none of ``held_out`` (PMIDs of Dev/Test).

    Raises:
        RelationError: a held-out document was given (the caller mixed splits).
    """
    pairs, used = [], []
    for document in documents:
        if document.pmid in held_out:
            raise RelationError(f"document {document.pmid} is held out (Dev or Test) and cannot be trained on")
        if not document.relations:
            continue
        used.append(document)
        pairs += candidate_pairs(document, types=types)
    return pairs, used


TYPE_NAMES = ("Gene", "Chemical", "Disease", "Variant", "Species", "CellLine", "Other")


def _type(name: str) -> str:
    name = {"GeneOrGeneProduct": "Gene", "ChemicalEntity": "Chemical", "DiseaseOrPhenotypicFeature": "Disease",
            "SequenceVariant": "Variant", "OrganismTaxon": "Species"}.get(name, name)
    return name if name in TYPE_NAMES else "Other"


TYPE_PAIRS = tuple(f"{a}-{b}" for i, a in enumerate(TYPE_NAMES) for b in TYPE_NAMES[i:])
FEATURES = (
    "same_sentence", "same_sentence_share", "min_chars", "min_sentences", "count_a", "count_b", "title_a",
    "title_b", "first_a", "first_b", "sentences_both", "cooccurring_concepts", "top_of_type_a", "top_of_type_b",
    "rank_of_type_a", "rank_of_type_b", "same_type_concepts_a", "same_type_concepts_b", "both_in_title",
    *(f"trigger_{g}" for g in TRIGGERS), *(f"near_{g}" for g in TRIGGERS), *(f"types_{t}" for t in TYPE_PAIRS),
)


def pair_features(document: Document, pair: Pair, mentions: Sequence[Mention] | None = None,
                  by_concept: Mapping[str, list[Mention]] | None = None) -> np.ndarray:
    """The feature vector of ``pair`` in ``document`` (``FEATURES`` order; float32)."""
    text = f"{document.title} {document.abstract}" if document.title else document.abstract
    by_concept = by_concept or _by_concept(document.mentions if mentions is None else mentions)
    spans = sentences(text)
    starts = np.array([s for s, _ in spans])

    def sentence_of(offset: int) -> int:
        return int(np.searchsorted(starts, offset, side="right") - 1)

    ma, mb = by_concept.get(pair.concept_a, []), by_concept.get(pair.concept_b, [])
    sa = {sentence_of(m.start) for m in ma}
    sb = {sentence_of(m.start) for m in mb}
    both = sa & sb
    title_end = len(document.title)
    distances = [abs(x.start - y.start) for x in ma for y in mb] or [len(text)]
    sentence_gaps = [abs(x - y) for x in sa for y in sb] or [len(spans)]
    shared = [text[spans[i][0]:spans[i][1]].lower() for i in sorted(both)]
    # the text between the closest pair of mentions, and the sentences holding both
    x, y = min(((x, y) for x in ma for y in mb), key=lambda p: abs(p[0].start - p[1].start), default=(None, None))
    between = text[min(x.end, y.end):max(x.start, y.start)].lower() if x is not None else ""
    others = sum(1 for c, ms in by_concept.items() if c not in (pair.concept_a, pair.concept_b)
                 and {sentence_of(m.start) for m in ms} & both)
    title_a, title_b = float(any(m.start < title_end for m in ma)), float(any(m.start < title_end for m in mb))
    values = [
        float(len(both) > 0), len(both) / max(1, len(sa | sb)), np.log1p(min(distances)), min(sentence_gaps),
        np.log1p(len(ma)), np.log1p(len(mb)), title_a, title_b,
        min((m.start for m in ma), default=len(text)) / max(1, len(text)),
        min((m.start for m in mb), default=len(text)) / max(1, len(text)), len(both), np.log1p(others),
    ]
    # how central each concept is among the document's concepts of its type (the topic chemical and disease)
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    for cid, ms in by_concept.items():
        counts[_type(ms[0].type)][cid] = len(ms)

    def rank(cid: str, kind: str) -> tuple[float, float, float]:
        mine = counts[_type(kind)]
        above = sum(1 for n in mine.values() if n > mine.get(cid, 0))
        return float(above == 0), float(np.log1p(above)), float(np.log1p(len(mine) - 1))

    ra, rb = rank(pair.concept_a, pair.type_a), rank(pair.concept_b, pair.type_b)
    values += [ra[0], rb[0], ra[1], rb[1], ra[2], rb[2], title_a * title_b]
    values += [float(sum(any(w in s for w in words) for s in shared)) for words in TRIGGERS.values()]
    values += [float(any(w in between for w in words)) for words in TRIGGERS.values()]
    a, b = sorted((_type(pair.type_a), _type(pair.type_b)), key=TYPE_NAMES.index)
    values += [float(t == f"{a}-{b}") for t in TYPE_PAIRS]
    return np.asarray(values, dtype=np.float32)


def feature_matrix(documents: Mapping[str, Document], pairs: Sequence[Pair]) -> np.ndarray:
    """(len(pairs), len(FEATURES)) features, each document's mentions grouped once."""
    cache: dict[str, dict[str, list[Mention]]] = {}
    rows = []
    for pair in pairs:
        document = documents[pair.pmid]
        if pair.pmid not in cache:
            cache[pair.pmid] = _by_concept(document.mentions)
        rows.append(pair_features(document, pair, by_concept=cache[pair.pmid]))
    return np.vstack(rows) if rows else np.zeros((0, len(FEATURES)), dtype=np.float32)


@dataclass
class RelationScorer:
    """Logistic regression over standardised pair features, with the decision threshold chosen out of fold."""

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    threshold: float = 0.5

    @classmethod
    def fit(cls, features: np.ndarray, labels: np.ndarray, c: float = 1.0, seed: int = 0) -> RelationScorer:
        """Train on ``features`` / ``labels``; the threshold maximises F1 over 5-fold out-of-fold predictions.

        Raises:
            RelationError: no positive or no negative pair.
        """
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import cross_val_predict
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        labels = np.asarray(labels)
        if len(set(labels.tolist())) < 2:
            raise RelationError("the training pairs need both related and unrelated pairs")
        model = make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=2000, class_weight="balanced",
                                                                   random_state=seed))
        oof = cross_val_predict(model, features, labels, cv=5, method="predict_proba")[:, 1]
        model.fit(features, labels)
        scaler, learner = model[0], model[1]
        scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
        return cls(scaler.mean_.astype(np.float64), scale.astype(np.float64), learner.coef_[0].astype(np.float64),
                   float(learner.intercept_[0]), best_threshold(labels, oof))

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """(n,) the probability that each pair is related."""
        z = ((np.asarray(features, dtype=np.float64) - self.mean) / self.scale) @ self.coef + self.intercept
        return 1.0 / (1.0 + np.exp(-z))

    def save(self, path: Path) -> Path:
        payload = {"format_version": FORMAT_VERSION, "features": list(FEATURES), "mean": self.mean.tolist(),
                   "scale": self.scale.tolist(), "coef": self.coef.tolist(), "intercept": self.intercept,
                   "threshold": self.threshold}
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(payload, indent=1))
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: Path) -> RelationScorer:
        """Raises: RelationError naming the file when it is missing, corrupted or for other features."""
        try:
            payload = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise RelationError(f"relation scorer {path} cannot be read ({exc})") from None
        if payload.get("format_version") != FORMAT_VERSION or payload.get("features") != list(FEATURES):
            raise RelationError(f"relation scorer {path} was made for other features; train it again")
        return cls(np.asarray(payload["mean"]), np.asarray(payload["scale"]), np.asarray(payload["coef"]),
                   float(payload["intercept"]), float(payload["threshold"]))


def best_threshold(labels: np.ndarray, scores: np.ndarray) -> float:
    """The score threshold with the best F1 on (labels, scores)."""
    order = np.argsort(-scores)
    labels, scores = np.asarray(labels)[order], np.asarray(scores)[order]
    tp = np.cumsum(labels)
    precision = tp / np.arange(1, len(labels) + 1)
    recall = tp / max(1, labels.sum())
    f1 = np.where(precision + recall > 0, 2 * precision * recall / np.maximum(precision + recall, 1e-12), 0.0)
    best = int(np.argmax(f1))
    return float(scores[best])


def pair_scores(labels: Sequence[int], predicted: Sequence[int], missed: int = 0) -> dict[str, float]:
    """Precision, recall and F1 of predicted pairs; ``missed``: gold relations no candidate pair could cover."""
    labels, predicted = np.asarray(labels), np.asarray(predicted)
    tp = int(((labels == 1) & (predicted == 1)).sum())
    fp = int(((labels == 0) & (predicted == 1)).sum())
    fn = int(((labels == 1) & (predicted == 0)).sum()) + missed
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(2 * p * r / (p + r), 4) if p + r else 0.0,
            "tp": tp, "fp": fp, "fn": fn}


def uncovered(documents: Iterable[Document], pairs: Sequence[Pair],
              types: set[frozenset[str]] | None = None) -> int:
    """Gold relations (of ``types``) with no candidate pair: a concept never mentioned, so no scorer can find it."""
    covered = {(p.pmid, p.concept_a, p.concept_b) for p in pairs if p.label}
    missing = 0
    for document in documents:
        kinds = {c: m[0].type for c, m in _by_concept(document.mentions).items()}
        for a, b in _related(document):
            if types is not None and (a in kinds and b in kinds) and frozenset((kinds[a], kinds[b])) not in types:
                continue
            if (document.pmid, a, b) not in covered:
                missing += 1
    return missing
