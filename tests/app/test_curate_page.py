from __future__ import annotations

from streamlit.testing.v1 import AppTest

from curation.config import PROJECT_ROOT
from curation.grades import Grade

APP = str(PROJECT_ROOT / "app.py")


def _decisions(at: AppTest):
    from pages.common import connection

    return (
        connection().execute("SELECT curator, pmid, grade, answer, superseded_by FROM decisions ORDER BY 1").fetchall()
    )


def test_type_search_decide_undo(loaded_db):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    assert at.title[0].value == "Curate"
    # The sidebar's Curator field stores the name under "curator" (its on_change callback).
    at.session_state["curator"] = "ana"
    at.selectbox(key="pick_Gene").set_value("BRAF")
    at.selectbox(key="pick_Variant").set_value("V600E")
    at.run()
    assert not at.exception
    assert any("Query: Treatment for gene BRAF and variant V600E?" in t.value for t in at.text)
    assert any("PMID 1000001" in m.value for m in at.markdown)
    at.selectbox(key="answer_1000001").set_value("Vemurafenib")
    at.run()
    at.button(key="complete_1000001").click()
    at.run()
    assert not at.exception
    assert _decisions(at) == [("ana", "1000001", Grade.COMPLETE, "Vemurafenib", None)]
    assert any("ana: Complete evidence" in c.value for c in at.caption)
    undo = next(b for b in at.button if b.label == "Undo my last decision")
    undo.click()
    at.run()
    (row,) = _decisions(at)
    assert row[4] is not None  # kept, marked withdrawn
    assert not any("ana: Complete evidence" in c.value for c in at.caption)


def test_decisions_need_a_curator(loaded_db):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.selectbox(key="pick_Gene").set_value("BRAF")
    at.run()
    assert any("Enter your name" in w.value for w in at.warning)
    assert at.button(key="complete_1000001").disabled


def test_empty_store_opens_on_the_knowledge_base_page(tmp_path, monkeypatch):
    monkeypatch.setenv("CURATION_DB", str(tmp_path / "empty.duckdb"))
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception
    assert at.title[0].value == "Knowledge base"


def test_typed_notation_gets_a_suggestion(loaded_db):
    at = AppTest.from_file(APP, default_timeout=120)
    # Free text typed into a slot (AppTest cannot type an option that is not listed yet, so the
    # typed value is placed in the widget's state before the first run).
    at.session_state["pick_Gene"] = "BRAF"
    at.session_state["pick_Variant"] = "Val600Glu"
    at.run()
    assert not at.exception
    assert at.selectbox(key="pick_Variant").value == "Val600Glu"
    assert any("did you mean **V600E**" in c.value for c in at.caption)


def test_a_corrupted_active_version_is_reported_and_search_goes_on(loaded_db, tmp_path):
    from curation import store
    from curation.versions import catalog, registry
    from curation.versions.manifest import Manifest

    models = tmp_path / "models"
    con = store.open_store(loaded_db)
    documents = store.content_counts(con)[0]
    tmp = registry.staging(models, "po-broken")
    for part in ("model", "dense", "lexical"):
        (tmp / part).mkdir()
    (tmp / "dense" / "index.faiss").write_bytes(b"not a faiss index")
    version = registry.publish(models, "po-broken", Manifest(schema="PO", documents=documents))
    catalog.register_version(con, version)
    catalog.activate_version(con, "po-broken")
    con.close()

    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["pick_Gene"] = "BRAF"
    at.session_state["pick_Variant"] = "V600E"
    at.run()
    assert not at.exception
    assert any("active model version po-broken is not serving" in w.value and "bm25-only" in w.value
               for w in at.warning)
    assert any("PMID 1000001" in m.value for m in at.markdown)  # BM25 still serves


def test_entity_types_can_be_hidden_and_the_choice_is_remembered(loaded_db):
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["highlight_kinds"] = ["variant"]  # as the Entity types toggle leaves it
    at.session_state["pick_Gene"] = "BRAF"
    at.session_state["pick_Variant"] = "V600E"
    at.run()
    assert not at.exception
    marked = " ".join(m.value for m in at.markdown if "PMID 1000001" in m.value or "<mark" in m.value)
    assert 'title="query: Variant: V600E"' in marked
    assert "Gene: BRAF" not in marked and "chemical:" not in marked
    toggle = at.pills(key="kinds_input")
    assert toggle.value == ["variant"]
    toggle.set_value(["gene", "variant", "chemical"]).run()
    assert not at.exception
    assert at.session_state["highlight_kinds"] == ["gene", "variant", "chemical"]
    marked = " ".join(m.value for m in at.markdown if "<mark" in m.value)
    assert "Gene: BRAF" in marked and "chemical: " in marked
