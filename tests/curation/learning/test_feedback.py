"""Decisions → training pairs: classes by grade, superseded ignored, conflicts, merging with KB pairs."""

from __future__ import annotations

import pytest

from curation.errors import CurationError
from curation.grades import Grade
from curation.learning.feedback import (
    NOT_RELEVANT_CLASS,
    PARTIAL_CLASS,
    FeedbackConfig,
    decision_pairs,
    merge_pairs,
)
from curation.learning.margins import margin_table
from curation.learning.training import TrainingPair
from curation.records import Decision, Document
from curation.resolution import ConflictRule, resolve_decisions
from curation.schemas import PO

DOCS = {
    "1": Document("1", "Vemurafenib in BRAF V600E melanoma", "BRAF V600E melanoma responds to vemurafenib."),
    "2": Document("2", "BRAF in melanoma", "BRAF mutations are common in melanoma."),
    "3": Document("3", "Sleep in cats", "Cats sleep most of the day."),
}
BRAF = (("Gene", "BRAF"), ("Variant", "V600E"))
QUERY = PO.render_query(dict(BRAF))


def text_match(value: str, kind: str, doc: Document) -> bool:
    return value.casefold() in doc.text.casefold()


def decision(i: int, pmid: str, grade: str, curator: str = "ann", answer: str = "", note: str = "",
             superseded_by: int | None = None, entities=BRAF, schema: str = "PO", adjudication: bool = False
             ) -> Decision:
    return Decision(i, curator, schema, PO.render_query(dict(entities)), entities, pmid, grade, answer, note,
                    f"2026-11-22 10:00:{i:02d}", superseded_by, adjudication=adjudication)


def pairs(decisions, config=FeedbackConfig()):
    return decision_pairs(PO, decisions, DOCS, text_match, margin_table(PO), config)


def test_each_grade_becomes_its_class():
    report = pairs([decision(1, "1", Grade.COMPLETE, answer="Vemurafenib"), decision(2, "2", Grade.PARTIAL),
                    decision(3, "3", Grade.NOT_RELEVANT)])
    by_pmid = {p.pmid: p for p in report.pairs}
    assert by_pmid["1"] == TrainingPair(QUERY, "1", True, 0.0, "pos-1", "decision")  # all three entities in the text
    assert by_pmid["2"] == TrainingPair(QUERY, "2", True, 0.6, PARTIAL_CLASS, "decision")
    assert by_pmid["3"] == TrainingPair(QUERY, "3", False, 1.0, NOT_RELEVANT_CLASS, "decision")
    assert report.by_grade == {Grade.COMPLETE: 1, Grade.PARTIAL: 1, Grade.NOT_RELEVANT: 1}


def test_complete_evidence_is_graded_by_what_the_abstract_mentions():
    # Document 2 mentions BRAF but neither V600E nor the answer: PO pattern "100" → class 5 (margin 1.0).
    report = pairs([decision(1, "2", Grade.COMPLETE, answer="Vemurafenib")])
    assert [(p.margin_class, p.margin, p.positive) for p in report.pairs] == [("pos-5", 1.0, True)]
    # No answer given: the curator vouched for the empty slot, so only the variant is missing → "101".
    report = pairs([decision(1, "2", Grade.COMPLETE)])
    assert [(p.margin_class, p.margin) for p in report.pairs] == [("pos-2", 0.2)]


def test_superseded_and_undone_decisions_are_ignored():
    report = pairs([decision(1, "1", Grade.NOT_RELEVANT, superseded_by=2), decision(2, "1", Grade.COMPLETE),
                    decision(3, "3", Grade.PARTIAL, superseded_by=3)])  # 3 was undone
    assert [(p.pmid, p.positive) for p in report.pairs] == [("1", True)]
    assert report.superseded == 2


def test_unadjudicated_conflicts_are_left_out_or_resolved_by_the_latest():
    conflict = [decision(1, "1", Grade.COMPLETE, curator="ann"), decision(2, "1", Grade.NOT_RELEVANT, curator="bob")]
    excluded = pairs(conflict)
    assert excluded.pairs == () and excluded.conflicts_excluded == 1
    latest = pairs(conflict, FeedbackConfig(conflicts="latest"))
    assert [(p.pmid, p.positive) for p in latest.pairs] == [("1", False)] and latest.conflicts_latest == 1
    agreeing = pairs([decision(1, "1", Grade.COMPLETE, curator="ann"), decision(2, "1", Grade.COMPLETE, curator="bob")])
    assert len(agreeing.pairs) == 1 and agreeing.conflicts_excluded == 0


def test_an_adjudication_decides_its_item():
    decisions = [
        decision(1, "1", Grade.NOT_RELEVANT, curator="ann"),
        decision(2, "1", Grade.PARTIAL, curator="bob"),
        decision(3, "1", Grade.NOT_RELEVANT, curator="cy", adjudication=True),
        decision(4, "1", Grade.COMPLETE, curator="dee"),  # after the adjudication: still the adjudication decides
    ]
    report = pairs(decisions)
    assert [(p.pmid, p.margin_class) for p in report.pairs] == [("1", NOT_RELEVANT_CLASS)]
    assert report.adjudicated == 1


def test_other_schemas_and_missing_documents_are_counted_not_used():
    report = pairs([decision(1, "1", Grade.COMPLETE, schema="PTM"), decision(2, "999", Grade.COMPLETE)])
    assert report.pairs == ()
    assert report.other_schema == 1 and report.missing_document == 1


def test_repeat_weighs_decisions():
    report = pairs([decision(1, "3", Grade.NOT_RELEVANT)], FeedbackConfig(repeat=3))
    assert len(report.pairs) == 3


def test_a_decision_overrides_kb_pairs_of_the_same_query_and_document():
    kb = [TrainingPair(QUERY, "1", True, 0.0, "pos-1", "kb"), TrainingPair(QUERY, "2", False, 0.8, "neg-4", "kb")]
    merged = merge_pairs(kb, pairs([decision(1, "1", Grade.NOT_RELEVANT)]).pairs)
    assert [(p.pmid, p.source, p.positive) for p in merged] == [("2", "kb", False), ("1", "decision", False)]


def test_resolve_keeps_decision_order():
    chosen, counts = resolve_decisions([decision(5, "3", Grade.PARTIAL), decision(2, "1", Grade.COMPLETE)],
                                       ConflictRule.EXCLUDE)
    assert [d.decision_id for d in chosen] == [2, 5] and counts == {}


@pytest.mark.parametrize("bad", [{"partial_margin": 2.5}, {"not_relevant_margin": -0.1}, {"repeat": 0},
                                 {"conflicts": "vote"}])
def test_bad_feedback_settings_are_refused(bad):
    with pytest.raises((CurationError, ValueError)):
        FeedbackConfig(**bad)
