"""The Annotate page's facade: the annotator's next pair with agreement and disagreements, grades, adjudication.

:func:`annotation_view` is the page's one call: the queue (:mod:`curation.review.queue`), uncertainty
sampling (:mod:`curation.review.least_sure`) and agreement (:mod:`curation.review.agreement`) put into one
view. Grades are recorded with ``curation.store.decisions.record_decision`` like any decision, after the role
is checked. An adjudicator records the final grade of a disagreement under their own name, marked as an
adjudication in its typed field (:func:`adjudicate`, the only writer of that field, behind the adjudicator role).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import duckdb

from curation import access
from curation.access import Action, Who
from curation.entities.matching import Matcher
from curation.errors import CurationError
from curation.grades import Grade
from curation.records import Decision, ItemKey, MarkedText
from curation.retrieval.passages import shift
from curation.retrieval.result_rows import role_spans
from curation.review.agreement import (
    Alpha,
    AnnotatorProgress,
    Disagreement,
    KappaWeights,
    PairKappa,
    disagreements,
    krippendorff_alpha,
    label_matrix,
    pairwise_kappa,
    progress,
)
from curation.review.least_sure import ORDERS as ORDERS  # the queue orders the page offers
from curation.review.least_sure import least_sure, ranking_mode
from curation.review.queue import QueueItem, build_queue, candidate_relations, mentions_every_entity
from curation.schemas import RelationSchema
from curation.store.corpus import get_documents
from curation.store.decisions import list_decisions, record_decision


@dataclass(frozen=True)
class AnnotationRow:
    """The next pair, ready to show: title and abstract with their role spans (the page escapes and marks them)."""

    entry: QueueItem
    title: MarkedText
    abstract: MarkedText


@dataclass(frozen=True)
class AnnotationView:
    """Everything the Annotate page shows for one annotator and schema."""

    next: AnnotationRow | None
    remaining: int  # queue items left for this annotator (skipped ones excluded)
    pool: int  # items in the annotation pool (decided ∪ least sure)
    progress: tuple[AnnotatorProgress, ...]
    kappas: tuple[PairKappa, ...]
    alpha: Alpha
    disagreements: tuple[Disagreement, ...]  # still open
    mode: str
    notes: tuple[str, ...] = ()


def record_label(
    con: duckdb.DuckDBPyConnection, annotator: Who, schema: RelationSchema, values: Mapping[str, str], pmid: str,
    grade: Grade,
) -> Decision:
    """Record an annotator's grade of one (relation, abstract) pair from the queue."""
    identity = access.require(con, annotator, Action.LABEL)
    return record_decision(con, identity.name, schema, values, pmid, grade, identity_source=identity.source)


def adjudicate(
    con: duckdb.DuckDBPyConnection,
    adjudicator: Who,
    schema: RelationSchema,
    disagreement: Disagreement,
    grade: Grade,
    answer: str = "",
) -> Decision:
    """Record the final grade of a disagreement under the adjudicator's name, typed as an adjudication.

    The one way to make an adjudication: the role is checked here, and a note typed on any page is only text.

    Raises:
        CurationError: as ``curation.store.decisions.record_decision`` (no name, unknown grade, ...), or the
            disagreement belongs to another schema.
    """
    identity = access.require(con, adjudicator, Action.ADJUDICATE)
    if disagreement.item.schema != schema.name:
        raise CurationError(
            f"this disagreement is in schema '{disagreement.item.schema}', not '{schema.name}'; switch schema"
        )
    values = dict(disagreement.values)
    return record_decision(
        con, identity.name, schema, values, disagreement.item.pmid, grade, answer=answer,
        identity_source=identity.source, adjudication=True,
    )


def annotation_view(
    con: duckdb.DuckDBPyConnection,
    retriever,
    matcher: Matcher,
    schema: RelationSchema,
    annotator: str,
    skipped: Iterable[ItemKey] = (),
    depth: int = 20,
    max_relations: int = 30,
    uncertain_limit: int = 20,
    weights: KappaWeights | str = KappaWeights.LINEAR,
    order: str = "uncertainty",
) -> AnnotationView:
    """The Annotate page's one call: the annotator's next pair, progress, agreement, open disagreements.

    ``order``: the model's pairs least sure first ("uncertainty") or in a random order ("random")."""
    decisions = list_decisions(con, schema=schema.name, include_superseded=True)
    active = [d for d in decisions if d.superseded_by is None]
    mode = ranking_mode(retriever)
    relations = candidate_relations(con, schema, active, limit=max_relations)
    uncertain, notes = least_sure(retriever, schema, relations, decisions, depth, uncertain_limit, mode,
                                  order=order, seed=annotator, keep=mentions_every_entity(con, matcher, schema))
    queue = build_queue(annotator, decisions, uncertain, skipped)
    matrix = label_matrix(decisions, annotators=[annotator])
    pool = set(matrix.items) | {u.item for u in uncertain}
    return AnnotationView(
        next=_first_showable(con, matcher, schema, queue),
        remaining=len(queue),
        pool=len(pool),
        progress=tuple(progress(matrix, pool)),
        kappas=tuple(pairwise_kappa(matrix, weights)),
        alpha=krippendorff_alpha(matrix),
        disagreements=tuple(d for d in disagreements(decisions) if d.is_open),
        mode=str(mode),
        notes=tuple(notes),
    )


def _first_showable(
    con: duckdb.DuckDBPyConnection, matcher: Matcher, schema: RelationSchema, queue: Sequence[QueueItem]
) -> AnnotationRow | None:
    # An index may name a document the store no longer has; such pairs cannot be graded.
    for entry in queue:
        documents = get_documents(con, [entry.pmid])
        if not documents:
            continue
        doc = documents[0]
        spans = role_spans(matcher, schema, dict(entry.values), doc)
        offset = len(doc.title) + 1 if doc.title else 0
        return AnnotationRow(entry, MarkedText(doc.title, tuple(shift(spans, 0, len(doc.title)))),
                             MarkedText(doc.abstract, tuple(shift(spans, offset, len(doc.abstract)))))
    return None
