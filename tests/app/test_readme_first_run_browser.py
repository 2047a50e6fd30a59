"""The README's first command, run as a newcomer runs it, opens a workbench that fills with data in one click.

The command is read from README.md (the first line of its first ```bash block, its comment cut) and
run with ``bash -c`` in the repository's root on a fresh store in a temporary folder: only the store's
variables (CURATION_DB, _MODELS_DIR, _JOBS_DIR, _CACHE_DIR, _BACKUPS_DIR) and STREAMLIT_SERVER_PORT are
set. Headless Chromium then does what the README promises: "Load the sample", BRAF + V600E on Curate
(ranked abstracts, entities highlighted), a grade by keyboard; the server is stopped and started again
with the same command and store, the decision is still there, and every page opened by its own address
is run through app.py (one Curator field, app.py's navigation). The Curate page with its results is
saved as docs/screenshots/first_run.png when the test passes with CURATION_WRITE_SCREENSHOTS=1.
"""

from __future__ import annotations

import os
import shutil
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from bench._browser import (
    CHROMIUM,
    ROOT,
    chromium,
    grade_by_keyboard,
    load_sample,
    marked_results,
    nav_titles,
    open_page,
    result_pmids,
    screenshot,
    search,
    set_curator,
    sidebar_text,
    wait_for_decision,
    wait_for_page,
)
from bench._server import README, command_server, first_run_env
from bench._server import readme_first_command as first_command
from curation.grades import Grade
from curation.store.base import stats
from curation.store.decisions import list_decisions
from curation.store.opening import open_store

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TITLES = ["Curate", "Annotate", "Knowledge base", "Explore embeddings", "Train & evaluate"]  # app.py's pages
ADDRESSES = {"/curate": "Curate", "/annotate": "Annotate", "/knowledge_base": "Knowledge base",
             "/explore": "Explore embeddings", "/train": "Train & evaluate"}
NOT_PAGES = ("app", "first run")  # the main script, as Streamlit's legacy runner lists it; legacy_runner's page
CURATOR = 'input[aria-label="Curator"]'
SCREENSHOT = ROOT / "docs" / "screenshots" / "first_run.png"
SHOT_HEIGHT = 1600  # pixels of the page's top: the relation, the first results
LOAD_TIMEOUT_S = 900  # loading the sample and building the first search's matcher: ~1 min on 2 busy cores
SEARCH_TIMEOUT_S = 600  # a restarted server builds the matcher again on its first search


def test_readme_first_command_opens_a_workbench_the_sample_fills(tmp_path, data_dir):
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does it)")
    command = first_command()
    first_block = README.read_text().split("```bash\n", 1)[1]
    assert first_block.splitlines()[0].startswith(command), "not the README's first command, as written"
    assert "streamlit run app.py" in command, f"the README's first command does not start the app: {command!r}"
    # The learned parts' training after a load is tested by tests/curation/workflows/test_first_models.py and timed by
    # bench/first_run.py --first-models; here it would only run in the background and take CI's two cores.
    env = {**first_run_env(tmp_path / "first-run"), "CURATION_TRAIN_AFTER_LOAD": "0"}
    db = env["CURATION_DB"]
    shot = tmp_path / "first_run.png"

    with command_server(command, env, tmp_path / "server-1.log") as served, \
            chromium(tmp_path / "profile-1") as context:
        assert served.args == ("bash", "-c", command)  # what ran is what the README says
        page = context.new_page()
        page.goto(served.url)
        wait_for_page(page)  # an empty store: the Knowledge base page, with "Load the sample"
        _, message = load_sample(page, timeout_s=LOAD_TIMEOUT_S)
        assert message.startswith("Sample loaded from"), message
        assert str(data_dir) in message

        open_page(page, "Curate")
        search(page, "BRAF", "V600E", timeout_s=SEARCH_TIMEOUT_S)
        pmids = result_pmids(page)
        marks = marked_results(page)
        assert len(pmids) >= 10, f"BRAF V600E: {len(pmids)} results"
        assert sum(n > 0 for n in marks) >= 10, f"entities highlighted in too few results: {marks}"

        set_curator(page, "ana")
        grade_by_keyboard(page, pmids[0], "ana", key="1")  # the focused (first) result: Complete evidence
        wait_for_page(page)  # the run that drew the decision has finished
        screenshot(page, shot, height=SHOT_HEIGHT)  # the ranked, highlighted results, the first one decided

    # Stopped: the store can be read here (DuckDB lets one process open it read-write).
    con = open_store(db, read_only=True)
    try:
        (decision,) = list_decisions(con)
        assert (decision.curator, decision.grade, decision.pmid) == ("ana", Grade.COMPLETE, pmids[0])
        assert stats(con)["documents"] >= 1000
    finally:
        con.close()

    # The same command on the same store again: the decision is kept, every page runs through app.py.
    with command_server(command, env, tmp_path / "server-2.log") as served, \
            chromium(tmp_path / "profile-2") as context:
        page = context.new_page()
        for address, title in ADDRESSES.items():  # /curate first: the new server process's first run
            page.goto(served.url + address)
            wait_for_page(page, timeout_s=SEARCH_TIMEOUT_S)
            assert page.locator("h1").first.inner_text().strip() == title
            assert urlparse(page.url).path == address  # Curate, the start page, too: the root forwards to it
            expect(page.locator(CURATOR)).to_have_count(1)
            titles = nav_titles(page)
            assert titles == TITLES, titles
            assert not {t.casefold() for t in titles} & set(NOT_PAGES), titles
            assert "1 decisions" in sidebar_text(page), sidebar_text(page)
            if address == "/curate":
                search(page, "BRAF", "V600E", timeout_s=SEARCH_TIMEOUT_S)
                wait_for_decision(page, pmids[0], "decided — ana: Complete evidence")

    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 20_000, f"screenshot: {len(data)} bytes"
    if os.environ.get("CURATION_WRITE_SCREENSHOTS"):  # set to refresh the README's picture; CI leaves it alone
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, SCREENSHOT)
