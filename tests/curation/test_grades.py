"""The grade vocabulary: the strings the store keeps and the labels the pages show never change."""

from __future__ import annotations

from curation.grades import GRADE_LABELS, GRADES, ORDINAL_GRADES, RELEVANT_GRADES, Grade


def test_grades_are_the_stored_strings_best_first():
    assert [grade.value for grade in GRADES] == ["complete", "partial", "not_relevant"]
    assert set(GRADES) == set(Grade)
    assert Grade("not_relevant") is Grade.NOT_RELEVANT and Grade.PARTIAL == "partial"
    assert f"{Grade.COMPLETE}" == str(Grade.COMPLETE) == "complete"


def test_ordinal_codes_and_relevance():
    assert [ORDINAL_GRADES.index(g) for g in ("not_relevant", "partial", "complete")] == [0, 1, 2]
    assert set(RELEVANT_GRADES) == {Grade.COMPLETE, Grade.PARTIAL}


def test_labels_are_what_the_pages_show():
    assert [GRADE_LABELS[g] for g in GRADES] == ["Complete evidence", "Partial evidence", "Not relevant"]
    assert GRADE_LABELS["partial"] == "Partial evidence"  # a grade read back from the store finds its label
