"""Daily use in a real browser (issue 45's walk-through, without the restart timing): on the real data's store a
curator adds a relation schema on the Knowledge base page, searches it on Curate, reloads the page and finds her name,
the schema, the typed slot and the results still there; a visit to another page keeps them too, and every page's
sidebar names what ranks the schema in the same words. After a restart of the server the same address shows the
same results (bench/first_run.py times it)."""

from __future__ import annotations

import re
import time
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect

from bench._browser import (
    CHROMIUM,
    choose_option,
    chromium,
    commit_slot,
    open_app,
    open_page,
    result_pmids,
    set_curator,
    type_slot,
    wait_for_page,
)
from bench._server import app_server

pytestmark = pytest.mark.browser

CURATOR = "rosa"
SCHEMA = "Disease-Drug"
DISEASE = "melanoma"
QUERY = f"Drugs that treat {DISEASE}?"


def _results(page: Page) -> list[str]:
    expect(page.get_by_text(f"Query: {QUERY}")).to_be_visible(timeout=180_000)
    wait_for_page(page, 180)
    expect(page.locator('a[href*="pubmed"]').first).to_be_visible(timeout=60_000)
    return result_pmids(page)


def _model_line(page: Page) -> str:
    line = page.get_by_test_id("stSidebar").get_by_text(re.compile("^Model: ")).first
    expect(line).to_be_visible(timeout=60_000)
    return line.inner_text().strip()


def test_a_schema_added_on_the_page_is_searched_and_a_reload_keeps_what_was_typed(tmp_path, real_store):
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does it)")
    db, models = real_store
    with chromium(tmp_path / "profile") as context, app_server(db, models, tmp_path / "server.log") as url:
        page = context.new_page()
        open_app(page, url)
        set_curator(page, CURATOR)
        wait_for_page(page)
        open_page(page, "Knowledge base")
        form = page.get_by_test_id("stForm").filter(has=page.get_by_text("Save schema"))
        form.get_by_label("Name", exact=True).fill(SCHEMA)
        form.get_by_label(re.compile("^Entity types")).fill("Disease, Drug")
        form.get_by_label(re.compile("^Answer")).fill("Drug")
        form.get_by_label(re.compile("^Query templates")).fill("Drugs that treat {Disease}?")
        form.get_by_label(re.compile("^Kinds")).fill("Disease=disease, Drug=chemical")
        form.get_by_role("button", name="Save schema").click()
        expect(page.get_by_text(f"Saved {SCHEMA}")).to_be_visible(timeout=60_000)
        choose_option(page, "Relation schema", SCHEMA)  # offered at once, no restart
        wait_for_page(page)
        open_page(page, "Curate")
        type_slot(page, "Disease", DISEASE)
        commit_slot(page, "Disease")
        first = _results(page)
        assert f"schema={SCHEMA}" in page.url and f"Disease={DISEASE}" in page.url and f"curator={CURATOR}" in page.url

        page.reload()  # a new session: the address brings back the name, the schema and the slot
        assert _results(page) == first
        expect(page.get_by_label("Curator", exact=True)).to_have_value(CURATOR)
        expect(page.get_by_role("combobox", name="Relation schema")).to_match_aria_snapshot(
            f'- combobox "Relation schema": {SCHEMA}')

        model_line = _model_line(page)
        assert model_line.startswith("Model: ")
        for title in ("Explore embeddings", "Knowledge base", "Train & evaluate"):  # another page, then back
            open_page(page, title)
            assert _model_line(page) == model_line, title  # one status, the same words on every page
        open_page(page, "Curate")
        assert _results(page) == first
        address = urlsplit(page.url)

    # A restart: a new server process on the same store; the address alone brings the search back.
    with chromium(tmp_path / "profile") as context, app_server(db, models, tmp_path / "restart.log") as url:
        page = context.new_page()
        started = time.monotonic()
        page.goto(f"{url.rstrip('/')}{address.path}?{address.query}")
        assert _results(page) == first
        print(f"results {time.monotonic() - started:.1f} s after the restarted server's first page was asked for")
        assert _model_line(page) == model_line
