"""Curators' decisions as EDEL training pairs: graded positives and hard negatives.

Each active decision on a (partial relation, document) item becomes one pair for the query the
curator typed:

- **Complete evidence** → a positive whose margin class comes from the text-match pattern g,
  as for KB positives (§4 of the EDEL paper). An entity the curator left empty counts as
  mentioned: the curator vouched that the abstract is complete evidence.
- **Partial evidence** → a positive of its own noisy class (``decision-partial``; margin
  :attr:`FeedbackConfig.partial_margin`).
- **Not relevant** → a negative of its own class (``decision-neg``; pushed beyond
  :attr:`FeedbackConfig.not_relevant_margin`): a hard negative, since the retriever ranked it
  high enough for a curator to read it.

An answer entity filled in also adds a KB record (``source = curator``, done by
``curation.store.decisions.record_decision``), so it feeds the KB-derived positives and the KB-matching negatives
of other records without anything here.

Which decisions count is the one rule every learner reads decisions by (:mod:`curation.resolution`,
:func:`~curation.resolution.resolve_decisions`): superseded and withdrawn decisions are ignored; an
adjudication decides its item; curators who disagree without an adjudication leave it out
(:class:`~curation.resolution.ConflictRule` ``exclude``, the default) or give the latest (``latest``).

A decision pair overrides a KB-derived pair for the same (query, document): the curator has
looked at that abstract for that query (see :func:`merge_pairs`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from curation.errors import CurationError
from curation.grades import Grade
from curation.learning.margins import MarginTable
from curation.learning.training import TrainingPair
from curation.records import Decision, Document
from curation.resolution import ConflictRule, resolve_decisions
from curation.schemas import RelationSchema

TextMatch = Callable[[str, str, Document], bool]
SOURCE = "decision"
PARTIAL_CLASS = "decision-partial"
NOT_RELEVANT_CLASS = "decision-neg"


@dataclass(frozen=True)
class FeedbackConfig:
    """How decisions become pairs.

    Attributes:
        partial_margin: cosine-distance margin of partial-evidence positives (a noisy class,
            between the paper's class-2 (0.2) and class-5 (1.0) positives).
        not_relevant_margin: margin beyond which "not relevant" documents are pushed (as the
            BM25 hard negatives).
        conflicts: what to do with items curators disagree on and no one adjudicated.
        repeat: how many times each decision pair is put in the training set (>1 weighs the
            curators' judgements above the KB-derived pairs).
    """

    partial_margin: float = 0.6
    not_relevant_margin: float = 1.0
    conflicts: ConflictRule = ConflictRule.EXCLUDE
    repeat: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "conflicts", ConflictRule(self.conflicts))
        for name in ("partial_margin", "not_relevant_margin"):
            value = getattr(self, name)
            if not 0.0 <= value <= 2.0:
                raise CurationError(f"feedback {name} must be in [0, 2], got {value}")
        if self.repeat < 1:
            raise CurationError(f"feedback repeat must be at least 1, got {self.repeat}")


@dataclass(frozen=True)
class FeedbackReport:
    """What happened to the decisions: used, ignored, and why."""

    pairs: tuple[TrainingPair, ...]
    active: int = 0
    superseded: int = 0
    other_schema: int = 0
    missing_document: int = 0
    conflicts_excluded: int = 0
    conflicts_latest: int = 0
    adjudicated: int = 0
    by_grade: dict[str, int] = field(default_factory=dict)
    held_out: int = 0  # active decisions on dev / test / held-out genes: never trained on (curation.learning.holdout)

    def summary(self) -> dict[str, object]:
        return {
            "pairs": len(self.pairs),
            "active_decisions": self.active,
            "ignored_superseded": self.superseded,
            "ignored_other_schema": self.other_schema,
            "ignored_missing_document": self.missing_document,
            "conflicts_excluded": self.conflicts_excluded,
            "conflicts_resolved_by_latest": self.conflicts_latest,
            "adjudicated_items": self.adjudicated,
            "by_grade": dict(self.by_grade),
            "ignored_held_out": self.held_out,
        }


def decision_pairs(
    schema: RelationSchema,
    decisions: Iterable[Decision],
    documents: Mapping[str, Document],
    text_match: TextMatch,
    table: MarginTable,
    config: FeedbackConfig = FeedbackConfig(),
) -> FeedbackReport:
    """Training pairs from the decisions on ``schema``'s relations (see the module docstring), one per item
    :func:`~curation.resolution.resolve_decisions` keeps under ``config.conflicts``."""
    decisions = list(decisions)
    own = [d for d in decisions if d.schema == schema.name]
    chosen, counts = resolve_decisions(own, config.conflicts)
    pairs: list[TrainingPair] = []
    missing = 0
    grades = Counter()
    for d in chosen:
        document = documents.get(d.pmid)
        if document is None:
            missing += 1
            continue
        values = dict(d.query_entities)
        query = schema.render_query(values)
        if d.grade == Grade.COMPLETE:
            flags = []
            for t in schema.entity_types:
                value = d.answer if t == schema.answer else values.get(t, "")
                flags.append(not value or text_match(value, schema.kind(t), document))
            margin_class = table.positive_class(tuple(flags))
            pair = TrainingPair(query, d.pmid, True, margin_class.margin, margin_class.name, SOURCE)
        elif d.grade == Grade.PARTIAL:
            pair = TrainingPair(query, d.pmid, True, config.partial_margin, PARTIAL_CLASS, SOURCE)
        elif d.grade == Grade.NOT_RELEVANT:
            pair = TrainingPair(query, d.pmid, False, config.not_relevant_margin, NOT_RELEVANT_CLASS, SOURCE)
        else:
            continue
        grades[d.grade] += 1
        pairs.extend([pair] * config.repeat)
    return FeedbackReport(
        pairs=tuple(pairs),
        active=sum(1 for d in own if d.superseded_by is None),
        superseded=counts.get("superseded", 0),
        other_schema=len(decisions) - len(own),
        missing_document=missing,
        conflicts_excluded=counts.get("conflicts_excluded", 0),
        conflicts_latest=counts.get("conflicts_latest", 0),
        adjudicated=counts.get("adjudicated", 0),
        by_grade=dict(grades),
    )


def merge_pairs(kb_pairs: Sequence[TrainingPair], decision_pairs: Sequence[TrainingPair]) -> list[TrainingPair]:
    """KB-derived pairs plus decision pairs; a decision overrides KB pairs of the same (query, document)."""
    decided = {(p.query, p.pmid) for p in decision_pairs}
    kept = [p for p in kb_pairs if (p.query, p.pmid) not in decided]
    return kept + list(decision_pairs)
