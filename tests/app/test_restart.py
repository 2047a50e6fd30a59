"""After a (re)start the first page is served without waiting for the search's dictionaries.

The matcher (dictionaries over the store, ~25 s on the real data without its kept copy) is built
in a background thread that app.py starts once a run has ended; a search that comes before it is ready
waits for it. Here its build is held on an event: the first page must be drawn while it is held.
"""

from __future__ import annotations

import json
import threading

from streamlit.testing.v1 import AppTest

from curation.config import PROJECT_ROOT
from curation.runtime import matcher as matcher_build
from curation.workflows import serving

APP = str(PROJECT_ROOT / "app.py")


def test_the_first_page_is_drawn_while_the_matcher_is_still_being_built(loaded_db, monkeypatch):
    release, started = threading.Event(), threading.Event()
    built = []
    real_build = matcher_build.load_matcher

    def slow_build(con, *args, **kwargs):
        started.set()
        assert release.wait(60), "never released"
        built.append(real_build(con, *args, **kwargs))
        return built[-1]

    monkeypatch.setattr(matcher_build, "load_matcher", slow_build)
    at = AppTest.from_file(APP, default_timeout=30)
    at.run()  # returns although the build cannot finish
    assert not at.exception
    assert at.title[0].value == "Curate"
    assert started.wait(10), "the first page did not start the matcher's build in the background"
    assert not built

    release.set()  # the search waits for the build, then shows its results
    at.session_state["pick_Gene"] = "BRAF"
    at.run()
    assert not at.exception
    assert any("Query: Treatment for gene BRAF?" in t.value for t in at.text)
    assert any("PMID 1000001" in m.value for m in at.markdown)
    assert len(built) == 1


def test_a_decision_s_server_time_is_logged_only_when_asked(loaded_db, monkeypatch, tmp_path):
    log = tmp_path / "timing.jsonl"
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["curator"] = "ana"
    at.session_state["pick_Gene"] = "BRAF"
    at.run()
    at.button(key="complete_1000001").click()
    at.run()
    assert not at.exception and not log.exists()  # unset: nothing written

    monkeypatch.setenv("CURATION_TIMING_LOG", str(log))
    at.button(key="partial_1000001").click()
    at.run()
    assert not at.exception
    (line,) = [json.loads(x) for x in log.read_text().splitlines()]
    assert (line["event"], line["curator"], line["pmid"]) == ("decision", "ana", "1000001")
    assert 0 < line["callback_ms"] <= line["server_ms"]
    assert abs(line["callback_ms"] + line["run_ms"] - line["server_ms"]) < 0.1


def test_the_first_page_is_drawn_while_the_ranking_loads(loaded_db, monkeypatch):
    release = threading.Event()
    real_open = serving.open_for_app

    def slow_open(*args, **kwargs):  # a model version's encoder takes seconds to load
        assert release.wait(60), "never released"
        return real_open(*args, **kwargs)

    monkeypatch.setattr(serving, "open_for_app", slow_open)
    at = AppTest.from_file(APP, default_timeout=30)
    at.run()
    assert not at.exception
    assert at.title[0].value == "Curate"
    assert at.radio[0].options == ["bm25"]  # the version planned to serve, read without loading: BM25 alone
    assert "bm25-only" in at.radio[0].help

    release.set()
    at.session_state["pick_Gene"] = "BRAF"
    at.run()
    assert not at.exception
    assert any("PMID 1000001" in m.value for m in at.markdown)


def test_a_planned_version_that_fails_to_load_leaves_bm25_serving(loaded_db, tmp_path):
    from curation.store.base import content_counts
    from curation.store.opening import open_store
    from curation.versions import catalog, registry
    from curation.versions.manifest import Manifest

    models = tmp_path / "models"
    con = open_store(loaded_db)
    tmp = registry.staging(models, "po-broken")
    for part in ("model", "dense", "lexical"):
        (tmp / part).mkdir()
    (tmp / "dense" / "index.faiss").write_bytes(b"not a faiss index")
    version = registry.publish(models, "po-broken", Manifest(schema="PO", documents=content_counts(con)[0]))
    catalog.register_version(con, version)
    catalog.activate_version(con, "po-broken")
    con.close()

    at = AppTest.from_file(APP, default_timeout=120)
    at.run()  # before the search: what is planned (the active version), read without loading it
    assert not at.exception
    if at.radio[0].options == ["hybrid", "bm25"]:  # the load had not finished when the page was drawn
        assert "po-broken" in at.radio[0].help
    at.session_state["pick_Gene"] = "BRAF"
    at.run()  # the search waits for the load: it fails, BM25 serves, and the page says so
    assert not at.exception
    assert any("active model version po-broken is not serving" in w.value for w in at.warning)
    assert at.radio[0].options == ["bm25"]
    assert any("PMID 1000001" in m.value for m in at.markdown)
