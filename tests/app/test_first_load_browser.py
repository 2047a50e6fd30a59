"""The first page load after the server starts, in a real browser (``streamlit run app.py``, headless Chromium).

Streamlit runs the first script run of a server process with its legacy runner for a ``pages/``
folder beside the main script: it lists every file of ``pages/`` ("app", "common", ...), runs a
page's script without app.py when its address is opened, and runs app.py as a page of its own, so
the sidebar's Curator field got another id than in every later run (the name typed on the first
load was dropped, and two Curator fields showed for a moment). ``pages.parts.legacy_runner.leave_legacy_runner``
starts that run again through app.py. Each test starts its own server, so its first load is that run.
"""

from __future__ import annotations

from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from bench._browser import (
    CHROMIUM,
    VIEWPORT,
    chromium,
    first_result_title_box,
    nav_titles,
    open_page,
    search,
    set_curator,
    wait_for_page,
)
from bench._server import app_server

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TITLES = ["Curate", "Annotate", "Knowledge base", "Explore embeddings", "Train & evaluate"]  # app.py's pages
CURATOR = 'input[aria-label="Curator"]'
# The most Curator fields the page ever held, and every title its sidebar navigation ever showed (the legacy
# runner's list: "app", the file names of pages/), noted at every change of its DOM from the first load on.
WATCH_FIRST_LOAD = """
window.curatorFieldsMax = 0;
window.navTitlesSeen = new Set();
new MutationObserver(() => {
  const count = document.querySelectorAll('input[aria-label="Curator"]').length;
  window.curatorFieldsMax = Math.max(window.curatorFieldsMax, count);
  document.querySelectorAll('[data-testid="stSidebarNav"] a').forEach(
    (link) => window.navTitlesSeen.add(link.innerText.trim().split("\\n").pop().trim()));
}).observe(document, {childList: true, subtree: true, characterData: true});
"""
NAV_TITLES_SEEN = "Array.from(window.navTitlesSeen)"


@pytest.fixture
def fresh_server(request, tmp_path, monkeypatch):
    """A page in headless Chromium and the URL of a server that has not run the app yet (fixture store)."""
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does it)")
    db = request.getfixturevalue("loaded_db")
    monkeypatch.setenv("CURATION_BACKUP_INTERVAL_MIN", "0")  # no backup: not what is tested here
    models = tmp_path / "models"  # empty: the app ranks with BM25 alone
    models.mkdir()
    with app_server(db, models, tmp_path / "server.log") as url, chromium(tmp_path / "profile") as context:
        page = context.new_page()
        page.add_init_script(WATCH_FIRST_LOAD)
        yield url, page


def test_curator_name_typed_on_the_first_load_is_kept_across_pages(fresh_server):
    url, page = fresh_server
    page.goto(url)
    field = page.locator(CURATOR)
    field.wait_for(timeout=120_000)
    set_curator(page, "ana")  # as soon as the field shows: the first load may still be running
    wait_for_page(page)
    assert nav_titles(page) == TITLES

    open_page(page, "Annotate")  # waits until the Annotate run has redrawn the sidebar too
    expect(field).to_have_count(1)
    expect(field).to_have_value("ana")
    assert "Enter your name" not in page.get_by_test_id("stMain").inner_text()
    assert page.evaluate("window.curatorFieldsMax") == 1
    assert set(page.evaluate(NAV_TITLES_SEEN)) == set(TITLES)  # never the legacy runner's list, not for a moment


def test_a_page_opened_by_its_address_on_the_first_load_is_run_by_app_py(fresh_server):
    url, page = fresh_server
    page.goto(f"{url}/annotate")
    wait_for_page(page)
    assert page.locator("h1").first.inner_text().strip() == "Annotate"
    assert urlparse(page.url).path == "/annotate"
    assert nav_titles(page) == TITLES  # not Streamlit's list of the pages/ folder: app, annotate, common, ...
    field = page.locator(CURATOR)
    expect(field).to_have_count(1)  # app.py's sidebar: the page was reached through app.py

    set_curator(page, "bo")
    open_page(page, "Curate")
    expect(field).to_have_count(1)
    expect(field).to_have_value("bo")
    assert page.evaluate("window.curatorFieldsMax") == 1
    assert set(page.evaluate(NAV_TITLES_SEEN)) == set(TITLES)


def test_every_page_answers_at_its_own_address_and_the_root_opens_curate_at_curate(fresh_server):
    """Curate, the start page of a loaded store, has the address /curate like every page: opened by it, in the
    server's first run or any later one, no "Page not found" dialog shows; the root address forwards to it."""
    url, page = fresh_server
    dialog = page.get_by_role("dialog")
    for address, title, shown in [("/curate", "Curate", "/curate"), ("/", "Curate", "/curate"),
                                  ("/annotate", "Annotate", "/annotate"), ("/curate", "Curate", "/curate")]:
        page.goto(url + address)
        wait_for_page(page)
        page.wait_for_timeout(1000)  # the dialog comes with the run's navigation message; give it time to show
        assert page.locator("h1").first.inner_text().strip() == title, address
        assert urlparse(page.url).path == shown, address
        expect(dialog).to_have_count(0)
        assert nav_titles(page) == TITLES  # the root's forwarding page is not in the list
    link = page.get_by_test_id("stSidebarNav").get_by_role("link").filter(has=page.get_by_text("Curate", exact=True))
    assert urlparse(link.first.get_attribute("href")).path == "/curate"  # a bookmark of the link keeps working


def test_the_first_result_is_on_the_first_screen(fresh_server):
    """On a 900-px window the first result's title shows without scrolling, the curator's name typed (the
    search's own lines: linked concepts, query, suggestions, filters, the keys' row, all above it)."""
    url, page = fresh_server
    assert VIEWPORT["height"] == 900
    page.goto(f"{url}/curate")
    wait_for_page(page)
    set_curator(page, "ana")
    wait_for_page(page)
    search(page, "BRAF", "V600E")
    wait_for_page(page)
    top, bottom, window = first_result_title_box(page)
    assert page.evaluate("window.scrollY") == 0
    assert 0 < top and bottom < window, (top, bottom, window)
