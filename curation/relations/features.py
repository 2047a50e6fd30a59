"""Pair features: what a document says about two concepts it mentions, as one vector (:data:`FEATURES` order).

Sentence co-occurrence, distances, mention counts, title mentions, how central each concept is among the
document's concepts of its type, trigger words between and around the mentions, the pair's entity types, and what
the words of the sentences holding both say (:mod:`curation.relations.pair_text`; 0 without a text model).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from curation.records import Document, Mention
from curation.relations.pair_text import PairText, pair_text, pair_types, text_features
from curation.relations.pairs import Pair, group_by_concept, sentence_spans

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

TYPE_NAMES = ("Gene", "Chemical", "Disease", "Variant", "Species", "CellLine", "Other")


# PubTator's type names (the corpora's) and the store's entity kinds, to the scorer's types
_TYPE_OF = {"GeneOrGeneProduct": "Gene", "ChemicalEntity": "Chemical", "DiseaseOrPhenotypicFeature": "Disease",
            "SequenceVariant": "Variant", "OrganismTaxon": "Species", "gene": "Gene", "chemical": "Chemical",
            "disease": "Disease", "variant": "Variant", "species": "Species", "cellline": "CellLine"}


def _type(name: str) -> str:
    # a corpus's or the store's type name → one of TYPE_NAMES
    name = _TYPE_OF.get(name, name)
    return name if name in TYPE_NAMES else "Other"


TYPE_PAIRS = tuple(f"{a}-{b}" for i, a in enumerate(TYPE_NAMES) for b in TYPE_NAMES[i:])
FEATURES = (
    "same_sentence", "same_sentence_share", "min_chars", "min_sentences", "count_a", "count_b", "title_a",
    "title_b", "first_a", "first_b", "sentences_both", "cooccurring_concepts", "top_of_type_a", "top_of_type_b",
    "rank_of_type_a", "rank_of_type_b", "same_type_concepts_a", "same_type_concepts_b", "both_in_title",
    *(f"trigger_{g}" for g in TRIGGERS), *(f"near_{g}" for g in TRIGGERS), *(f"types_{t}" for t in TYPE_PAIRS),
    "text_related", "text_log_odds",
)


@dataclass(frozen=True)
class DocumentView:
    """What every pair of one document shares: its text, sentences, each concept's sentences and mention counts."""

    text: str
    spans: tuple[tuple[int, int], ...]
    sentences_of: dict[str, frozenset[int]]
    counts: dict[str, dict[str, int]]  # scorer type → concept → mentions


def document_view(document: Document, by_concept: Mapping[str, list[Mention]]) -> DocumentView:
    """The view every pair of ``document`` shares (``by_concept``: its mentions grouped by concept)."""
    text = document.text
    spans = sentence_spans(text)
    starts = [s for s, _ in spans]
    sentences_of = {c: frozenset(bisect_right(starts, m.start) - 1 for m in ms) for c, ms in by_concept.items()}
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    for cid, ms in by_concept.items():
        counts[_type(ms[0].type)][cid] = len(ms)
    return DocumentView(text, spans, sentences_of, counts)


def pair_features(document: Document, pair: Pair, mentions: Sequence[Mention] | None = None,
                  by_concept: Mapping[str, list[Mention]] | None = None,
                  view: DocumentView | None = None, text_model: PairText | None = None,
                  text_probability: float | None = None) -> np.ndarray:
    """The feature vector of ``pair`` in ``document`` (``FEATURES`` order; float32).

    ``by_concept`` and ``view``: the document's mentions grouped by concept and its shared view, when the
    caller scores many pairs of one document (computed here otherwise). ``text_model``: the scorer's text model, read
    on the sentences holding both; ``text_probability``: its probability given instead (the out-of-fold one a
    scorer trains on); neither: the text features are 0.
    """
    by_concept = by_concept or group_by_concept(document.mentions if mentions is None else mentions)
    view = view or document_view(document, by_concept)
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
    if text_probability is None and text_model is not None and both:
        text_probability = text_model.probability(pair_text(text, pair, by_concept),
                                                  pair_types(pair.type_a, pair.type_b))
    values += text_features(text_probability or 0.0, bool(both) and text_probability is not None)
    return np.asarray(values, dtype=np.float32)


def feature_matrix(documents: Mapping[str, Document], pairs: Sequence[Pair], text_model: PairText | None = None,
                   text_probabilities: Sequence[float] | None = None) -> np.ndarray:
    """(len(pairs), len(FEATURES)) features, each document's mentions grouped once (``text_model`` and
    ``text_probabilities`` as in :func:`pair_features`, the latter one per pair)."""
    cache: dict[str, tuple[dict[str, list[Mention]], DocumentView]] = {}
    rows = []
    for pair in pairs:
        document = documents[pair.pmid]
        if pair.pmid not in cache:
            grouped = group_by_concept(document.mentions)
            cache[pair.pmid] = grouped, document_view(document, grouped)
        grouped, view = cache[pair.pmid]
        given = None if text_probabilities is None else float(text_probabilities[len(rows)])
        rows.append(pair_features(document, pair, by_concept=grouped, view=view, text_model=text_model,
                                  text_probability=given))
    return np.vstack(rows) if rows else np.zeros((0, len(FEATURES)), dtype=np.float32)
