from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from curation.config import PROJECT_ROOT
from curation.grades import Grade
from curation.learning.build import BuildRequest, build_version
from curation.learning.training import TrainConfig
from curation.schemas import PO
from curation.store.corpus import iter_documents
from curation.store.decisions import record_decision
from curation.store.opening import open_store
from curation.workflows.ingestion import ingest_corpus, ingest_kb

APP = str(PROJECT_ROOT / "app.py")
FIXTURES = Path(__file__).parents[1] / "fixtures"


def _load(con, fixtures) -> None:
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")


@pytest.fixture(scope="module")
def built_models(tmp_path_factory):
    """A real zero-shot version of the fixture corpus (2 abstracts), and a copy to compare it with."""
    folder = tmp_path_factory.mktemp("explore")
    con = open_store(folder / "build.duckdb")
    _load(con, FIXTURES)
    documents = {d.pmid: d for d in iter_documents(con)}
    con.close()
    models = folder / "models"
    request = BuildRequest(schema=PO, version="po-base", train=False, train_config=TrainConfig(max_seq_length=64))
    build_version(request, documents, models)
    shutil.copytree(models / "po-base", models / "po-copy")
    return models


@pytest.fixture
def loaded_db(tmp_path, fixtures, monkeypatch, built_models):
    db = tmp_path / "explore.duckdb"
    con = open_store(db)
    _load(con, fixtures)
    record_decision(
        con, "ana", PO, {"Gene": "BRAF", "Variant": "V600E"}, "1000001", Grade.COMPLETE, "Vemurafenib"
    )
    record_decision(con, "ana", PO, {"Gene": "BRAF", "Variant": "V600E"}, "1000002", Grade.NOT_RELEVANT)
    con.close()
    monkeypatch.setenv("CURATION_DB", str(db))
    monkeypatch.setenv("CURATION_MODELS_DIR", str(built_models))
    return db


def _explore() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.switch_page("pages/explore.py").run()
    return at


def _scatter(at: AppTest, index: int = 0) -> dict:
    import json

    return json.loads(at.get("plotly_chart")[index].proto.spec)


def test_empty_store_says_how_to_build_a_version(tmp_path, monkeypatch):
    monkeypatch.setenv("CURATION_DB", str(tmp_path / "empty.duckdb"))
    monkeypatch.setenv("CURATION_MODELS_DIR", str(tmp_path / "models"))
    at = _explore()
    assert not at.exception
    assert at.title[0].value == "Explore embeddings"
    assert any("python -m curation train --schema PO --zero-shot" in i.value for i in at.info)


def test_a_version_is_mapped_coloured_and_compared(loaded_db):
    at = _explore()
    assert not at.exception
    assert not at.error
    (chart,) = at.get("plotly_chart")
    spec = _scatter(at)
    hovers = [h for trace in spec["data"] for h in trace["customdata"]]
    assert ["PMID 1000001<br>BRAF V600E in melanoma."] in hovers
    assert ["query: Treatment for gene BRAF and variant V600E?"] in hovers
    groups = {trace["legendgroup"].split(",")[0] for trace in spec["data"]}
    assert {Grade.COMPLETE, Grade.NOT_RELEVANT, "query"} <= groups

    at.selectbox(key="explore_colour").set_value("margin_class")
    at.selectbox(key="explore_compare").set_value("po-copy")
    at.run()
    assert not at.exception and not at.error
    assert len(at.get("plotly_chart")) == 2  # side by side
    groups = {trace["legendgroup"].split(",")[0] for trace in _scatter(at, 1)["data"]}
    assert "query" in groups and any(g.startswith("pos-") for g in groups)


def test_umap_on_too_few_points_is_a_message(loaded_db):
    at = _explore()
    at.radio(key="explore_method").set_value("umap")
    at.run()
    assert not at.exception
    assert any("UMAP needs at least 4 points" in e.value for e in at.error)


def test_a_corrupted_version_is_reported_not_loaded(loaded_db, built_models, tmp_path, monkeypatch):
    models = tmp_path / "models"
    shutil.copytree(built_models / "po-base", models / "po-base")
    (models / "broken").mkdir()
    (models / "broken" / "manifest.json").write_text("{oops")
    monkeypatch.setenv("CURATION_MODELS_DIR", str(models))
    at = _explore()
    assert not at.exception
    assert any("broken/manifest.json is corrupted" in w.value for w in at.warning)
    assert len(at.get("plotly_chart")) == 1


def test_activating_a_version_switches_the_curate_pages_model(loaded_db):
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()  # the Curate page: no active version, so the newest that indexes the corpus
    assert at.radio[0].help == "model version: po-base"
    at.switch_page("pages/train.py").run()
    at.selectbox(key="activate_choice").set_value("po-copy")
    at.button(key="activate").click()
    at.run()
    assert not at.exception
    at.switch_page("pages/curate.py").run()
    assert not at.exception
    assert at.radio[0].help == "model version: po-copy"


def test_html_in_a_gene_or_answer_is_shown_as_text_in_the_legend(loaded_db):
    con = open_store(loaded_db)
    record_decision(con, "ana", PO, {"Gene": "<a href=x>BRAF</a>", "Variant": "V600E"}, "1000002", Grade.COMPLETE,
                    '<span style="font-size:60px">Vemurafenib</span>')
    con.close()
    at = _explore()
    for colour in ("gene", "answer"):
        at.selectbox(key="explore_colour").set_value(colour)
        at.run()
        assert not at.exception and not at.error
        spec = _scatter(at)
        names = [trace["name"] for trace in spec["data"]] + [trace["legendgroup"] for trace in spec["data"]]
        shown = names + [trace["hovertemplate"] for trace in spec["data"]] + [spec["layout"]["title"]["text"]]
        assert not [text for text in shown if "<a" in text or "<span" in text], colour
        escaped = "&lt;a href=x&gt;BRAF&lt;/a&gt;" if colour == "gene" else "&lt;span"
        assert any(escaped in name for name in names), (colour, names)
