"""The annotation queue: (relation, document) pairs for a second opinion.

An annotator (a curator name) is given, in this order:

1. **Pairs other curators decided** that the annotator has not graded, fewest grades first
   (a pair with one grade gains the overlap agreement needs), adjudicated pairs left out.
   The queue never says what the others answered: the second opinion stays blind.
2. **Pairs the model is least sure about** (:func:`curation.review.least_sure.least_sure`): for the
   relations already decided and those in the worklist, retrieved documents near the boundary between
   what curators graded relevant and not relevant, or ranked far apart by BM25 and the dense model.

Grades and adjudications are recorded by ``curation.workflows.annotation_queue`` (the role checked first);
:func:`curation.review.agreement.open_disagreements` lists the disagreements still open.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import duckdb

from curation.entities.matching import Matcher
from curation.records import Decision, ItemKey, fold_relation, is_adjudication, item_key
from curation.review.agreement import current_labels
from curation.review.least_sure import UncertainHit
from curation.schemas import RelationSchema
from curation.store.corpus import get_documents
from curation.store.worklist import list_worklist


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


def mentions_every_entity(con: duckdb.DuckDBPyConnection, matcher: Matcher, schema: RelationSchema):
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
