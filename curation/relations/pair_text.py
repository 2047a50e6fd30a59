"""What the sentences holding both concepts of a pair say: a bag-of-words model of "this sentence relates them".

The relation scorer's counts and trigger lists (:mod:`curation.relations.features`) see whether and how close two
concepts are written; this model reads the words. For a pair, :func:`pair_text` writes every sentence that
mentions both concepts with one side masked ``@a`` and the other ``@b`` (a chemical is always ``@b``, so "@a
resistance to @b" reads the same in every corpus), and :class:`PairText` gives the probability that such
sentences relate the two: a logistic regression over their words and word pairs, each also prefixed by the pair's
entity types, kept as JSON (token → weight, no pickle).

It learns (:func:`fit_pair_text`) from the Train corpora's candidate pairs that one sentence holds (related or
not) and, as weak supervision for the treatment-response relation no corpus annotates, from CIViC's supporting
Predictive statements (:func:`curation.relations.direction.civic_examples`: the gene and variant masked ``@a``, the
therapy ``@b``, every one a related pair), the statements of Dev/Test PMIDs held out by the caller. The scorer takes
its probability as two features, computed out of fold on its own training pairs (:func:`out_of_fold`, which also
fits the served model), so the scorer weighs the words by what they are worth on pairs the model did not see.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from curation.files import write_atomic
from curation.records import Document, Mention
from curation.relations.direction import mask, tokens
from curation.relations.pairs import Pair, RelationError, sentence_spans

TEXT_FILE = "text.json"
FORMAT_VERSION = 1
FOLDS = 5  # out-of-fold folds of the scorer's training pairs (by a hash of the PMID: a document in one fold)
C = 0.3  # the logistic regression's inverse regularisation (chosen on BioRED and BC5CDR Dev, bench/suggest.py)
CIVIC_TYPES = "chemical-variant"  # the types a CIViC statement pairs: a therapy and a gene's variant
_KIND = {"ChemicalEntity": "chemical", "Chemical": "chemical", "chemical": "chemical",
         "GeneOrGeneProduct": "gene", "Gene": "gene", "gene": "gene", "SequenceVariant": "variant",
         "Variant": "variant", "variant": "variant", "DiseaseOrPhenotypicFeature": "disease", "Disease": "disease",
         "disease": "disease"}


def pair_types(type_a: str, type_b: str) -> str:
    """The pair's entity types as one token (``chemical-gene``, ``disease-variant``, ...), order-free."""
    return "-".join(sorted(_KIND.get(t, "other") for t in (type_a, type_b)))


def pair_text(text: str, pair: Pair, by_concept: Mapping[str, Sequence[Mention]]) -> str:
    """The sentences of ``text`` that mention both sides of ``pair``, masked (the chemical, or else the side whose
    type sorts last, as ``@b``), joined by a space; "" when no sentence holds both."""
    a = [(m.start, m.end) for m in by_concept.get(pair.concept_a, ())]
    b = [(m.start, m.end) for m in by_concept.get(pair.concept_b, ())]
    kind_a, kind_b = _KIND.get(pair.type_a, "other"), _KIND.get(pair.type_b, "other")
    if kind_a == "chemical" and kind_b != "chemical" or (kind_b != "chemical" and kind_a > kind_b):
        a, b = b, a
    parts = []
    for start, end in sentence_spans(text):
        here_a = [(s - start, e - start) for s, e in a if start <= s < end]
        here_b = [(s - start, e - start) for s, e in b if start <= s < end]
        if here_a and here_b:
            parts.append(mask(text[start:end], here_a, here_b))
    return " ".join(parts)


def analyse(item: tuple[str, str]) -> list[str]:
    """The tokens of (masked text, pair types): the words and word pairs, and each again prefixed by the types."""
    text, types = item
    words = tokens(text) if text else ["<none>"]
    return words + [f"{types}|{w}" for w in words]


@dataclass(frozen=True)
class PairText:
    """The logistic regression over :func:`analyse`'s tokens, and what it learned from."""

    weights: Mapping[str, float]
    intercept: float
    figures: Mapping[str, object]

    def logit(self, text: str, types: str) -> float:
        return self.intercept + sum(self.weights.get(t, 0.0) for t in set(analyse((text, types))))

    def probability(self, text: str, types: str) -> float:
        """P(the sentences relate the pair) (meaningful only when ``text`` is not empty)."""
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, self.logit(text, types)))))

    def save(self, path: Path) -> Path:
        payload = {"format_version": FORMAT_VERSION, "figures": dict(self.figures), "intercept": self.intercept,
                   "weights": {t: round(w, 5) for t, w in sorted(self.weights.items()) if abs(w) >= 1e-5}}
        return write_atomic(path, json.dumps(payload))

    @classmethod
    def load(cls, path: Path) -> PairText:
        """Raises: RelationError naming the file when it cannot be read or is of another format."""
        try:
            payload = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise RelationError(f"pair text model {path} cannot be read ({exc})") from None
        if payload.get("format_version") != FORMAT_VERSION:
            raise RelationError(f"pair text model {path} is of another format; train the relation scorer again")
        return cls(dict(payload["weights"]), float(payload["intercept"]), payload.get("figures", {}))


def text_items(documents: Mapping[str, Document], pairs: Sequence[Pair],
               by_concept: Mapping[str, Mapping[str, Sequence[Mention]]]) -> list[tuple[str, str]]:
    """(masked sentences, pair types) of each pair (``by_concept``: PMID → its mentions grouped by concept)."""
    return [(pair_text(documents[p.pmid].text, p, by_concept[p.pmid]), pair_types(p.type_a, p.type_b))
            for p in pairs]


def _matrix(items: Sequence[tuple[str, str]]):
    """The items' binary token matrix (every token, read once) and the tokens of its columns."""
    from sklearn.feature_extraction.text import CountVectorizer

    vectoriser = CountVectorizer(analyzer=analyse, binary=True)
    return vectoriser.fit_transform(items).tocsr(), vectoriser.get_feature_names_out()


def _fit_rows(x, names, rows: np.ndarray, labels: np.ndarray, figures: dict) -> PairText:
    """The model fitted on ``rows`` of ``x``, on the tokens two of those rows hold or more."""
    from sklearn.linear_model import LogisticRegression

    y = labels[rows]
    if len(set(y.tolist())) < 2:
        raise RelationError("the pair text model needs related and unrelated pairs that one sentence holds")
    sub = x[rows]
    columns = np.where(np.asarray(sub.sum(axis=0)).ravel() >= 2)[0]
    model = LogisticRegression(C=C, class_weight="balanced", max_iter=3000, solver="liblinear").fit(
        sub[:, columns], y)
    weights = {str(names[j]): float(w) for j, w in zip(columns, model.coef_[0], strict=True)}
    return PairText(weights, float(model.intercept_[0]), {**figures, "tokens": len(weights)})


def _design(items: Sequence[tuple[str, str]], labels: Sequence[int], civic: Sequence[str]):
    # the rows one sentence holds, then CIViC's statements (each related): the matrix, its tokens, the labels, and
    # which item each of the first rows is
    kept = [i for i, item in enumerate(items) if item[0]]
    x, names = _matrix([items[i] for i in kept] + [(text, CIVIC_TYPES) for text in civic])
    y = np.array([labels[i] for i in kept] + [1] * len(civic))
    figures = {"pairs": len(kept), "related": int(y[:len(kept)].sum()), "civic_statements": len(civic), "c": C}
    return x, names, y, np.array(kept, dtype=int), figures


def fit_pair_text(items: Sequence[tuple[str, str]], labels: Sequence[int], civic: Iterable[str] = ()) -> PairText:
    """The model fitted on the items one sentence holds (``items`` with text) and CIViC's masked statements
    (``civic``, each a related chemical–variant pair).

    Raises:
        RelationError: the items lack related or unrelated pairs.
    """
    x, names, y, _, figures = _design(items, labels, list(civic))
    return _fit_rows(x, names, np.arange(len(y)), y, figures)


def out_of_fold(items: Sequence[tuple[str, str]], labels: Sequence[int], pmids: Sequence[str],
                civic: Sequence[str] = ()) -> tuple[PairText, np.ndarray]:
    """The model fitted on every item (as :func:`fit_pair_text`), and (n,) each item's probability from a model
    fitted without its fold (:data:`FOLDS` folds by PMID; every fold's model also learns from ``civic``, and keeps
    the tokens two of its own rows hold); 0 for an item no sentence holds. The items are read into tokens once.

    Raises:
        RelationError: a fold's rows lack related or unrelated pairs.
    """
    x, names, y, kept, figures = _design(items, labels, list(civic))
    fold = np.array([zlib.crc32(pmids[i].encode()) % FOLDS for i in kept] + [-1] * (len(y) - len(kept)))
    out = np.zeros(len(items))
    for k in range(FOLDS):
        model = _fit_rows(x, names, np.where(fold != k)[0], y, figures)
        for row in np.where(fold == k)[0]:
            out[kept[row]] = model.probability(*items[kept[row]])
    return _fit_rows(x, names, np.arange(len(y)), y, figures), out


def text_features(probability: float, has_text: bool) -> tuple[float, float]:
    """The scorer's two features of a pair: the probability and its log-odds, both 0 when no sentence holds it."""
    if not has_text:
        return 0.0, 0.0
    p = min(max(probability, 1e-6), 1 - 1e-6)
    return p, math.log(p / (1 - p))
