"""The annotation queue: (relation, document) pairs for a second opinion, and adjudication.

An annotator (a curator name) is given, in this order:

1. **Pairs other curators decided** that the annotator has not graded, fewest grades first
   (a pair with one grade gains the overlap agreement needs), adjudicated pairs left out.
   The queue never says what the others answered: the second opinion stays blind.
2. **Pairs the model is least sure about** (:func:`curation.workflows.least_sure.least_sure`): for the
   relations already decided and those in the worklist, retrieved documents near the boundary between
   what curators graded relevant and not relevant, or ranked far apart by BM25 and the dense model.

Grades are recorded with ``curation.store.decisions.record_decision`` like any decision. An adjudicator records
the final grade of a disagreement under their own name, marked as an adjudication in its typed field
(:func:`adjudicate`, the only writer of that field, behind the adjudicator role);
``curation.workflows.agreement.open_disagreements`` lists those still open.
:func:`annotation_view` is the Annotate page's one call.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import duckdb

from curation import access
from curation.access import Action, Who
from curation.entities.matching import Matcher
from curation.errors import CurationError
from curation.grades import Grade
from curation.records import Decision, ItemKey, MarkedText, fold_relation, is_adjudication, item_key
from curation.retrieval.passages import shift
from curation.schemas import RelationSchema
from curation.store.corpus import get_documents
from curation.store.decisions import list_decisions, record_decision
from curation.store.worklist import list_worklist
from curation.workflows.agreement import (
    Alpha,
    AnnotatorProgress,
    Disagreement,
    KappaWeights,
    PairKappa,
    current_labels,
    disagreements,
    krippendorff_alpha,
    label_matrix,
    pairwise_kappa,
    progress,
)
from curation.workflows.least_sure import UncertainHit, least_sure, ranking_mode
from curation.workflows.results import role_spans


class QueueSource(StrEnum):
    DECIDED = "decided by others"
    LEAST_SURE = "least sure"


@dataclass(frozen=True)
class QueueItem:
    """One pair to grade: ``values`` are the relation's query entities to record the grade with."""

    item: ItemKey
    query: str
    values: tuple[tuple[str, str], ...]
    source: QueueSource
    reason: str
    uncertainty: float | None = None

    @property
    def pmid(self) -> str:
        return self.item.pmid


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


def candidate_relations(
    con: duckdb.DuckDBPyConnection, schema: RelationSchema, decisions: Iterable[Decision], limit: int = 30
) -> list[tuple[tuple[str, str], ...]]:
    """Relations to look for unsure documents in: decided ones first, then the worklist's, deduplicated."""
    seen: dict[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]] = {}
    decided = [d.query_entities for d in decisions if d.schema == schema.name and not is_adjudication(d)]
    listed = [tuple(sorted(i["values"].items())) for i in list_worklist(con, schema)]
    for values in [*decided, *listed]:
        folded = fold_relation(values)
        if folded and folded not in seen:
            seen[folded] = values
    return list(seen.values())[:limit]


def build_queue(
    annotator: str,
    decisions: Iterable[Decision],
    uncertain: Sequence[UncertainHit] = (),
    skipped: Iterable[ItemKey] = (),
) -> list[QueueItem]:
    """The annotator's queue: pairs others graded (fewest grades first), then least-sure pairs.

    Leaves out pairs the annotator has a decision on (a grade or an adjudication), adjudicated
    pairs, and ``skipped`` ones.
    """
    annotator = " ".join(annotator.split())
    decisions = list(decisions)
    mine = {item_key(d) for d in decisions if d.curator == annotator and d.superseded_by is None}
    adjudicated = {item_key(d) for d in decisions if is_adjudication(d) and d.superseded_by is None}
    excluded = mine | adjudicated | set(skipped)
    by_item: dict[ItemKey, list[Decision]] = {}
    for label in current_labels(decisions):
        if label.item not in excluded:
            by_item.setdefault(label.item, []).append(label.decision)
    queue = []
    for item, graded in sorted(by_item.items(), key=lambda kv: (len(kv[1]), min(d.decision_id for d in kv[1]))):
        first = min(graded, key=lambda d: d.decision_id)
        others = "1 other curator" if len(graded) == 1 else f"{len(graded)} other curators"
        queue.append(QueueItem(item, first.query, first.query_entities, QueueSource.DECIDED, f"graded by {others}"))
    for u in uncertain:
        if u.item not in excluded and u.item not in by_item:
            queue.append(QueueItem(u.item, u.query, u.values, QueueSource.LEAST_SURE, u.reason, u.uncertainty))
    return queue


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
                                  order=order, seed=annotator, keep=_mentions_every_entity(con, matcher, schema))
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


def _mentions_every_entity(con: duckdb.DuckDBPyConnection, matcher: Matcher, schema: RelationSchema):
    """``keep(values, pmid)``: whether the abstract mentions every typed entity of the relation (the matcher's text
    check), so the queue never offers an abstract whose only match is a common word ("PCR amplification")."""
    seen: dict[str, object] = {}

    def keep(values, pmid: str) -> bool:
        if pmid not in seen:
            found = get_documents(con, [pmid])
            seen[pmid] = found[0] if found else None
        document = seen[pmid]
        return document is not None and all(matcher.matched(value, schema.kind(entity_type), document)
                                            for entity_type, value in values.items() if value.strip())

    return keep


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



def _rank(rank: int, n: int) -> str:
    return str(rank) if rank <= n else "none"
