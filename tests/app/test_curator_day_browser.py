"""A curator's whole day in a real browser: ``streamlit run app.py`` on a store built from the real data
(CIViC + BioRED + BC5CDR), headless Chromium.

Ana types BRAF + V600E, grades three results by keyboard (each scrolled into view), undoes one, keeps
only the abstracts still undecided, saves the query; new abstracts are imported on the
Knowledge base page and the saved query says they are new and opens on them; she exports the CIViC
source suggestions and imports that file back as KB records; last, she clicks the first suggested
treatment and sees only the abstracts that relate it to BRAF V600E. The store is checked after each part.

With ``CURATION_WRITE_SCREENSHOTS=1`` the pictures of the run replace the README's (docs/screenshots/day_*.png).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from bench._browser import (
    CHROMIUM,
    choose_option,
    chromium,
    first_result_title_box,
    grade_by_keyboard,
    open_app,
    open_page,
    result_pmids,
    screenshot,
    search,
    set_curator,
    supporting_pmids,
    wait_first_result_in_view,
    wait_for_decision,
    wait_for_page,
)
from bench._server import app_server
from curation.grades import Grade
from curation.store.corpus import get_documents
from curation.store.decisions import list_decisions
from curation.store.kb import list_kb_records
from curation.store.opening import open_store

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "screenshots"
CURATOR = "ana"
# Abstracts written for this test (not from any corpus): they name the relation, so its search finds them.
NEW_ABSTRACTS = [
    {"pmid": "990000101", "title": "Dabrafenib in BRAF V600E mutant anaplastic thyroid cancer",
     "abstract": "Patients whose tumours carried BRAF V600E received dabrafenib and trametinib. "
                 "Responses were durable in BRAF V600E mutant disease."},
    {"pmid": "990000102", "title": "Vemurafenib resistance in BRAF V600E melanoma",
     "abstract": "BRAF V600E melanoma cells treated with vemurafenib acquired resistance through MAPK "
                 "reactivation."},
]


_IN_VIEW_JS = ("(() => { const r = document.querySelector('.st-key-focused-card').getBoundingClientRect();"
               " return r.top < window.innerHeight && r.bottom > 0; })()")
# Counts the script runs that end from now on, a card's fragment rerun included (Streamlit marks the app's
# root ``running`` for each); the mutation records keep a run too short for a poll to see.
_COUNT_RUNS_JS = """() => { window.runsEnded = 0; const app = document.querySelector('[data-testid="stApp"]');
  new MutationObserver((records) => { window.runsEnded += records.filter((r) => r.oldValue === 'running').length; })
    .observe(app, {attributes: true, attributeFilter: ['data-test-script-state'], attributeOldValue: true}); }"""


def _marked_in_view(page: Page) -> bool:
    """Whether the marked (▶) card overlaps the window."""
    return page.evaluate(f"() => {_IN_VIEW_JS}")


def _scrolled_to_marked(page: Page, timeout_s: float = 15) -> bool:
    """Wait for the smooth scroll to bring the marked (▶) card into the window; whether it did in ``timeout_s``."""
    try:
        page.wait_for_function(f"() => {_IN_VIEW_JS}", timeout=timeout_s * 1000)
    except PlaywrightTimeout:
        return False
    return True


def _commit_note(page: Page, note: Locator, text: str, tries: int = 3) -> None:
    """Type ``text`` in a card's Note field and commit it with Enter; returns once the card's rerun has ended.

    The runs are counted from before the typing, so a commit that comes another way (the field losing the
    cursor) counts too. A card redrawn between the typing and Enter (a run of the grade before it still
    ending, on a busy machine) comes back with the field empty: Enter then commits nothing and no run
    follows, so the text is typed again.
    """
    page.evaluate(_COUNT_RUNS_JS)
    for attempt in range(1, tries + 1):
        note.fill(text)
        expect(note).to_have_value(text)
        note.press("Enter")
        try:
            page.wait_for_function("() => window.runsEnded > 0", timeout=20_000)  # the card's rerun with the note
            break
        except PlaywrightTimeout:
            if attempt == tries:
                state = page.evaluate("() => document.querySelector('[data-testid=\"stApp\"]')"
                                      ".getAttribute('data-test-script-state')")
                raise AssertionError(f"no rerun after the note was typed {tries} times; the field holds "
                                     f"{note.input_value()!r}, the app's script state is {state!r}") from None
    expect(note).to_have_value(text)  # the rerun kept it


def _upload(form: Locator, path: Path) -> None:
    """Put ``path`` in the form's file field and wait until its upload has finished (its chip offers "Remove",
    not "Cancel upload"): a form sent before that has no file, and the page imports nothing."""
    form.locator('input[type="file"]').set_input_files(str(path))
    expect(form.get_by_role("button", name=f"Remove {path.name}", exact=True)).to_be_visible(timeout=60_000)


def _open_filters(page: Page) -> None:
    page.get_by_text("Filter and sort", exact=True).click()
    expect(page.get_by_text("In the KB", exact=True)).to_be_visible()


def _card_caption(page: Page, pmid: str) -> str:
    card = page.locator('[data-testid="stVerticalBlock"]', has=page.get_by_role("link", name=f"PMID {pmid}"))
    return card.last.inner_text()


def _annotate_braf_abstracts(db: Path) -> None:
    """Annotate the abstracts that name BRAF as an ingest through the app does (mentions and relation pairs in
    one transaction); the rest stay unannotated, which keeps the test short."""
    from curation.entities.annotation import Annotator
    from curation.relations.concept_index import annotate_documents
    from curation.workflows.entities import dictionary_matcher

    con = open_store(db)
    try:
        pmids = [p for (p,) in con.execute("SELECT pmid FROM documents WHERE abstract LIKE '%BRAF%' OR title LIKE "
                                           "'%BRAF%' ORDER BY pmid").fetchall()]
        report = annotate_documents(con, Annotator(dictionary_matcher(con)), pmids)
        assert report.annotated == len(pmids) >= 3 and not report.failed, report.summary()
    finally:
        con.close()


def test_a_curators_day_in_a_real_browser(tmp_path, real_store):
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does it)")
    db, models = real_store
    _annotate_braf_abstracts(db)
    shots = tmp_path / "screenshots"
    new_file = tmp_path / "new_abstracts.jsonl"
    new_file.write_text("".join(json.dumps(a) + "\n" for a in NEW_ABSTRACTS))
    downloaded = tmp_path / "civic_source_suggestions.csv"

    with app_server(db, models, tmp_path / "server.log") as url, chromium(tmp_path / "profile") as context:
        page = context.new_page()
        open_app(page, url)
        set_curator(page, CURATOR)
        search(page, "BRAF", "V600E")
        everything = result_pmids(page)
        assert len(everything) >= 4, everything
        assert wait_first_result_in_view(page), "the new search's first result was not scrolled into view"
        top, bottom, window = first_result_title_box(page)  # on the first screen, suggestions and all above it
        assert 0 < top and bottom < window, (top, bottom, window)

        # Three grades by keyboard, each on the result j moved the mark to (the page scrolls to it): 1, 2, 1.
        pmids = everything[1:4]
        page.get_by_role("heading", name="Curate").click()  # no text field has the cursor
        grades = {pmids[0]: "1", pmids[1]: "2", pmids[2]: "1"}
        for pmid, key in grades.items():
            page.keyboard.press("j")
            expect(page.locator(".st-key-focused-card")).to_contain_text(f"PMID {pmid}", timeout=30_000)
            wait_for_page(page)
            assert _scrolled_to_marked(page), f"the marked card of PMID {pmid} is not in view"
            grade_by_keyboard(page, pmid, CURATOR, key)
            assert _marked_in_view(page), f"PMID {pmid} left the view when it was graded"
        screenshot(page, shots / "day_graded.png")

        # Undo the last one (u): its card no longer carries Ana's grade.
        page.keyboard.press("u")
        expect(page.get_by_text(f"Undone: PMID {pmids[2]}", exact=False)).to_be_visible(timeout=30_000)
        wait_for_page(page)
        assert f"{CURATOR}: Complete evidence" not in _card_caption(page, pmids[2])
        wait_for_decision(page, pmids[0], f"{CURATOR}: Complete evidence")

        # Two grades by mouse, each rerunning its own card alone; a note on the first then reruns that card,
        # which still shows its grade (it was graded after the search that drew it).
        first = everything[0]
        for pmid in (first, pmids[2]):
            page.locator(f'.st-key-not_relevant_{pmid}:not([data-stale="true"]) button').click()
            wait_for_decision(page, pmid, f"{CURATOR}: Not relevant")
        card = page.locator('[data-testid="stVerticalBlock"]', has=page.get_by_role("link", name=f"PMID {first}"))
        _commit_note(page, card.last.get_by_label("Note", exact=True), "no treatment named")
        wait_for_page(page)
        wait_for_decision(page, first, f"decided — {CURATOR}: Not relevant")
        page.get_by_role("heading", name="Curate").click()  # the keys act again (no text field has the cursor)

        # What is left to judge: the filter keeps the undecided abstracts.
        _open_filters(page)
        page.get_by_role("radiogroup", name="Decided").get_by_text("undecided", exact=True).click()
        expect(page.get_by_role("link", name=f"PMID {pmids[0]}", exact=True)).to_have_count(0, timeout=60_000)
        wait_for_page(page)
        assert result_pmids(page) == [p for p in everything if p not in (*pmids, first)]
        screenshot(page, shots / "day_filtered.png")

        # Save the query.
        page.get_by_role("button", name="Save this query").click()
        expect(page.get_by_text("Saved: it will say what is new", exact=False)).to_be_visible(timeout=30_000)
        wait_for_page(page)

        # New abstracts arrive (imported on the Knowledge base page) ...
        open_page(page, "Knowledge base")
        form = page.get_by_test_id("stForm").filter(has=page.get_by_text("Import abstracts", exact=True))
        choose_option(page, "Format", "jsonl", within=form)
        _upload(form, new_file)
        form.get_by_role("button", name="Import abstracts").click()
        expect(page.get_by_text("2 added", exact=False)).to_be_visible(timeout=300_000)
        wait_for_page(page, 300)

        # ... and the saved query says so and opens on them.
        open_page(page, "Curate")
        saved = page.get_by_text("Saved queries (1, 1 with new abstracts)", exact=True)
        expect(saved).to_be_visible(timeout=120_000)
        saved.click()
        expect(page.get_by_text("Gene = BRAF · Variant = V600E — 2 new since your last look")).to_be_visible()
        page.locator('[class*="st-key-open_saved_"] button').click()
        expect(page.get_by_text("2 abstracts added since your last look at this saved query", exact=False)) \
            .to_be_visible(timeout=300_000)
        wait_for_page(page, 300)
        assert sorted(result_pmids(page)) == sorted(a["pmid"] for a in NEW_ABSTRACTS)
        screenshot(page, shots / "day_saved_query.png", height=1900)  # the note and the new abstracts

        # Export the source suggestions CIViC's form asks for, and import them back as KB records.
        open_page(page, "Knowledge base")
        expect(page.get_by_text("CIViC source suggestions: 2 rows", exact=False)).to_be_visible(timeout=60_000)
        with page.expect_download() as download:
            page.get_by_role("button", name="CIViC source suggestions (CSV)").click()
        download.value.save_as(downloaded)
        screenshot(page, shots / "day_export.png")
        form = page.get_by_test_id("stForm").filter(has=page.get_by_text("Import a knowledge base", exact=True))
        choose_option(page, "Format", "civic-suggestions", within=form)
        _upload(form, downloaded)
        form.get_by_role("button", name="Import knowledge base").click()
        expect(page.get_by_text("2 added", exact=False)).to_be_visible(timeout=120_000)
        wait_for_page(page)

        # Suggested treatments for BRAF V600E: a chip keeps only the abstracts that relate it to the query.
        open_page(page, "Curate")
        # The slots kept BRAF + V600E while another page was open (they live in the session and the address).
        expect(page.get_by_text("Query: Treatment for gene BRAF and variant V600E?")).to_be_visible(timeout=120_000)
        assert "Gene=BRAF" in page.url and "Variant=V600E" in page.url
        expect(page.get_by_text("Suggested treatment", exact=False).first).to_be_visible(timeout=120_000)
        wait_for_page(page)
        chips = page.locator(".st-key-suggestion_pick button").filter(has_text="paper")  # not the help icon
        assert chips.count() >= 2, "fewer than two suggested treatments for BRAF V600E"
        chosen = chips.first.inner_text()
        chips.first.click()
        expect(page.get_by_text("abstracts that relate", exact=False)).to_be_visible(timeout=60_000)
        wait_for_page(page)
        supporting = supporting_pmids(page)
        assert supporting and sorted(result_pmids(page)) == sorted(set(supporting)), (chosen, supporting)
        screenshot(page, shots / "day_suggestions.png", height=1400)

    with open(downloaded, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert sorted(r["pubmed_id"] for r in rows) == sorted(pmids[:2])
    assert {(r["gene"], r["variant"]) for r in rows} == {("BRAF", "V600E")}
    # The server is gone, so the store can be opened here (DuckDB: one process per file).
    con = open_store(db, read_only=True)
    try:
        decisions = list_decisions(con, include_superseded=True)
        active = {(d.pmid, d.grade) for d in decisions if d.superseded_by is None}
        assert {(pmids[0], Grade.COMPLETE), (pmids[1], Grade.PARTIAL), (first, Grade.NOT_RELEVANT),
                (pmids[2], Grade.NOT_RELEVANT)} == active  # pmids[2]'s first grade was undone, then it was rejected
        assert all(d.curator == CURATOR for d in decisions)
        assert {d.pmid for d in get_documents(con, [a["pmid"] for a in NEW_ABSTRACTS])} == \
            {a["pmid"] for a in NEW_ABSTRACTS}
        reimported = [r for r in list_kb_records(con, "PO") if r.pmid in set(pmids[:2])
                      and r.source != "civic"]
        assert sorted(r.pmid for r in reimported) == sorted(pmids[:2])
    finally:
        con.close()
    if os.environ.get("CURATION_WRITE_SCREENSHOTS"):  # set to refresh the README's pictures; CI leaves them alone
        for shot in shots.glob("day_*.png"):
            shutil.copyfile(shot, SHOTS / shot.name)
