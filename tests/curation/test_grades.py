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


def test_a_grade_travels_as_a_grade_and_is_stored_and_exported_as_its_value(con, fixtures, tmp_path):
    import json

    from curation.ingest.kb_export import decisions_export
    from curation.learning.snapshot import export_snapshot, load_snapshot
    from curation.schemas import PO
    from curation.store.decisions import list_decisions, record_decision
    from curation.workflows.ingestion import ingest_corpus

    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    made = record_decision(con, "ana", PO, {"Gene": "BRAF"}, "1000001", Grade.PARTIAL)
    assert made.grade is Grade.PARTIAL
    (stored,) = con.execute("SELECT grade FROM decisions").fetchone()
    assert type(stored) is str and stored == "partial"  # the column keeps the plain value
    (read,) = list_decisions(con)
    assert read.grade is Grade.PARTIAL  # read back as the Grade, not a str
    # Exports write the value (the bytes a str grade wrote before): never the enum's name.
    tsv = decisions_export([read])
    assert tsv.splitlines()[1].split("\t")[7] == "partial" and "Grade" not in tsv
    assert json.loads(decisions_export([read], fmt="jsonl"))["grade"] == "partial"
    # Training reads it back from a snapshot as a Grade too.
    export_snapshot(con, tmp_path / "snap")
    assert '"grade": "partial"' in (tmp_path / "snap" / "decisions.jsonl").read_text()
    (loaded,) = load_snapshot(tmp_path / "snap").decisions
    assert loaded.grade is Grade.PARTIAL
