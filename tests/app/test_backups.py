"""The app backs the store up when the newest backup is older than the interval (pages/parts/common.py): in a server
thread started once a page is drawn and begun a while later, so no page waits for it; a failure is said on the page
runs after it."""

from __future__ import annotations

import time

from streamlit.testing.v1 import AppTest

from curation.config import PROJECT_ROOT
from curation.ops.backup import list_backups, verify_backup
from curation.workflows import serving

APP = str(PROJECT_ROOT / "app.py")


def _runs_until(at: AppTest, done, timeout_s: float = 60.0) -> None:
    """Run the page again until ``done()`` (the backup runs in a thread of its own)."""
    deadline = time.monotonic() + timeout_s
    while not done():
        assert time.monotonic() < deadline, "the backup did not end in time"
        time.sleep(0.1)
        at.run()


def test_the_app_backs_the_store_up_when_due(loaded_db, tmp_path, monkeypatch):
    monkeypatch.setattr(serving, "BACKUP_DELAY_S", 0.5)
    monkeypatch.setenv("CURATION_BACKUPS_DIR", str(tmp_path / "backups"))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception and not at.warning
    _runs_until(at, lambda: list_backups(tmp_path / "backups" / "app"))  # one folder per store, named after it
    (first,) = list_backups(tmp_path / "backups" / "app")
    assert verify_backup(first) == [] and first.counts["documents"] == 2
    at.run()
    assert not at.warning
    assert list_backups(tmp_path / "backups" / "app") == [first]  # not due again within 30 minutes


def test_a_failing_backup_is_a_warning_and_the_page_still_works(loaded_db, tmp_path, monkeypatch):
    monkeypatch.setattr(serving, "BACKUP_DELAY_S", 0.0)
    (tmp_path / "not_a_folder").write_text("")
    monkeypatch.setenv("CURATION_BACKUPS_DIR", str(tmp_path / "not_a_folder"))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    _runs_until(at, lambda: any("Automatic backup failed" in w.value for w in at.warning))
    assert at.title[0].value == "Curate"
