"""Searches while the learned parts work after a load (``searches_while_training`` of bench/first_run.py).

In the app the learned parts begin once the curators pause (15 s after the load's message, then 10 s without a
search or grade: ``curation.workflows.first_models``); then the relation scorer's job exports the store, the base
version is built in the server's process and the recogniser's job annotates. These searches are what a curator meets
meanwhile: no goal, reported beside the first search's.
"""

from __future__ import annotations

import re
import time

from bench._browser import open_app, search

SEARCH_TIMEOUT_S = 300.0
# Searches made while the learned parts work after the load (in the app they begin once the curators pause: 15 s
# after the load's message, then 10 s without a search or grade): seconds after the first search, and the query.
LATER_SEARCHES = ((35.0, ("EGFR", "L858R")), (50.0, ("KRAS", "G12D")), (65.0, ("PIK3CA", "H1047R")))
BACKGROUND_LINE = re.compile(r"^.* in the background \(\d+ s\): .*$", re.MULTILINE)


def later_searches(page, url: str, since: float, timeout_s: float = SEARCH_TIMEOUT_S) -> list[dict]:
    """The searches of :data:`LATER_SEARCHES`, each in a fresh session (the app opened again: its slots empty) from
    typing the gene to the pair's results drawn, with what the sidebar said the background work was doing when it
    began (no goal: what a curator meets meanwhile)."""
    out = []
    for after_s, (gene, variant) in LATER_SEARCHES:
        time.sleep(max(0.0, since + after_s - time.perf_counter()))
        open_app(page, url, timeout_s)
        sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
        doing = [line.strip() for line in BACKGROUND_LINE.findall(sidebar)]
        shown: list[float] = []
        typing = time.perf_counter()
        search(page, gene, variant, timeout_s=timeout_s, shown_at=shown)
        out.append({"after_first_search_s": after_s, "query": f"{gene} {variant}",
                    "results_s": round(shown[0] - typing, 3), "background": doing})
    return out
