"""One real-browser test of the main flow: ``streamlit run app.py`` on a store built from the real data,
headless Chromium types BRAF + V600E, accepts the first abstract, and the decision is in the store."""

from __future__ import annotations

import pytest

from bench._browser import (
    CHROMIUM,
    app_server,
    build_store,
    chromium,
    decide,
    open_app,
    result_pmids,
    screenshot,
    search,
    set_curator,
)
from curation import store
from curation.grades import Grade

pytestmark = pytest.mark.browser

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_curate_braf_v600e_in_a_real_browser(tmp_path, data_dir):
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does it)")
    db = tmp_path / "store.duckdb"
    build_store(db, data_dir)
    models = tmp_path / "models"  # empty: the app ranks with BM25 alone
    models.mkdir()
    shots = tmp_path / "screenshots"

    with app_server(db, models, tmp_path / "server.log") as url, chromium(tmp_path / "profile") as context:
        page = context.new_page()
        open_app(page, url)
        set_curator(page, "ana")
        search(page, "BRAF", "V600E")  # waits for the query line and a PMID link of this query
        pmids = result_pmids(page)
        assert pmids, "no result for BRAF V600E"
        screenshot(page, shots / "curate_results.png", full_page=True)
        decide(page, pmids[0], "ana")  # waits for "ana: Complete evidence" on that result
        screenshot(page, shots / "curate_decided.png", full_page=True)

    # The server is gone, so the store can be opened here (DuckDB: one process per file).
    con = store.open_store(db, read_only=True)
    try:
        (decision,) = store.list_decisions(con, include_superseded=True)
        assert (decision.curator, decision.grade, decision.pmid) == ("ana", Grade.COMPLETE, pmids[0])
        assert dict(decision.query_entities) == {"Gene": "BRAF", "Variant": "V600E"}
        assert decision.query == "Treatment for gene BRAF and variant V600E?"
        assert decision.superseded_by is None
        assert [d.pmid for d in store.get_documents(con, [decision.pmid])] == [decision.pmid]
    finally:
        con.close()
    for name in ("curate_results.png", "curate_decided.png"):
        data = (shots / name).read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 20_000, f"{name}: {len(data)} bytes"
