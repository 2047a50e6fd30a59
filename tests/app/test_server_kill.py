"""kill -9 of a real ``streamlit run app.py`` right after the Curate page confirmed decisions: they are in
the store, which opens again (the dead server's lock is gone, its WAL replays).

Headless Chromium clicks "Complete evidence" on three abstracts; each click counts as acknowledged when
the card says "ana: Complete evidence" (the app writes the decision in the button's callback, before
the rerun that draws that caption). The server's whole process group is then SIGKILLed.
"""

from __future__ import annotations

import os
import signal

import pytest

from bench._browser import CHROMIUM, chromium, decide, open_app, result_pmids, search, set_curator
from bench._server import _launch, _stop, _wait_healthy, build_store, free_port
from curation.grades import Grade
from curation.ops.recovery import wal_path
from curation.store.decisions import list_decisions
from curation.store.opening import open_store

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_decisions_the_page_confirmed_survive_kill_9_of_the_server(tmp_path, data_dir):
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does it)")
    db = tmp_path / "store.duckdb"
    build_store(db, data_dir)
    (tmp_path / "models").mkdir()  # empty: BM25 alone
    env = {**os.environ, "CURATION_DB": str(db), "CURATION_MODELS_DIR": str(tmp_path / "models"),
           "CURATION_BACKUPS_DIR": str(tmp_path / "backups")}
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = _launch(port, env, tmp_path / "server.log")
    try:
        assert _wait_healthy(server, url, tmp_path / "server.log", 120), "port taken; run again"
        with chromium(tmp_path / "profile") as context:
            page = context.new_page()
            open_app(page, url)
            set_curator(page, "ana")
            search(page, "BRAF", "V600E")
            confirmed = result_pmids(page)[:3]
            assert len(confirmed) == 3
            for pmid in confirmed:
                decide(page, pmid, "ana")  # returns once the page shows the decision
            os.killpg(server.pid, signal.SIGKILL)  # no shutdown, no checkpoint
            server.wait(timeout=30)
    finally:
        _stop(server)
    assert server.returncode == -signal.SIGKILL
    assert wal_path(db).exists()  # the decisions were in the WAL only, not yet checkpointed

    con = open_store(db)  # the dead server's lock is gone; the WAL replays
    try:
        decisions = list_decisions(con, include_superseded=True)
    finally:
        con.close()
    expected = sorted(("ana", p, Grade.COMPLETE) for p in confirmed)
    assert sorted((d.curator, d.pmid, d.grade) for d in decisions) == expected
