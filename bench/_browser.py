"""Drive the workbench in a real browser: headless Chromium and the curate flow.

Shared by ``tests/app/test_browser.py`` (one real-browser test of the main flow),
``tests/app/test_readme_first_run_browser.py`` and ``bench/first_run.py`` (the README's first command
on a fresh store), ``bench/app.py`` (latencies and the README's screenshots) and ``bench/load.py``,
so all drive the app the same way.

The server (``streamlit run app.py`` or the README's command) is started by :mod:`bench._server`.
Chromium is the system's (``/usr/bin/chromium``, the Debian package) driven by Playwright; no browser
is downloaded.

How "done" is told apart from "still running" without sleeping: Streamlit marks the app's root
with ``data-test-script-state`` (``running`` / ``notRunning``) and every element of the previous
run with ``data-stale="true"`` until the current run redraws it. A result counts as shown when
its element is not stale.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import BrowserContext, Locator, Page, expect, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from curation.grades import GRADE_LABELS, GRADES

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
VIEWPORT = {"width": 1280, "height": 900}
GRADE_LABEL = "Complete evidence"

# A node counts when the element container around it belongs to the current script run.
_FRESH_JS = """
const fresh = (node) => {
  const box = node.closest('[data-testid="stElementContainer"]');
  return box !== null && box.getAttribute('data-stale') !== 'true';
};
const app = document.querySelector('[data-testid="stApp"]');
const idle = () => !!app && app.getAttribute('data-test-script-state') === 'notRunning'
  && app.getAttribute('data-test-connection-state') === 'CONNECTED';
const shows = (text) => [...document.querySelectorAll('[data-testid="stMarkdownContainer"], [data-testid="stText"]')]
  .some((m) => fresh(m) && m.innerText.includes(text));
const links = () => [...document.querySelectorAll('a[href*="pubmed.ncbi.nlm.nih.gov"]')]
  .filter((a) => fresh(a) && !a.closest('blockquote'));  // a quoted supporting sentence's link is no result
"""
# Conditions polled in the page, each a JS expression over ``arg``.
_RESULTS = "shows(arg) && links().length > 0"  # the query line and a result link of this run
_SETTLED = "idle() && shows(arg)"  # the query line of this run, and the script finished
_PAGE_READY = (  # a page title (other than arg) drawn by this run, the script finished, nothing stale left
    "idle() && [...document.querySelectorAll('h1')].some((h) => fresh(h) && h.innerText.trim() !== arg) "
    "&& document.querySelectorAll('[data-stale=\"true\"]').length === 0"
)
_ENABLED = (  # the script finished, nothing stale left, and the button arg (a CSS selector) enabled
    "idle() && document.querySelectorAll('[data-stale=\"true\"]').length === 0 "
    "&& [...document.querySelectorAll(arg)].some((b) => fresh(b) && !b.disabled)"
)
_DECIDED = (  # the caption "<curator>: <grade>" in the card of one PMID (arg: [pmid, text])
    "(() => { const link = links().find((a) => a.innerText.trim() === 'PMID ' + arg[0]);"
    " const card = link && link.closest('[data-testid=\"stVerticalBlock\"]');"
    " return !!card && [...card.querySelectorAll('[data-testid=\"stCaptionContainer\"]')]"
    ".some((c) => fresh(c) && c.innerText.includes(arg[1])); })()"
)


# True once the app has been idle, with nothing stale, for ``arg`` ms in a row (window.__quietSince reset first).
_QUIET = """(arg) => {
  const now = performance.now();
  if (!idle() || document.querySelectorAll('[data-stale="true"]').length) { window.__quietSince = now; return false; }
  if (window.__quietSince === undefined) window.__quietSince = now;
  return now - window.__quietSince >= arg;
}"""


class AppError(AssertionError):
    """The app showed an exception instead of what was waited for."""


def _wait(page: Page, condition: str, arg=None, timeout_s: float = 120, polling: str | float = 100) -> None:
    """Wait until ``condition`` holds in the page; an exception the app shows fails at once, with its text."""
    script = f"""(arg) => {{ {_FRESH_JS}
      const error = [...document.querySelectorAll('[data-testid="stException"]')].find(fresh);
      if (error) return 'exception: ' + error.innerText;
      return ({condition}) ? 'ok' : false;
    }}"""
    outcome = page.wait_for_function(script, arg=arg, polling=polling, timeout=timeout_s * 1000).json_value()
    if outcome != "ok":
        raise AppError(f"the app at {page.url} shows an {outcome}")


@contextmanager
def chromium(user_data_dir: str | Path, niceness: int = 0) -> Iterator[BrowserContext]:
    """Headless system Chromium with a fresh profile in ``user_data_dir`` (1280×900 viewport).

    ``niceness`` > 0 runs the browser under ``nice``: a benchmark's browsers stand for curators' own
    machines and then yield the CPU to the server they load.
    """
    executable = CHROMIUM
    if niceness > 0:
        executable = Path(user_data_dir).with_name(Path(user_data_dir).name + "-chromium.sh")
        executable.write_text(f'#!/bin/sh\nexec nice -n {int(niceness)} {CHROMIUM} "$@"\n')
        executable.chmod(0o755)
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(user_data_dir),
            executable_path=str(executable),
            headless=True,
            args=list(CHROMIUM_ARGS),
            viewport=VIEWPORT,
        )
        try:
            yield context
        finally:
            context.close()


def open_app(page: Page, url: str, timeout_s: float = 120) -> None:
    """Load the app and wait until its first page is drawn (the first load builds the indexes)."""
    page.goto(url)
    wait_for_page(page, timeout_s)


def wait_for_page(page: Page, timeout_s: float = 120, not_title: str | None = None) -> None:
    """Wait until a page's title (other than ``not_title``) is drawn and its script has finished."""
    _wait(page, _PAGE_READY, not_title, timeout_s)


def open_page(page: Page, title: str, timeout_s: float = 120) -> None:
    """Go to another page through the sidebar; the session, and so the curator's name, is kept.

    Waiting for a title other than the current one keeps the old page, still drawn and
    not yet stale when the click lands, from passing for the new one.
    """
    current = page.locator("h1").first.inner_text().strip()
    nav = page.get_by_test_id("stSidebarNav").get_by_role("link")
    nav.filter(has=page.get_by_text(title, exact=True)).first.click()
    wait_for_page(page, timeout_s, not_title=current)


def set_curator(page: Page, name: str) -> None:
    """Type the curator's name in the sidebar; Enter commits it (the field's on_change)."""
    field = page.get_by_label("Curator", exact=True)
    field.fill(name)
    field.press("Enter")


def type_slot(page: Page, entity_type: str, value: str) -> None:
    """Type free text into a relation slot (a selectbox that accepts new options), not yet committed."""
    slot = page.get_by_role("combobox", name=entity_type, exact=True)
    slot.click()
    slot.press_sequentially(value)


def commit_slot(page: Page, entity_type: str) -> None:
    """Enter in a slot: the typed text becomes its value (even when an option merely starts with it)."""
    page.get_by_role("combobox", name=entity_type, exact=True).press("Enter")


def query_text(values: Mapping[str, str]) -> str:
    """The PO query the Curate page shows for a gene and, optionally, a variant."""
    if values.get("Variant"):
        return f"Treatment for gene {values['Gene']} and variant {values['Variant']}?"
    return f"Treatment for gene {values['Gene']}?"


def quiet(page: Page, hold_ms: int = 400, timeout_s: float = 120) -> None:
    """Wait until the app has stayed idle for ``hold_ms``: a run that ends with ``st.rerun()`` (a new search scrolls to
    its first result that way) looks finished for a moment between its two runs, and a slot typed into then loses
    what was typed."""
    page.evaluate("() => { window.__quietSince = undefined; }")
    page.wait_for_function(f"(arg) => {{ {_FRESH_JS} return ({_QUIET})(arg); }}", arg=hold_ms, polling=100,
                           timeout=timeout_s * 1000)


def search(page: Page, gene: str, variant: str, timeout_s: float = 120, shown_at: list | None = None) -> float:
    """Fill Gene, let its search finish, then type Variant; seconds from the last Enter to the first result.

    The clock starts just before Enter is pressed in the Variant slot and stops when the query
    line and a result link of the new run are both in the page (polled every animation frame).
    ``shown_at``, when given, gets that moment (``time.perf_counter``) appended.
    """
    type_slot(page, "Gene", gene)
    commit_slot(page, "Gene")
    _wait(page, _SETTLED, query_text({"Gene": gene}), timeout_s)
    quiet(page, timeout_s=timeout_s)
    type_slot(page, "Variant", variant)
    query = query_text({"Gene": gene, "Variant": variant})
    start = time.perf_counter()
    commit_slot(page, "Variant")
    _wait(page, _RESULTS, query, timeout_s, polling="raf")
    shown = time.perf_counter()
    if shown_at is not None:
        shown_at.append(shown)
    _wait(page, _SETTLED, query, timeout_s)
    quiet(page, timeout_s=timeout_s)
    return shown - start


def search_slots(page: Page, values: Mapping[str, str], timeout_s: float = 120) -> None:
    """Fill the slots of ``values`` in order, each committed and its search finished, until results show.

    The query line the page prints is :func:`query_text` of the slots filled so far (the typed names
    must be the canonical ones); after the last slot its run has shown a result link and finished.
    """
    query = ""
    for position, (slot, value) in enumerate(values.items(), start=1):
        type_slot(page, slot, value)
        commit_slot(page, slot)
        query = query_text(dict(list(values.items())[:position]))
        _wait(page, _SETTLED, query, timeout_s)
        quiet(page, timeout_s=timeout_s)
    _wait(page, _RESULTS, query, timeout_s)


def choose_option(page: Page, label: str, option: str, timeout_s: float = 60, within: Locator | None = None) -> None:
    """Pick ``option`` (its text as shown, exactly) in the selectbox labelled ``label`` (the one inside
    ``within`` when given: a form, when two forms have a field of that label).

    A rerun that lands while the list is open (a slow machine, a fragment refreshing) closes it,
    so the list is opened again until the option shows or ``timeout_s`` passes; the error then
    names the options that were offered.
    """
    deadline = time.monotonic() + timeout_s
    wanted = page.get_by_role("option", name=option, exact=True)
    while True:
        _wait(page, "idle()", None, max(deadline - time.monotonic(), 1))
        (within or page).get_by_role("combobox", name=label, exact=True).click()
        try:
            wanted.wait_for(state="visible", timeout=5000)
            wanted.click(timeout=5000)
            return
        except PlaywrightTimeout:
            offered = page.get_by_role("option").all_inner_texts()
            page.keyboard.press("Escape")
            if time.monotonic() > deadline:
                raise AssertionError(f"{label!r} offers no option {option!r}; it offers {offered}") from None


def result_pmids(page: Page) -> list[str]:
    """The PMIDs of the shown results, best first."""
    return page.evaluate(f"() => {{ {_FRESH_JS} return links().map((a) => a.innerText.replace('PMID', '').trim()); }}")


def first_result_title_box(page: Page) -> tuple[float, float, float]:
    """Where the first result's title line (its PMID link) is drawn, scrolled as the page is now: its top and
    bottom in the window, and the window's height (CSS pixels)."""
    return tuple(page.evaluate(f"""() => {{ {_FRESH_JS} const r = links()[0].getBoundingClientRect();
      return [r.top, r.bottom, window.innerHeight]; }}"""))


def wait_first_result_in_view(page: Page, timeout_s: float = 15) -> bool:
    """Wait until the first result's title line (its PMID link) lies wholly inside the window; whether it did."""
    try:
        page.wait_for_function(f"""() => {{ {_FRESH_JS} const a = links()[0]; if (!a) return false;
          const r = a.getBoundingClientRect(); return r.top > 0 && r.bottom < window.innerHeight; }}""",
                               polling=100, timeout=timeout_s * 1000)
    except PlaywrightTimeout:
        return False
    return True


def supporting_pmids(page: Page) -> list[str]:
    """The PMIDs of the supporting abstracts a chosen suggestion lists (its quoted sentences' links)."""
    return page.evaluate(f"""() => {{ {_FRESH_JS} return [...document.querySelectorAll('blockquote a[href*="pubmed"]')]
      .filter(fresh).map((a) => a.innerText.replace('PMID', '').trim()); }}""")


def marked_results(page: Page) -> list[int]:
    """For each shown result, best first: how many highlighted entities (``<mark>``) its card holds."""
    return page.evaluate(
        f"""() => {{ {_FRESH_JS} return links().map((a) => {{
          const card = a.closest('[data-testid="stVerticalBlock"]');
          return card ? card.querySelectorAll('mark').length : 0; }}); }}"""
    )


def wait_for_decision(page: Page, pmid: str, text: str, timeout_s: float = 60) -> None:
    """Wait until the card of ``pmid`` has a caption containing ``text`` (e.g. "decided — ana: Not relevant")."""
    _wait(page, _DECIDED, [pmid, text], timeout_s, polling="raf")


def grade_by_keyboard(page: Page, pmid: str, curator: str, key: str = "1", timeout_s: float = 60) -> float:
    """Grade the focused result (▶, ``pmid``) with its shortcut, no field focused; seconds until its caption shows it.

    Keys 1, 2, 3 are the grades, best first (pages/parts/common.py's ``GRADE_SHORTCUTS``). The focused
    row's buttons carry the shortcuts; they stay disabled until the curator's name has reached the
    server, which is waited for before the clock starts.
    """
    grade = GRADES[int(key) - 1]
    # The run that enables the buttons has finished (a run that drops the "enter your name" warning
    # moves every card, so the old, disabled buttons stay in the page, stale, until it ends).
    _wait(page, _ENABLED, f".st-key-{grade}_{pmid} button", timeout_s)
    page.evaluate("() => document.activeElement && document.activeElement.blur()")  # a shortcut is no typing
    start = time.perf_counter()
    page.keyboard.press(key)
    wait_for_decision(page, pmid, f"decided — {curator}: {GRADE_LABELS[grade]}", timeout_s)
    return time.perf_counter() - start


SAMPLE_OUTCOMES = ("Sample loaded from", "Nothing new", "No sample to load")  # pages/parts/sample_loader.py's messages


def load_sample(page: Page, timeout_s: float = 600) -> tuple[float, str]:
    """Click "Load the sample" on the page shown; seconds until the load's message shows, and that message.

    The message is the first line of the alert the load draws: "Sample loaded from ..." when
    rows were added, "Nothing new ..." or "No sample to load ..." otherwise.
    """
    button = page.get_by_role("button", name="Load the sample").first
    expect(button).to_be_enabled(timeout=timeout_s * 1000)
    start = time.perf_counter()
    button.click()
    _wait(page, "arg.some((text) => shows(text))", list(SAMPLE_OUTCOMES), timeout_s)
    elapsed = time.perf_counter() - start
    alerts = page.get_by_test_id("stAlert").all_inner_texts()
    message = next((a.strip() for a in alerts if any(o in a for o in SAMPLE_OUTCOMES)), "")
    return elapsed, message


def sidebar_text(page: Page) -> str:
    """What the sidebar says (the curator field's label, schema, store counts, model)."""
    return page.get_by_test_id("stSidebar").inner_text()


def decide(page: Page, pmid: str, curator: str, timeout_s: float = 60) -> float:
    """Click "Complete evidence" on one result; seconds until its card says "<curator>: Complete evidence".

    The app writes the decision in the button's callback, before the rerun that draws the
    caption, so the caption means the decision is in the store.
    """
    button = page.locator(f".st-key-complete_{pmid} button")
    # Disabled until the curator's name has reached the server: that wait is not the click's.
    expect(button).to_be_enabled(timeout=timeout_s * 1000)
    start = time.perf_counter()
    button.click(timeout=timeout_s * 1000)
    _wait(page, _DECIDED, [pmid, f"{curator}: {GRADE_LABEL}"], timeout_s, polling="raf")
    return time.perf_counter() - start


def nav_titles(page: Page) -> list[str]:
    """The title of every page in the sidebar navigation, in order."""
    texts = page.get_by_test_id("stSidebarNav").get_by_role("link").all_inner_texts()
    # A link's text is the icon's ligature name, then the title.
    return [text.strip().splitlines()[-1].strip() for text in texts]


def slug(title: str) -> str:
    """A file name for a page title: "Train & evaluate" → "train_evaluate"."""
    return re.sub(r"[^a-z0-9]+", "_", title.casefold()).strip("_")


def screenshot(page: Page, path: str | Path, full_page: bool = False, height: int | None = None) -> Path:
    """Save a PNG of the page (viewport, the whole page, or its top ``height`` pixels) and return its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # The pointer to the bottom-right corner: no hover effects (the sidebar's collapse arrow) in the picture.
    page.mouse.move(VIEWPORT["width"] - 2, VIEWPORT["height"] - 2)
    if height is not None:  # Streamlit scrolls its main block, not the document: a taller window shows more
        page.set_viewport_size({"width": VIEWPORT["width"], "height": height})
        try:
            page.screenshot(path=str(path))
        finally:
            page.set_viewport_size(VIEWPORT)
    else:
        page.screenshot(path=str(path), full_page=full_page)
    return path
