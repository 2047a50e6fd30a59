from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from curation.config import PROJECT_ROOT
from curation.grades import Grade
from curation.schemas import PO
from curation.store.decisions import record_decision
from curation.store.opening import open_store

APP = str(PROJECT_ROOT / "app.py")
PAGE = "pages/annotate.py"
BRAF = {"Gene": "BRAF", "Variant": "V600E"}


@pytest.fixture
def loaded_db(loaded_db):
    """The shared fixture store, with two curators disagreeing on one pair."""
    con = open_store(loaded_db)
    record_decision(con, "bo", PO, BRAF, "1000001", Grade.COMPLETE)
    record_decision(con, "carl", PO, BRAF, "1000001", Grade.NOT_RELEVANT)
    con.close()
    return loaded_db


def _open(curator: str | None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    if curator:
        # AppTest with st.navigation does not re-run the sidebar's callback: set the plain key.
        at.session_state["curator"] = curator
    at.run()
    at.switch_page(PAGE).run()
    return at


def _decisions():
    from pages.parts.common import connection

    return (
        connection()
        .execute("SELECT curator, pmid, grade, adjudication FROM decisions WHERE superseded_by IS NULL "
                 "ORDER BY decision_id")
        .fetchall()
    )


def test_empty_store_says_to_load_data(tmp_path, monkeypatch):
    monkeypatch.setenv("CURATION_DB", str(tmp_path / "empty.duckdb"))
    at = _open("ana")
    assert not at.exception
    assert at.title[0].value == "Annotate"
    assert any("No abstracts yet" in i.value for i in at.info)


def test_a_curator_name_is_required(loaded_db):
    at = _open(None)
    assert not at.exception
    assert any("Enter your name" in w.value for w in at.warning)
    assert not [b for b in at.button if b.key == "annotate_complete"]


def test_grading_the_next_pair_records_a_decision(loaded_db):
    at = _open("ana")
    assert not at.exception
    assert any("PMID 1000001" in m.value for m in at.markdown)
    assert any("Treatment for gene BRAF and variant V600E?" in m.value for m in at.markdown)
    assert any("mark.ent-query" in m.value for m in at.markdown)  # Curate's entity colours, not plain yellow marks
    # Blind: the queue does not show what bo and carl said about the pair to grade.
    assert any("graded by 2 other curators" in c.value for c in at.caption)
    # Agreement: bo and carl share one pair, graded complete vs not_relevant.
    assert any("bo: Complete evidence; carl: Not relevant" in c.value for c in at.caption)
    at.button(key="annotate_partial").click().run()
    assert not at.exception
    assert _decisions()[-1] == ("ana", "1000001", Grade.PARTIAL, False)
    # The pair left ana's queue.
    assert not any("graded by 2 other curators" in c.value for c in at.caption)


def test_skip_moves_on_without_recording(loaded_db):
    at = _open("ana")
    before = _decisions()
    at.button(key="annotate_skip").click().run()
    assert not at.exception
    assert _decisions() == before
    assert not any("graded by 2 other curators" in c.value for c in at.caption)


def test_adjudicating_a_disagreement_records_the_final_grade(loaded_db):
    at = _open("ana")
    (go,) = [b for b in at.button if b.label == "Adjudicate"]
    (pick,) = [s for s in at.selectbox if s.label == "Final grade"]
    pick.set_value(Grade.PARTIAL)
    go.click().run()
    assert not at.exception
    assert _decisions()[-1] == ("ana", "1000001", Grade.PARTIAL, True)
    assert not [b for b in at.button if b.label == "Adjudicate"]
    assert any("Disagreements to adjudicate · 0" in s.value for s in at.subheader)


def test_an_adjudicated_grade_is_marked_as_such_on_the_curate_card(loaded_db):
    con = open_store(loaded_db)
    record_decision(con, "ana", PO, BRAF, "1000001", Grade.PARTIAL, adjudication=True)
    con.close()
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["curator"] = "ana"
    at.run()
    at.selectbox(key="pick_Gene").set_value("BRAF")
    at.selectbox(key="pick_Variant").set_value("V600E")
    at.run()
    assert not at.exception
    decided = [c.value for c in at.caption if "decided —" in c.value and "carl" in c.value]
    assert decided and "ana: Partial evidence (adjudicated: the final grade)" in decided[0]
    assert "bo: Complete evidence;" in decided[0] and "bo: Complete evidence (adjudicated" not in decided[0]
