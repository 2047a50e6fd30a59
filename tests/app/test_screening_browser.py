"""Screening a topic in a real browser (issue 44's "Done when"): on the real data's store (CIViC + BioRED +
BC5CDR), a curator opens the BC5CDR disease most often in chemical-induced-disease (CID) relations as a topic,
switches on "Screen this topic" and screens 30 abstracts by keyboard, each graded from BC5CDR's gold relations
(complete evidence when the abstract relates a chemical to that disease, not relevant otherwise). The page shows the
curve (a Plotly chart) with its numbers, the estimate, the stopping rule and the cards the last grade moved up; the
switch survives a visit to another page; after the app is restarted the topic continues at 30 read.
"""

from __future__ import annotations

import re
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from bench._browser import (
    CHROMIUM,
    choose_option,
    chromium,
    commit_slot,
    open_app,
    open_page,
    set_curator,
    type_slot,
    wait_for_page,
)
from bench._server import app_server
from curation.schemas import schema_from_dict
from curation.store.base import add_schema
from curation.store.decisions import decisions_for
from curation.store.opening import open_store

pytestmark = pytest.mark.browser

CURATOR = "lena"
SCREENED = 30
# A chemical-induced-disease schema: the disease typed, the chemical the answer.
CID = schema_from_dict({"name": "CID", "entity_types": ["Disease", "Chemical"], "answer": "Chemical",
                        "templates": ["Chemicals that induce {Disease}?"],
                        "kinds": {"Disease": "disease", "Chemical": "chemical"}})
CURVE = re.compile(r"After (\d+) read: (\d+) relevant found; the static order would have found ([\d.]+), a random "
                   r"order ([\d.]+)")


def _gold_topic(data_dir: Path) -> tuple[str, set[str]]:
    """The disease most often in BC5CDR's CID relations: its most written name, and the abstracts relating a
    chemical to it."""
    relations: dict[str, set[str]] = defaultdict(set)
    names: dict[str, Counter] = defaultdict(Counter)
    for path in sorted((data_dir / "bc5cdr").glob("*.PubTator.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            fields = line.split("\t")
            if len(fields) == 4 and fields[1] == "CID":
                relations[fields[3]].add(fields[0])
            elif len(fields) >= 6 and fields[4] == "Disease":
                names[fields[5]][fields[3]] += 1
    disease = max(relations, key=lambda d: (len(relations[d]), d))
    return names[disease].most_common(1)[0][0], relations[disease]


def _open_topic(page: Page, url: str, disease: str, switch: bool = True) -> None:
    """A fresh session: the curator, the CID schema, "Screen this topic" on, the disease typed."""
    open_app(page, url)
    set_curator(page, CURATOR)
    choose_option(page, "Relation schema", CID.name)
    wait_for_page(page)
    if switch:
        page.locator(".st-key-screening_input").get_by_text("Screen this topic").click()
        wait_for_page(page)
    type_slot(page, "Disease", disease)
    commit_slot(page, "Disease")


def _screened(page: Page, read: int, timeout_s: float = 120) -> None:
    """Wait until the page says ``read`` are screened and its run has ended."""
    expect(page.get_by_text(re.compile(rf"^Screened {read} of \d+"))).to_be_visible(timeout=timeout_s * 1000)
    wait_for_page(page, timeout_s)


def test_screening_a_bc5cdr_topic_by_keyboard_then_a_restart_continues_it(tmp_path, real_store, data_dir):
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does it)")
    started = time.perf_counter()
    db, models = real_store
    disease, relevant = _gold_topic(data_dir)
    con = open_store(db)
    try:
        add_schema(con, CID)
    finally:
        con.close()
    graded: dict[str, bool] = {}
    with chromium(tmp_path / "profile") as context:
        page = context.new_page()
        with app_server(db, models, tmp_path / "server.log") as url:
            _open_topic(page, url, disease)
            _screened(page, 0, timeout_s=180)  # the first open searches the topic
            card = page.locator('.st-key-screen-card a[href*="pubmed"]')
            for read in range(SCREENED):
                pmid = card.inner_text().replace("PMID", "").strip()
                assert pmid not in graded, f"PMID {pmid} came back after it was graded"
                graded[pmid] = pmid in relevant
                page.evaluate("() => document.activeElement && document.activeElement.blur()")  # keys, not typing
                page.keyboard.press("1" if graded[pmid] else "3")  # Complete evidence / Not relevant
                _screened(page, read + 1)
            expect(page.get_by_test_id("stPlotlyChart")).to_be_visible()
            numbers = CURVE.search(page.get_by_text(CURVE).inner_text())
            read, found, static, random_order = (int(numbers[1]), int(numbers[2]), float(numbers[3]),
                                                 float(numbers[4]))
            print(f"{disease}: after {read} read {found} relevant found; static order {static}, random {random_order}")
            assert (read, found) == (SCREENED, sum(graded.values()))
            # Both lines are expectations from the learner's own estimate of the unread (the page cannot know the
            # answer key); on this high-prevalence topic the curve is level with them, not above (issue 44's note).
            assert 0 < random_order <= SCREENED and 0 < static <= SCREENED, (static, random_order)
            expect(page.get_by_text("model estimate", exact=False)).to_be_visible()
            expect(page.get_by_text("Callaghan & Müller-Hansen 2020", exact=False)).to_be_visible()
            expect(page.get_by_text("read since the last relevant", exact=False)).to_be_visible()
            expect(page.get_by_text("Moved up after your last grade")).to_be_visible()
            # The switch is remembered when the curator visits another page and comes back.
            open_page(page, "Knowledge base")
            open_page(page, "Curate")
            expect(page.locator(".st-key-screening_input input")).to_be_checked()
        with app_server(db, models, tmp_path / "server-again.log") as url:  # a new process: nothing kept in memory
            _open_topic(page, url, disease)
            _screened(page, SCREENED)
            assert card.inner_text().replace("PMID", "").strip() not in graded
    con = open_store(db, read_only=True)
    try:
        decisions = decisions_for(con, CID, {"Disease": disease})
    finally:
        con.close()
    assert {d.pmid: d.grade == "complete" for d in decisions} == graded
    assert all('"screening"' in d.provenance and d.curator == CURATOR for d in decisions)
    print(f"screening browser test: {time.perf_counter() - started:.0f} s")
