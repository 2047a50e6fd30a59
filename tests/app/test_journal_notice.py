"""A store repaired from its decision journal says so on every page until a curator reads it (pages.parts.sidebar)."""

from __future__ import annotations

import secrets
import shutil
import time

from streamlit.testing.v1 import AppTest

from curation.config import PROJECT_ROOT
from curation.grades import Grade
from curation.schemas import PO
from curation.store.decisions import list_decisions, record_decision
from curation.store.journal import Journal
from curation.store.opening import open_store

APP = str(PROJECT_ROOT / "app.py")


def _copy_then_reopen(loaded_db, tmp_path, monkeypatch):
    """The store copied as it is (before.duckdb, its last checkpoint), reopened for a decision the copy lacks."""
    monkeypatch.setenv("CURATION_BACKUPS_DIR", str(tmp_path / "backups"))
    con = open_store(loaded_db)
    pmid = con.execute("SELECT min(pmid) FROM documents").fetchall()[0][0]
    con.execute("CHECKPOINT")
    con.close()
    shutil.copyfile(loaded_db, tmp_path / "before.duckdb")
    return open_store(loaded_db), pmid


def test_a_repair_is_shown_until_a_curator_reads_it(loaded_db, tmp_path, monkeypatch):
    con, pmid = _copy_then_reopen(loaded_db, tmp_path, monkeypatch)
    record_decision(con, "ana", PO, {"Gene": "BRAF", "Variant": "V600E"}, pmid, Grade.COMPLETE, note="<i>x</i>")
    con.close()
    shutil.copyfile(tmp_path / "before.duckdb", loaded_db)  # the store lost the acknowledged decision

    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    (warning,) = [w for w in at.warning if "decision journal" in w.value]
    assert "lost 1 decision" in warning.value and "put back" in warning.value
    at.session_state["curator"] = "ana"
    at.button(key="notice_1").click().run()
    assert not at.exception
    fresh = AppTest.from_file(APP, default_timeout=120)  # a new session: read once, shown no more
    fresh.run()
    assert not fresh.exception and not [w for w in fresh.warning if "decision journal" in w.value]
    con = open_store(loaded_db)
    assert [d.note for d in list_decisions(con)] == ["<i>x</i>"]
    assert con.execute("SELECT acknowledged_by FROM store_notices").fetchall() == [("ana",)]
    con.close()


def test_a_decision_never_confirmed_is_shown_as_recovered_never_confirmed(loaded_db, tmp_path, monkeypatch):
    con, pmid = _copy_then_reopen(loaded_db, tmp_path, monkeypatch)
    record_decision(con, "ana", PO, {"Gene": "BRAF", "Variant": "V600E"}, pmid, Grade.COMPLETE)
    con.close()
    # what a kill between the journal line and COMMIT leaves: the line, no acknowledgement, a store without it
    shutil.copyfile(tmp_path / "before.duckdb", loaded_db)
    (segment,) = Journal.beside(loaded_db).segments()
    segment.write_text("".join(line for line in segment.read_text().splitlines(keepends=True)
                               if '"op":"ack"' not in line))

    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    (warning,) = [w for w in at.warning if "decision journal" in w.value]
    assert "recovered, never confirmed" in warning.value and "no curator was told" in warning.value
    assert "had been told" not in warning.value


def test_on_a_team_store_only_a_maintainer_may_dismiss_a_repair_notice(loaded_db, monkeypatch):
    from curation import access
    from curation.store.reconcile import SQL_ADD_NOTICE
    from curation.workflows import team

    con = open_store(loaded_db)
    ana = access.Identity("ana@example.org", access.IdentitySource.OIDC)
    access.sign_in(con, ana)  # the first sign-in: maintainer
    team.grant_role(con, ana, "ben@example.org", "curator")
    con.execute(SQL_ADD_NOTICE, ["journal", "the decision journal put back 1 decision"])
    con.close()
    monkeypatch.setenv("CURATION_DB", str(loaded_db))
    monkeypatch.setenv("CURATION_IDENTITY", "oidc")

    def signed_in(email: str) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=120)
        at.secrets["auth"] = {"redirect_uri": "http://localhost:8501/oauth2callback",
                              "cookie_secret": secrets.token_hex(24),
                              "client_id": "workbench", "client_secret": "x",
                              "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}
        at.user = {"is_logged_in": True, "iss": "https://idp.example.org", "sub": f"sub-{email}", "email": email,
                   "email_verified": True, "name": email.split("@")[0], "iat": int(time.time())}
        return at.run()

    curator = signed_in("ben@example.org")
    assert not curator.exception, curator.exception
    assert [w for w in curator.warning if "decision journal" in w.value]
    assert not [b for b in curator.button if b.key == "notice_1"]  # shown, not dismissable by a curator
    maintainer = signed_in("ana@example.org")
    maintainer.button(key="notice_1").click().run()
    assert not maintainer.exception, maintainer.exception
    con = open_store(loaded_db)
    assert con.execute("SELECT acknowledged_by FROM store_notices").fetchall() == [("ana@example.org",)]
    con.close()
