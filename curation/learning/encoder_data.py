"""The encoder's training set for a build request: the KB's EDEL pairs merged with the pairs of curators' decisions.

A decision overrides KB-derived pairs of the same (query, document), and its margin class joins the KB's
classes. The KB's pairs need BM25 (its hard negatives) and are slow to sample; a decision's pairs need only
the matcher. So the build chain (:mod:`curation.learning.chain`) keeps the KB's pairs between jobs and adds
the decisions with :func:`with_decisions`, the same call :func:`training_set_for` makes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from curation.entities.concepts import ConceptIndex
from curation.entities.matching import Matcher
from curation.learning.build import BuildRequest
from curation.learning.feedback import FeedbackReport, decision_pairs, merge_pairs
from curation.learning.margins import margin_table
from curation.learning.sampling import TrainingSet, build_training_set
from curation.records import Decision, Document, KBRecord
from index.lexical import LexicalIndex


def kb_training_set(
    request: BuildRequest,
    records: Sequence[KBRecord],
    documents: Mapping[str, Document],
    matcher: Matcher | ConceptIndex,
    lexical: LexicalIndex,
) -> TrainingSet:
    """The EDEL pairs of the KB ``records`` (their hard negatives from ``lexical``'s BM25)."""
    return build_training_set(request.schema, records, documents, _text_match(matcher), margin_table(request.schema),
                              request.sampling, bm25=lexical.search)


def with_decisions(
    kb: TrainingSet,
    request: BuildRequest,
    decisions: Sequence[Decision],
    documents: Mapping[str, Document],
    matcher: Matcher | ConceptIndex,
) -> tuple[TrainingSet, FeedbackReport]:
    """``kb`` with the pairs of the curators' ``decisions`` merged in; returns the set and what became of the
    decisions.

    A decision overrides ``kb``'s pairs of the same (query, document); the margins of the decisions' classes
    join ``kb``'s.
    """
    feedback = decision_pairs(request.schema, decisions, documents, _text_match(matcher),
                              margin_table(request.schema), request.feedback)
    margins = {**kb.margins, **{p.margin_class: p.margin for p in feedback.pairs}}
    return TrainingSet(tuple(merge_pairs(kb.pairs, feedback.pairs)), margins), feedback


def training_set_for(
    request: BuildRequest,
    records: Sequence[KBRecord],
    documents: Mapping[str, Document],
    matcher: Matcher | ConceptIndex,
    lexical: LexicalIndex,
    decisions: Sequence[Decision] = (),
) -> tuple[TrainingSet, FeedbackReport]:
    """The EDEL pairs of the KB ``records`` merged with the pairs of the curators' ``decisions``
    (:func:`kb_training_set`, then :func:`with_decisions`)."""
    kb = kb_training_set(request, records, documents, matcher, lexical)
    return with_decisions(kb, request, decisions, documents, matcher)


def _text_match(matcher: Matcher | ConceptIndex) -> Callable[[str, str, Document], bool]:
    """g(e, d): whether document ``d`` writes entity ``e`` (a value of a kind)."""
    return matcher.matched
