"""Activating a model version in a real browser changes what the Curate page serves, in the same session.

A small store (the fixture CIViC KB, four hand-written abstracts annotated into the concept index at
ingest, as the app does) and two zero-shot versions of the offline MiniLM: one serving with dense share
0.0 (the lexical order), one with 1.0 (the dense model's order). The orders each serves for Gene=BRAF
are computed in-process first, with the same search the page calls; then headless Chromium searches
BRAF on Curate, activates the other version on Train & evaluate, and searches again.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from bench._browser import (
    CHROMIUM,
    choose_option,
    chromium,
    open_app,
    open_page,
    result_pmids,
    screenshot,
    search_slots,
    sidebar_text,
)
from bench._server import app_server
from curation.learning.build import BuildRequest, build_version
from curation.learning.splits import EvalSet
from curation.retrieval import result_rows as results
from curation.schemas import PO
from curation.store.corpus import iter_documents
from curation.store.opening import open_store
from curation.versions import catalog
from curation.versions.manifest import Served
from curation.workflows import entities, serving
from curation.workflows.ingestion import ingest_corpus, ingest_kb
from index.loading import open_retriever

pytestmark = pytest.mark.browser

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
QUERY = {"Gene": "BRAF"}
# BM25 prefers the first (BRAF written often, among other topics); the MiniLM prefers the sequencing
# report, which writes BRAF once: the two served shares order the three BRAF abstracts differently.
ABSTRACTS = [
    ("10000001", "BRAF, EGFR and KRAS in a mixed tumour panel",
     "BRAF BRAF BRAF: the panel also covered EGFR in lung, KRAS in colon and cisplatin dosing; BRAF again."),
    ("10000002", "Vemurafenib treatment of BRAF-mutant melanoma",
     "Patients with BRAF-mutant metastatic melanoma were treated with vemurafenib; most responded, and "
     "resistance emerged after months of therapy."),
    ("10000003", "Sequencing of tumour samples",
     "Samples from forty patients were sequenced; one carried a change in BRAF, described here with its "
     "clinical course and the outcome after two years."),
    ("10000004", "Cisplatin in the kidney", "Cisplatin nephrotoxicity in rats."),
]
SHARES = {"po-lexical": 0.0, "po-dense": 1.0}  # version name -> its served dense share


def _build_store(tmp_path, fixtures):
    """The store and models folder, ``po-lexical`` active; returns them and each version's expected order."""
    db, models = tmp_path / "store.duckdb", tmp_path / "models"
    corpus = tmp_path / "abstracts.jsonl"
    corpus.write_text("".join(json.dumps({"pmid": p, "title": t, "abstract": a}) + "\n" for p, t, a in ABSTRACTS))
    con = open_store(db)
    try:
        ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
        # As the Knowledge base page ingests: the current annotator (the dictionaries here) fills the concept index.
        report = ingest_corpus(con, "jsonl", corpus, annotator=lambda: entities.current_annotator(
            con, None, entities.dictionary_matcher(con)).annotator)
        assert dict(report.details)["documents annotated"] == len(ABSTRACTS)
        documents = {d.pmid: d for d in iter_documents(con)}
        # build_version asks for the served share only with typed dev values; the callback fixes it.
        dev = EvalSet({"q": PO.render_query(QUERY)}, {"q": {"10000002": 1}}, None, {"q": dict(QUERY)})
        for name, share in SHARES.items():
            version = build_version(BuildRequest(schema=PO, version=name, train=False), documents, models, dev=dev,
                                    served=lambda engine, dev, *rest, share=share: Served(dense_share=share))
            catalog.register_version(con, version)
        catalog.activate_version(con, "po-lexical")
        # The page's search: its matcher, linker and curate_search, over each version's loaded retriever.
        matcher = serving.build_matcher(con)
        linker = results.default_linker(con, matcher, serving.build_normaliser(matcher))
        expected = {}
        for name, share in SHARES.items():
            engine = open_retriever(models / name)
            assert engine.served_dense_share == share
            found = results.curate_search(con, engine, matcher, PO, QUERY, linker=linker)
            expected[name] = [row.pmid for row in found.rows]
    finally:
        con.close()  # DuckDB: one process per file; the server opens it next
    return db, models, expected


def test_activating_a_version_changes_the_served_order_in_a_real_browser(tmp_path, fixtures):
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does it)")
    db, models, expected = _build_store(tmp_path, fixtures)
    # The precondition: the two versions serve the same abstracts in different orders.
    assert sorted(expected["po-lexical"]) == sorted(expected["po-dense"]) == ["10000001", "10000002", "10000003"]
    assert expected["po-lexical"] != expected["po-dense"]

    with app_server(db, models, tmp_path / "server.log") as url, chromium(tmp_path / "profile") as context:
        page = context.new_page()
        open_app(page, url)
        assert "Model: po-lexical (active)" in sidebar_text(page)
        search_slots(page, QUERY)
        assert result_pmids(page) == expected["po-lexical"]

        open_page(page, "Train & evaluate")
        choose_option(page, "Version to serve", "po-dense (PO)")
        page.locator(".st-key-activate button").click()
        expect(page.get_by_test_id("stSidebar")).to_contain_text("Model: po-dense (active)", timeout=60_000)

        open_page(page, "Curate")
        search_slots(page, QUERY)
        assert result_pmids(page) == expected["po-dense"]
        shot = screenshot(page, tmp_path / "curate_after_activation.png", full_page=True)

    assert shot.read_bytes().startswith(PNG_MAGIC)
    con = open_store(db, read_only=True)
    try:
        assert catalog.active_version(con, PO.name).version == "po-dense"
    finally:
        con.close()


def test_what_changed_shows_each_versions_top_list_side_by_side(tmp_path, fixtures, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from curation.config import PROJECT_ROOT

    db, models, expected = _build_store(tmp_path, fixtures)
    monkeypatch.setenv("CURATION_DB", str(db))
    monkeypatch.setenv("CURATION_MODELS_DIR", str(models))
    at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/train.py").run()
    assert at.selectbox(key="compare_before").value == "po-lexical"  # the active one, by default
    at.selectbox(key="compare_after").set_value("po-dense")
    at.text_input(key="compare_Gene").set_value(QUERY["Gene"]).run()
    at.button(key="compare").click().run()
    assert not at.exception and not at.warning
    table = at.dataframe[-1].value  # the last table on the page: the shifts
    before = {p: r for r, p in enumerate(expected["po-lexical"], start=1)}
    after = {p: r for r, p in enumerate(expected["po-dense"], start=1)}
    assert list(table["PMID"]) == expected["po-dense"]  # in the new order
    assert list(table["before"]) == [before[p] for p in table["PMID"]]
    assert list(table["after"]) == [after[p] for p in table["PMID"]]
    assert set(table["change"]) != {"same"}  # the two versions order them differently
    assert any("abstracts changed place" in c.value for c in at.caption)
