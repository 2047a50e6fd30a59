"""bench/backup.py's kill -9 of the app server and its timed restart, on the fixture store (bench/_app_restart.py)."""

from __future__ import annotations

import pytest

from bench._app_restart import app_kill_campaign
from bench._browser import CHROMIUM
from curation.store.opening import open_store

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_decisions_survive_a_kill_and_the_restart_is_timed(loaded_db, tmp_path):
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does it)")
    result = app_kill_campaign(loaded_db, tmp_path, kills=1)
    assert result["lost"] == 0 and result["acknowledged"] >= 2  # one round before the kill, one after
    assert result["first_page_s"]["n"] == 1
    (health, page, first_search, search), = result["per_kill_s"]
    assert 0 < health <= page <= first_search and 0 < search <= first_search
    assert list((tmp_path / "app-cache" / "lexicon").glob("excluded-*.json"))  # the first start kept them
    con = open_store(loaded_db, read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM decisions").fetchall()[0][0] == result["acknowledged"]
    finally:
        con.close()
