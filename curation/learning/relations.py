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
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from curation.errors import CurationError
from curation.records import Document, Mention
from curation.store.relations import PairRow

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


@lru_cache(maxsize=256)
def _sentences(text: str) -> tuple[tuple[int, int], ...]:
    return tuple(sentences(text))


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


# PubTator's type names (the corpora's) and the store's entity kinds, to the scorer's types
_TYPE_OF = {"GeneOrGeneProduct": "Gene", "ChemicalEntity": "Chemical", "DiseaseOrPhenotypicFeature": "Disease",
            "SequenceVariant": "Variant", "OrganismTaxon": "Species", "gene": "Gene", "chemical": "Chemical",
            "disease": "Disease", "variant": "Variant", "species": "Species", "cellline": "CellLine"}


def _type(name: str) -> str:
    name = _TYPE_OF.get(name, name)
    return name if name in TYPE_NAMES else "Other"


TYPE_PAIRS = tuple(f"{a}-{b}" for i, a in enumerate(TYPE_NAMES) for b in TYPE_NAMES[i:])
FEATURES = (
    "same_sentence", "same_sentence_share", "min_chars", "min_sentences", "count_a", "count_b", "title_a",
    "title_b", "first_a", "first_b", "sentences_both", "cooccurring_concepts", "top_of_type_a", "top_of_type_b",
    "rank_of_type_a", "rank_of_type_b", "same_type_concepts_a", "same_type_concepts_b", "both_in_title",
    *(f"trigger_{g}" for g in TRIGGERS), *(f"near_{g}" for g in TRIGGERS), *(f"types_{t}" for t in TYPE_PAIRS),
)


@dataclass(frozen=True)
class _View:
    """What every pair of one document shares: its text, sentences, each concept's sentences and mention counts."""

    text: str
    spans: tuple[tuple[int, int], ...]
    sentences_of: dict[str, frozenset[int]]
    counts: dict[str, dict[str, int]]  # scorer type → concept → mentions


def _view(document: Document, by_concept: Mapping[str, list[Mention]]) -> _View:
    text = document.text
    spans = _sentences(text)
    starts = [s for s, _ in spans]
    sentences_of = {c: frozenset(bisect_right(starts, m.start) - 1 for m in ms) for c, ms in by_concept.items()}
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    for cid, ms in by_concept.items():
        counts[_type(ms[0].type)][cid] = len(ms)
    return _View(text, spans, sentences_of, counts)


def pair_features(document: Document, pair: Pair, mentions: Sequence[Mention] | None = None,
                  by_concept: Mapping[str, list[Mention]] | None = None, view: _View | None = None) -> np.ndarray:
    """The feature vector of ``pair`` in ``document`` (``FEATURES`` order; float32).

    ``by_concept`` and ``view``: the document's mentions grouped by concept and its shared view, when the
    caller scores many pairs of one document (computed here otherwise).
    """
    by_concept = by_concept or _by_concept(document.mentions if mentions is None else mentions)
    view = view or _view(document, by_concept)
    text, spans = view.text, view.spans
    ma, mb = by_concept.get(pair.concept_a, []), by_concept.get(pair.concept_b, [])
    sa = view.sentences_of.get(pair.concept_a, frozenset())
    sb = view.sentences_of.get(pair.concept_b, frozenset())
    both = sa & sb
    title_end = len(document.title)
    distances = [abs(x.start - y.start) for x in ma for y in mb] or [len(text)]
    sentence_gaps = [abs(x - y) for x in sa for y in sb] or [len(spans)]
    shared = [text[spans[i][0]:spans[i][1]].lower() for i in sorted(both)]
    # the text between the closest pair of mentions, and the sentences holding both
    x, y = min(((x, y) for x in ma for y in mb), key=lambda p: abs(p[0].start - p[1].start), default=(None, None))
    between = text[min(x.end, y.end):max(x.start, y.start)].lower() if x is not None else ""
    others = sum(1 for c, ss in view.sentences_of.items() if c not in (pair.concept_a, pair.concept_b) and ss & both)
    title_a, title_b = float(any(m.start < title_end for m in ma)), float(any(m.start < title_end for m in mb))
    values = [
        float(len(both) > 0), len(both) / max(1, len(sa | sb)), np.log1p(min(distances)), min(sentence_gaps),
        np.log1p(len(ma)), np.log1p(len(mb)), title_a, title_b,
        min((m.start for m in ma), default=len(text)) / max(1, len(text)),
        min((m.start for m in mb), default=len(text)) / max(1, len(text)), len(both), np.log1p(others),
    ]

    # how central each concept is among the document's concepts of its type (the topic chemical and disease)
    def rank(cid: str, kind: str) -> tuple[float, float, float]:
        mine = view.counts.get(_type(kind), {})
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
    cache: dict[str, tuple[dict[str, list[Mention]], _View]] = {}
    rows = []
    for pair in pairs:
        document = documents[pair.pmid]
        if pair.pmid not in cache:
            grouped = _by_concept(document.mentions)
            cache[pair.pmid] = grouped, _view(document, grouped)
        grouped, view = cache[pair.pmid]
        rows.append(pair_features(document, pair, by_concept=grouped, view=view))
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


# --- scoring a stored document ------------------------------------------------------------------------

# Kinds never paired: an organism ("patients", "mice") is no slot of a relation a KB curates.
UNPAIRED_KINDS = frozenset({"species", "OrganismTaxon"})
# A document's pair as stored (``curation.store.PairRow``): both sides with kind and name, the probability that
# the document relates them (None: unscored, a co-mention), whether one sentence holds both, and the offsets of
# the sentence that relates them best.


def evidence_span(text: str, mentions_a: Sequence[Mention], mentions_b: Sequence[Mention]) -> tuple[int, int, bool]:
    """(start, end, same sentence) of the text that relates two concepts best: the sentence holding both with
    the most trigger words (the earliest on a tie); without one, the sentences from the closest pair of
    mentions' first to its second."""
    spans = _sentences(text)
    starts = [s for s, _ in spans]

    def sentence_of(offset: int) -> int:
        return max(0, bisect_right(starts, offset) - 1)

    both = sorted({sentence_of(m.start) for m in mentions_a} & {sentence_of(m.start) for m in mentions_b})
    if both:
        def triggers(i: int) -> int:
            sentence = text[spans[i][0]:spans[i][1]].lower()
            return sum(any(w in sentence for w in words) for words in TRIGGERS.values())

        best = max(both, key=lambda i: (triggers(i), -i))
        return spans[best][0], spans[best][1], True
    x, y = min(((x, y) for x in mentions_a for y in mentions_b), key=lambda p: abs(p[0].start - p[1].start))
    first, last = sorted((sentence_of(x.start), sentence_of(y.start)))
    return spans[first][0], spans[last][1], False


def score_document(document: Document, mentions: Sequence[Mention], scorer: RelationScorer | None,
                   names: Mapping[str, str] | None = None) -> list[PairRow]:
    """Every pair of distinct concepts co-mentioned in ``document`` (``mentions``: its stored annotations, any
    source; unlinked ones ignored), scored by ``scorer`` (None: unscored), each with its evidence sentence.

    ``names``: concept id → the name to show (the concept id itself when absent). Kinds in
    :data:`UNPAIRED_KINDS` still count as context in the features but are never a pair's side.
    """
    unique = list({(m.start, m.end, m.type, m.concept_id): m for m in mentions if concept_ids(m)}.values())
    if not unique:
        return []
    scoped = Document(document.pmid, document.title, document.abstract, mentions=tuple(unique))
    by_concept = _by_concept(unique)
    pairs = [p for p in candidate_pairs(scoped) if p.type_a not in UNPAIRED_KINDS and p.type_b not in UNPAIRED_KINDS]
    if not pairs:
        return []
    probabilities: Sequence[float | None]
    if scorer is not None:
        view = _view(scoped, by_concept)
        features = np.vstack([pair_features(scoped, p, by_concept=by_concept, view=view) for p in pairs])
        probabilities = scorer.probabilities(features).tolist()
    else:
        probabilities = [None] * len(pairs)
    names = names or {}
    text = document.text
    out = []
    for pair, probability in zip(pairs, probabilities, strict=True):
        start, end, same = evidence_span(text, by_concept[pair.concept_a], by_concept[pair.concept_b])
        out.append(PairRow(document.pmid, pair.concept_a, pair.type_a, names.get(pair.concept_a, pair.concept_a),
                              pair.concept_b, pair.type_b, names.get(pair.concept_b, pair.concept_b),
                              None if probability is None else round(float(probability), 6), same, start, end))
    return out


def annotated_pairs(document: Document, annotations: Sequence, scorer: RelationScorer | None) -> list[PairRow]:
    """:func:`score_document` over a document's stored annotations (objects with ``start``, ``end``, ``text``,
    ``concept_id``, ``canonical``, ``source`` and ``type`` or ``entity_type``): each concept named by its
    canonical name (a predicted annotation's over a gold one's)."""
    text = document.text
    mentions, names = [], {}
    for a in annotations:
        kind = getattr(a, "entity_type", None) or a.type
        mention = Mention(document.pmid, a.start, a.end, a.text, kind, a.concept_id, a.source)
        if 0 <= a.start < a.end <= len(text):
            mentions.append(mention)
        for cid in concept_ids(mention):
            if a.canonical and (cid not in names or a.source != "gold"):
                names[cid] = a.canonical
    return score_document(document, mentions, scorer, names)
