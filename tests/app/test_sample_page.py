"""The "Load the sample" action: an empty store becomes a workbench in one click, and a second click adds nothing.

The load runs in the background (a tab closed meanwhile does not stop it): a click starts it, the sidebar says
where it stands, and its summary shows once it is done.
"""

from __future__ import annotations

import html
import shutil

from streamlit.testing.v1 import AppTest

from curation.config import PROJECT_ROOT

APP = str(PROJECT_ROOT / "app.py")


def _sample_dir(tmp_path, fixtures):
    folder = tmp_path / "data"
    for source, target in [("civic/current.tsv", "civic/civic_evidence.tsv"),
                           ("pubtator/small.PubTator", "biored/Train.PubTator")]:
        (folder / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(fixtures / source, folder / target)
    return folder


def _app(monkeypatch, tmp_path, data_dir) -> AppTest:
    monkeypatch.setenv("CURATION_DB", str(tmp_path / "app.duckdb"))
    monkeypatch.setenv("CURATION_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("CURATION_DATA_DIR", str(data_dir))
    monkeypatch.setenv("CURATION_VOCABULARIES", "none")  # the files only; installed vocabularies: test_vocabularies
    monkeypatch.setenv("CURATION_TRAIN_AFTER_LOAD", "0")  # the load alone; its training steps: test_first_models
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    return at


def _click(at: AppTest, label: str) -> AppTest:
    """Click, wait for the background load the click started, and open the app again: the sidebar (which AppTest
    draws on a first run only) shows the load's summary."""
    from curation.config import load_settings
    from curation.workflows.background_load import wait_for_load

    next(b for b in at.button if b.label == label).click().run()
    assert not at.exception, at.exception
    state = wait_for_load(load_settings(), timeout=120)
    assert state is not None and state.finished
    fresh = AppTest.from_file(APP, default_timeout=120)
    fresh.run()
    assert not fresh.exception, fresh.exception
    return fresh


def test_load_the_sample_from_the_empty_knowledge_base_page(monkeypatch, tmp_path, fixtures):
    at = _app(monkeypatch, tmp_path, _sample_dir(tmp_path, fixtures))
    assert any("2 files from" in html.unescape(c.value) for c in at.caption)  # says what it will load
    at = _click(at, "Load the sample")
    (success,) = at.success
    assert html.unescape(success.value).startswith("Sample loaded from the data directory")
    at.switch_page("pages/knowledge_base.py").run()
    assert [m.value for m in at.metric][:2] == ["6", "2"]  # KB records, abstracts: the fixture files

    at = _click(at, "Load the sample")  # in the "Sample data" expander now
    assert any(html.unescape(i.value).startswith("Nothing new: the sample") for i in at.info)


def test_the_curate_pages_empty_state_offers_the_sample(monkeypatch, tmp_path, fixtures):
    at = _app(monkeypatch, tmp_path, _sample_dir(tmp_path, fixtures))
    at.switch_page("pages/curate.py").run()
    assert any("load the sample" in i.value for i in at.info)
    at = _click(at, "Load the sample")
    assert at.success and html.unescape(at.success[0].value).startswith("Sample loaded from")


def test_without_a_sample_the_page_says_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setenv("CURATION_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr("curation.ingest.fetch.default_transport", _offline)
    at = _app(monkeypatch, tmp_path, tmp_path / "no-data")
    assert any("fetched online" in html.unescape(c.value) for c in at.caption)
    at = _click(at, "Load the sample")
    (error,) = at.error
    text = html.unescape(error.value)
    assert "CURATION_DATA_DIR" in text and "Knowledge base page" in text


def _offline(request, *, timeout):
    from urllib.error import URLError

    raise URLError(OSError(101, "Network is unreachable"))


def test_after_the_load_the_learned_parts_are_made_active_in_the_background(monkeypatch, tmp_path, fixtures):
    from curation.config import load_settings
    from curation.workflows import background_load, first_models
    from curation.workflows.background_load import wait_for_load

    at = _app(monkeypatch, tmp_path, _sample_dir(tmp_path, fixtures))
    monkeypatch.setenv("CURATION_TRAIN_AFTER_LOAD", "1")
    for pause in ("TRAIN_DELAY_S", "TRAIN_QUIET_S"):  # no curator here to wait for
        monkeypatch.setattr(background_load, pause, 0.0)
    job = type("Job", (), {"job_id": 7, "finished": True, "state": "succeeded", "message": "relations-x is active"})
    monkeypatch.setattr(first_models, "start_relations_job", lambda con, settings: job)
    monkeypatch.setattr(first_models, "build_base_version", lambda con, settings: "base encoder version po-base serves")
    shipped = type("Job", (), {"job_id": 8, "finished": True, "state": "succeeded", "message": "biomed is active"})
    monkeypatch.setattr(first_models, "start_shipped_recogniser",
                        lambda con, settings: (shipped, "the shipped recogniser biomed: background job 8"))
    at = _click(at, "Load the sample")
    wait_for_load(load_settings(), timeout=120, training=True)
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    loaded, trained = (html.unescape(s.value) for s in at.success)
    assert loaded.startswith("Sample loaded from") and "being made active in the background" in loaded
    assert trained.startswith("relation scorer job 7 succeeded: relations-x is active [")
    assert "base encoder version po-base serves [" in trained
    assert "recogniser job 8 succeeded: biomed is active [" in trained
