"""A load that stopped before its end: the app's next start finishes it in the background, and until then the
Curate page says the concept index is still being built instead of "none found"."""

from __future__ import annotations

import html
import shutil

from streamlit.testing.v1 import AppTest

from curation.config import PROJECT_ROOT, load_settings
from curation.store.base import stats
from curation.store.loads import StepRow, plan_load, unfinished_load
from curation.store.opening import open_store
from curation.workflows import background_load

APP = str(PROJECT_ROOT / "app.py")


def _unfinished(db, steps: list[StepRow]) -> None:
    con = open_store(db)
    try:
        plan_load(con, "the data directory of a test", steps)
    finally:
        con.close()


def _shown(at: AppTest, element: str) -> list[str]:
    return [html.unescape(e.value) for e in getattr(at, element)]


def test_curate_says_the_index_is_still_being_built_never_none_found(loaded_db, monkeypatch):
    _unfinished(loaded_db, [StepRow(0, "annotate")])  # the documents are in; their annotation never ran
    # Not resumed in this test: the page is seen as it is between the stop and the end of the resume.
    monkeypatch.setattr(background_load, "resume_unfinished_load", lambda *args, **kwargs: None)
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["pick_Gene"], at.session_state["pick_Variant"] = "BRAF", "V600E"
    at.run()
    assert not at.exception, at.exception
    warnings = _shown(at, "warning")
    assert any(w.startswith("The concept index is still being built (0 of 2 abstracts annotated") and
               "Left: annotating the abstracts." in w and "at the app's next start" in w for w in warnings), warnings
    captions = _shown(at, "caption")
    assert any(c.startswith("Suggested treatment: the concept index is still being built") for c in captions)
    assert not any("none of the top" in c for c in captions), captions

    at = AppTest.from_file(APP, default_timeout=120)  # a name typed before the first run (AppTest cannot type one)
    at.session_state["pick_Gene"] = "NOSUCHGENE1"
    at.run()
    assert any(i.startswith("No abstract found yet: the concept index is still being built")
               for i in _shown(at, "info")), _shown(at, "info")
    assert not any("No abstract was found" in i for i in _shown(at, "info"))


def test_the_next_start_finishes_the_load_in_the_background_and_says_so(loaded_db, tmp_path, fixtures, monkeypatch):
    data = tmp_path / "data"
    (data / "hoc").mkdir(parents=True)
    shutil.copy(fixtures / "bench" / "hoc" / "tiny_hoc.jsonl", data / "hoc" / "hoc_abstracts.jsonl")
    monkeypatch.setenv("CURATION_DATA_DIR", str(data))
    monkeypatch.setenv("CURATION_VOCABULARIES", "none")
    _unfinished(loaded_db, [StepRow(0, "corpus", "jsonl", str(data / "hoc" / "hoc_abstracts.jsonl")),
                            StepRow(0, "annotate")])
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()  # the start: the check every run makes finds the load and resumes it
    assert not at.exception, at.exception
    state = background_load.wait_for_load(load_settings(), timeout=120)
    assert state is not None and state.finished and not state.error, state
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    (success,) = _shown(at, "success")
    assert "finishing a load that had stopped" in success and "documents annotated" in success
    from pages.parts.common import store_cursor  # the app's connection (the process holds the file)

    con = store_cursor()
    assert unfinished_load(con) is None
    counts = stats(con)
    assert counts["annotated_documents"] == counts["documents"] > 2  # the fixture's two and the HoC file's
