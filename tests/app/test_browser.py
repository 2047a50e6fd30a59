"""One real-browser test of the main flow: ``streamlit run app.py`` on a store built from the real data,
headless Chromium types BRAF + V600E, accepts the first abstract, and the decision is in the store; then,
in a fresh session, BRAF + "Val600Glu" (the three-letter notation) is linked to V600E and finds the same
abstracts, which write "V600E".

The same server is then killed: two more abstracts are accepted, each click counting as acknowledged when
the card says "ana: Complete evidence" (the app writes the decision in the button's callback, before the
rerun that draws that caption), and the server's whole process group is SIGKILLed. The three decisions the
page confirmed are in the store, which opens again (the dead server's lock is gone, its WAL replays). One
server and one first search serve both checks: the first search on the real store is most of the cost.
"""

from __future__ import annotations

import os
import signal

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from bench._browser import (
    CHROMIUM,
    chromium,
    commit_slot,
    decide,
    open_app,
    query_text,
    result_pmids,
    screenshot,
    search,
    set_curator,
    type_slot,
    wait_for_page,
)
from bench._server import _launch, _stop, _wait_healthy, free_port
from curation.grades import Grade
from curation.ops.recovery import wal_path
from curation.store.corpus import get_documents
from curation.store.decisions import list_decisions
from curation.store.opening import open_store

pytestmark = pytest.mark.browser

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _search_linked(page: Page, values: dict[str, str], linked: dict[str, str], timeout_s: float = 120) -> None:
    """Type each slot of ``values`` and wait for the query line of the ``linked`` names the page searched for."""
    for slot, typed in values.items():
        type_slot(page, slot, typed)
        commit_slot(page, slot)
        shown = {s: linked[s] for s in list(values)[: list(values).index(slot) + 1]}
        expect(page.get_by_text(f"Query: {query_text(shown)}", exact=True)).to_be_visible(timeout=timeout_s * 1000)
        wait_for_page(page, timeout_s)


def _wait_for_the_smooth_scroll(page: Page, timeout_s: float = 15) -> None:
    """Wait until the marked (▶) card overlaps the window, at most ``timeout_s`` (the caller asserts it does)."""
    try:
        page.wait_for_function("() => { const r = document.querySelector('.st-key-focused-card')"
                               ".getBoundingClientRect(); return r.top < window.innerHeight && r.bottom > 0; }",
                               timeout=timeout_s * 1000)
    except PlaywrightTimeout:
        pass


def test_curate_braf_v600e_in_a_real_browser_and_the_decisions_survive_kill_9(tmp_path, real_store):
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does it)")
    db, models = real_store  # models: empty, BM25 alone
    shots = tmp_path / "screenshots"
    env = {**os.environ, "CURATION_DB": str(db), "CURATION_MODELS_DIR": str(models),
           "CURATION_BACKUPS_DIR": str(tmp_path / "backups")}
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = _launch(port, env, tmp_path / "server.log")  # not app_server: this test kills it
    try:
        assert _wait_healthy(server, url, tmp_path / "server.log", 120), "port taken; run again"
        with chromium(tmp_path / "profile") as context:
            page = context.new_page()
            open_app(page, url)
            set_curator(page, "ana")
            search(page, "BRAF", "V600E")  # waits for the query line and a PMID link of this query
            pmids = result_pmids(page)
            assert pmids, "no result for BRAF V600E"
            screenshot(page, shots / "curate_results.png", full_page=True)
            decide(page, pmids[0], "ana")  # waits for "ana: Complete evidence" on that result
            screenshot(page, shots / "curate_decided.png", full_page=True)
            expect(page.get_by_text("Mentions all query concepts (", exact=False)).to_be_visible()

            # j moves the mark down the results and the page follows it; "?" lists the shortcuts.
            page.get_by_role("heading", name="Curate").click()  # no text field has the cursor
            steps = min(len(pmids) - 1, 6)
            marked = page.locator(".st-key-focused-card")
            for step in range(1, steps + 1):
                page.keyboard.press("j")
                expect(marked).to_contain_text(f"PMID {pmids[step]}", timeout=30_000)  # one key, one move
                wait_for_page(page)
            _wait_for_the_smooth_scroll(page)
            box = page.evaluate("() => { const r = document.querySelector('.st-key-focused-card')"
                                ".getBoundingClientRect(); return [r.top, r.bottom, window.innerHeight]; }")
            assert box[0] < box[2] and box[1] > 0, f"the marked card is not in view: {box}"
            page.keyboard.press("?")
            expect(page.get_by_role("dialog")).to_contain_text("mark the next · previous abstract")
            wait_for_page(page)  # the run that opened it has ended: a late delta of it would draw the dialog again
            page.keyboard.press("Escape")
            expect(page.get_by_role("dialog")).to_have_count(0, timeout=30_000)  # closed: the page is not inert

            # A name written another way is linked to its concept and finds the abstracts that write the canonical
            # one.
            linked_page = context.new_page()
            open_app(linked_page, url)
            _search_linked(linked_page, {"Gene": "BRAF", "Variant": "Val600Glu"}, {"Gene": "BRAF", "Variant": "V600E"})
            expect(linked_page.get_by_text("variant · V600E · confidence 1.00 · notation")).to_be_visible()
            linked = result_pmids(linked_page)
            screenshot(linked_page, shots / "curate_linked.png", full_page=True)
            assert linked == pmids, "Val600Glu does not find what V600E finds"
            first = linked_page.locator('[data-testid="stVerticalBlock"]',
                                        has=linked_page.get_by_role("link", name=f"PMID {pmids[0]}"))
            assert "V600E" in first.last.inner_text()  # the abstract writes the canonical notation

            # Two more decisions the page confirms, then kill -9: no shutdown, no checkpoint.
            confirmed = pmids[:3]
            assert len(confirmed) == 3
            for pmid in confirmed[1:]:
                decide(page, pmid, "ana")  # returns once the page shows the decision
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=30)
    finally:
        _stop(server)
    assert server.returncode == -signal.SIGKILL
    assert wal_path(db).exists()  # the decisions were in the WAL only, not yet checkpointed

    con = open_store(db)  # the dead server's lock is gone; the WAL replays
    try:
        decisions = list_decisions(con, include_superseded=True)
        expected = sorted(("ana", p, Grade.COMPLETE) for p in confirmed)
        assert sorted((d.curator, d.pmid, d.grade) for d in decisions) == expected
        (decision,) = [d for d in decisions if d.pmid == pmids[0]]  # the first one, made with the search above
        assert (decision.curator, decision.grade, decision.pmid) == ("ana", Grade.COMPLETE, pmids[0])
        assert dict(decision.query_entities) == {"Gene": "BRAF", "Variant": "V600E"}
        assert decision.query == "Treatment for gene BRAF and variant V600E?"
        assert decision.superseded_by is None
        assert [d.pmid for d in get_documents(con, [decision.pmid])] == [decision.pmid]
    finally:
        con.close()
    for name in ("curate_results.png", "curate_decided.png", "curate_linked.png"):
        data = (shots / name).read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 20_000, f"{name}: {len(data)} bytes"
