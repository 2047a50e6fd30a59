"""The app backs the store up when the newest backup is older than the interval (pages/common.py)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from curation.config import PROJECT_ROOT
from curation.ops.backup import list_backups, verify_backup

APP = str(PROJECT_ROOT / "app.py")


def test_the_app_backs_the_store_up_when_due(loaded_db, tmp_path, monkeypatch):
    monkeypatch.setenv("CURATION_BACKUPS_DIR", str(tmp_path / "backups"))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception and not at.warning
    (first,) = list_backups(tmp_path / "backups" / "app")  # one folder per store, named after it
    assert verify_backup(first) == [] and first.counts["documents"] == 2
    at.run()
    assert list_backups(tmp_path / "backups" / "app") == [first]  # not due again within 30 minutes


def test_a_failing_backup_is_a_warning_and_the_page_still_works(loaded_db, tmp_path, monkeypatch):
    (tmp_path / "not_a_folder").write_text("")
    monkeypatch.setenv("CURATION_BACKUPS_DIR", str(tmp_path / "not_a_folder"))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    assert any("Automatic backup failed" in w.value for w in at.warning)
    assert at.title[0].value == "Curate"
