"""What changed between two versions for one query: rank shifts (curation.workflows.versions)."""

from __future__ import annotations


def test_rank_shifts_say_what_moved_entered_and_left():
    from curation.workflows.versions import rank_shifts, shift_lines, shift_table

    shifts = rank_shifts(["a", "b", "c", "d"], ["c", "a", "e"])
    assert [(s.pmid, s.before, s.after, s.describe()) for s in shifts] == [
        ("c", 3, 1, "up 2"), ("a", 1, 2, "down 1"), ("e", None, 3, "new"), ("b", 2, None, "dropped"),
        ("d", 4, None, "dropped")]
    points = shift_lines(shifts, "old", "new")
    assert {(p["pmid"], p["version"], p["rank"]) for p in points if p["pmid"] in ("e", "b")} == {
        ("e", "new", 3), ("b", "old", 2)}  # one point for an abstract in one list only
    assert shift_table(rank_shifts(["a"], ["a"])) == [{"PMID": "a", "before": 1, "after": 1, "change": "same"}]
