from __future__ import annotations

import html

from streamlit.testing.v1 import AppTest

from curation.config import PROJECT_ROOT
from curation.grades import Grade
from curation.store.decisions import record_decision
from curation.store.opening import open_store
from pages.parts.uploads import safe_upload_name

APP = str(PROJECT_ROOT / "app.py")


def _run(monkeypatch, db) -> AppTest:
    monkeypatch.setenv("CURATION_DB", str(db))
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    return at


def test_empty_store_explains_how_to_load(monkeypatch, tmp_path):
    at = _run(monkeypatch, tmp_path / "empty.duckdb")
    assert not at.exception
    assert any("Load the sample in one click" in info.value and "quickstart" in info.value for info in at.info)
    assert any(b.label == "Load the sample" for b in at.button)
    assert [m.value for m in at.metric] == ["0", "0"]


def test_loaded_store_shows_counts(monkeypatch, tmp_path, fixtures):
    from curation.workflows.ingestion import ingest_corpus, ingest_kb

    con = open_store(tmp_path / "loaded.duckdb")
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    con.close()
    at = _run(monkeypatch, tmp_path / "loaded.duckdb")
    at.switch_page("pages/knowledge_base.py").run()
    assert not at.exception
    assert not at.info
    assert [m.value for m in at.metric] == ["6", "2"]
    assert any("PO: 6" in c.value for c in at.caption)


def test_locked_store_is_a_message_not_a_traceback(monkeypatch, tmp_path):
    import subprocess
    import sys

    db = tmp_path / "locked.duckdb"
    open_store(db).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb,sys; c=duckdb.connect({str(db)!r}); print('ready', flush=True); sys.stdin.readline()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        at = _run(monkeypatch, db)
        assert not at.exception
        errors = [e.value for e in at.error if "in use by process" in e.value]
        assert errors and all("wait for it to finish, then reload this page" in e for e in errors)
        assert not any("Knowledge base page" in e for e in errors)  # it is the app: no page of it to go to
    finally:
        holder.communicate("\n", timeout=30)


def test_upload_names_cannot_escape_the_upload_folder():
    assert safe_upload_name("../../etc/passwd") == "passwd"
    assert safe_upload_name("..\\..\\win.ini") == "win.ini"
    assert safe_upload_name("../.bashrc") == "bashrc"
    assert safe_upload_name("my file;rm -rf.tsv") == "my_file_rm_-rf.tsv"
    assert safe_upload_name("..") == "upload"


def test_export_buttons_offer_decisions_and_new_records(monkeypatch, tmp_path, fixtures):
    from curation.schemas import PO
    from curation.workflows.ingestion import ingest_corpus, ingest_kb

    con = open_store(tmp_path / "export.duckdb")
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    record_decision(
        con, "ana", PO, {"Gene": "BRAF", "Variant": "V600E"}, "1000001", Grade.COMPLETE, answer="Vemurafenib"
    )
    con.close()
    at = _run(monkeypatch, tmp_path / "export.duckdb")
    at.switch_page("pages/knowledge_base.py").run()
    assert not at.exception
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["Decisions", "New PO KB records", "CIViC source suggestions (CSV)"]
    assert any("CIViC source suggestions: 1 row · schema PO" in html.unescape(c.value) for c in at.caption)


def test_a_schema_is_added_on_the_knowledge_base_page_and_offered_at_once(monkeypatch, tmp_path, loaded_db):
    at = _run(monkeypatch, loaded_db)
    at.switch_page("pages/knowledge_base.py").run()
    field = {t.label.split(":")[0].split(",")[0]: t for t in at.text_input}
    field["Name"].input("Gene-Drug")
    field["Entity types"].input("Gene, Drug")
    field["Answer"].input("Drug")
    field["Kinds"].input("Gene=gene, Drug=chemical")
    next(a for a in at.text_area if a.label.startswith("Query templates")).input("Drugs for gene {Gene}?")
    next(b for b in at.button if b.label == "Preview").click().run()
    assert not at.exception and not at.error
    assert any("Drugs for gene <Gene>?" in t.value for t in at.text)  # the preview, before anything is saved
    assert "Gene-Drug" not in next(s for s in at.selectbox if s.label == "Add or edit").options
    next(b for b in at.button if b.label == "Save schema").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("Saved Gene-Drug" in s.value for s in at.success)
    assert "Gene-Drug" in next(s for s in at.selectbox if s.label == "Add or edit").options
    assert "Gene-Drug" in next(s for s in at.selectbox if s.label.startswith("Schema")).options  # the import form
