"""Team mode in the app (AppTest, st.user seeded): the sign-in gate, a malformed [auth], roles in the navigation,
the Team page, an expired sign-in, and a team store opened in personal mode."""

from __future__ import annotations

import dataclasses
import html
import secrets
import time

import pytest
from streamlit.testing.v1 import AppTest

from curation import access
from curation.config import PROJECT_ROOT
from curation.errors import AccessDeniedError
from curation.grades import Grade
from curation.schemas import PO
from curation.store.opening import open_store
from curation.store.team import list_people, list_role_changes
from curation.workflows import curate, team

APP = str(PROJECT_ROOT / "app.py")
AUTH = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": secrets.token_hex(24),
        "client_id": "workbench", "client_secret": "x",
        "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}


def _app(monkeypatch, db, user=None, auth=AUTH) -> AppTest:
    monkeypatch.setenv("CURATION_DB", str(db))
    monkeypatch.setenv("CURATION_IDENTITY", "oidc")
    at = AppTest.from_file(APP, default_timeout=60)
    if auth is not None:
        at.secrets["auth"] = auth
    at.user = user if user is not None else {"is_logged_in": False}
    return at.run()


def _user(email: str, **claims) -> dict:
    return {"is_logged_in": True, "iss": "https://idp.example.org", "sub": f"sub-{email}", "email": email,
            "email_verified": True, "name": email.split("@")[0].title(), "iat": int(time.time()), **claims}


def _said(at: AppTest, kind: str) -> list[str]:
    """What the app showed as ``kind`` (error, warning, ...), as read (messages are escaped for Markdown)."""
    return [html.unescape(str(e.value)) for e in getattr(at, kind)]


def test_a_missing_auth_section_is_an_error_not_personal_mode(monkeypatch, loaded_db):
    at = _app(monkeypatch, loaded_db, auth=None)
    assert not at.exception
    assert any("section of .streamlit/secrets.toml is missing" in e for e in _said(at, "error"))
    assert not [t for t in at.text_input if t.label == "Curator"]  # no typed name to fall back on
    assert not [b for b in at.button if b.label == "Sign in"]


def test_a_malformed_auth_section_says_which_key(monkeypatch, loaded_db):
    at = _app(monkeypatch, loaded_db, auth={**AUTH, "cookie_secret": "short"})
    assert any("cookie_secret has 5 characters" in e for e in _said(at, "error"))
    at = _app(monkeypatch, loaded_db, auth={k: v for k, v in AUTH.items() if k != "client_secret"})
    assert any("lacks client_secret" in e for e in _said(at, "error"))


def test_a_signed_out_visitor_sees_only_the_sign_in_button(monkeypatch, loaded_db):
    at = _app(monkeypatch, loaded_db)
    assert not at.exception
    assert [b.label for b in at.button] == ["Sign in"]
    assert not [t for t in at.text_input if t.label == "Curator"]
    assert "Curate" not in [t.value for t in at.title]


def test_first_sign_in_becomes_maintainer_and_the_team_page_grants_roles(monkeypatch, loaded_db):
    at = _app(monkeypatch, loaded_db, _user("ana@example.org"))
    assert not at.exception, at.exception
    assert "Signed in** as ana@example.org" in " ".join(m.value for m in at.sidebar.markdown)
    assert any("Roles: maintainer" in c.value for c in at.sidebar.caption)
    links = [link.proto.label for link in at.sidebar.get("page_link")]
    assert links == ["Curate", "Annotate", "Knowledge base", "Explore embeddings", "Train & evaluate", "Team"]
    # AppTest runs a page's script by itself (Streamlit's legacy pages mode); the session keeps the signed-in
    # identity app.py resolved, as a real server's runs do (app.py runs before every page there).
    at.switch_page("pages/team.py").run()
    assert [t.value for t in at.title] == ["Team"]
    at.text_input(key="team_person").input("ben@example.org")
    at.selectbox(key="team_role").select("curator")
    at.text_input(key="team_reason").input("joins the CIViC team")
    next(b for b in at.button if b.label == "Grant").click().run()
    assert any("ben@example.org is now curator" in s for s in _said(at, "success"))
    con = open_store(loaded_db)
    try:
        changes = [(c.actor, c.person, c.role, c.change, c.reason) for c in list_role_changes(con)]
    finally:
        con.close()
    assert changes == [("ana@example.org", "ben@example.org", "curator", "grant", "joins the CIViC team"),
                       ("ana@example.org", "ana@example.org", "maintainer", "grant", access.roles.FIRST_SIGN_IN)]


def test_the_allow_list_settings_keep_strangers_from_owning_the_store(monkeypatch, loaded_db):
    monkeypatch.setenv("CURATION_TEAM_DOMAINS", "example.org")
    monkeypatch.setenv("CURATION_TEAM_FIRST_MAINTAINER", "ana@example.org")
    at = _app(monkeypatch, loaded_db, _user("eve@evil.example"))
    assert not at.exception, at.exception
    assert any("evil.example" in e and "CURATION_TEAM_DOMAINS" in e for e in _said(at, "error"))
    at = _app(monkeypatch, loaded_db, _user("ben@example.org"))  # admitted, first, but not the named maintainer
    assert not any("Roles: maintainer" in c.value for c in at.sidebar.caption)
    at = _app(monkeypatch, loaded_db, _user("ana@example.org"))
    assert any("Roles: maintainer" in c.value for c in at.sidebar.caption)
    con = open_store(loaded_db)
    try:
        assert {p.person for p in list_people(con)} == {"ana@example.org", "ben@example.org"}
        assert access.roles.list_role_holders(con, access.Role.MAINTAINER) == ["ana@example.org"]
    finally:
        con.close()


def _team_store(db) -> None:
    con = open_store(db)
    try:
        ana = access.Identity("ana@example.org", access.IdentitySource.OIDC)
        access.sign_in(con, ana)
        team.grant_role(con, ana, "ben@example.org", "curator")
    finally:
        con.close()


def test_a_curator_sees_the_curate_page_and_not_train_or_team(monkeypatch, loaded_db):
    _team_store(loaded_db)
    at = _app(monkeypatch, loaded_db, _user("ben@example.org"))
    assert not at.exception, at.exception
    assert [t.value for t in at.title][:1] == ["Curate"]
    links = [link.proto.label for link in at.sidebar.get("page_link")]
    assert links == ["Curate", "Knowledge base", "Explore embeddings"]
    assert at.session_state["curator"] == "ben@example.org"


def test_a_signed_in_person_without_a_role_is_told_to_ask_a_maintainer(monkeypatch, loaded_db):
    _team_store(loaded_db)
    at = _app(monkeypatch, loaded_db, _user("eve@example.org"))
    assert not at.exception, at.exception
    assert any("hold no role in this team yet" in e for e in _said(at, "error"))
    assert not at.sidebar.get("page_link")


def test_an_expired_sign_in_asks_to_sign_in_again_and_records_nothing(monkeypatch, loaded_db):
    _team_store(loaded_db)
    at = _app(monkeypatch, loaded_db, _user("ben@example.org", iat=int(time.time()) - 13 * 3600))
    assert not at.exception, at.exception
    assert any("sign-in as ben@example.org has ended" in w for w in _said(at, "warning"))
    assert [b.label for b in at.button] == ["Sign in again"]
    assert "identity" not in at.session_state


def test_a_team_store_opened_in_personal_mode_refuses_typed_names(monkeypatch, loaded_db):
    _team_store(loaded_db)
    monkeypatch.setenv("CURATION_DB", str(loaded_db))
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert any("This store is a team store" in e for e in _said(at, "error"))
    con = open_store(loaded_db)
    try:
        with pytest.raises(AccessDeniedError, match="typed name cannot record decisions"):
            curate.record_judgement(con, None, "ben@example.org", PO, {"Gene": "BRAF"}, "1000001", Grade.PARTIAL)
    finally:
        con.close()


def test_a_sign_in_that_ends_mid_work_records_nothing(monkeypatch, loaded_db):
    _team_store(loaded_db)
    at = _app(monkeypatch, loaded_db, _user("ben@example.org"))
    at.selectbox(key="pick_Gene").set_value("BRAF")
    at.run()
    assert not at.exception, at.exception
    button = at.button(key="complete_1000001")
    assert not button.disabled  # signed in: the grade buttons are on
    # Time passes: the sign-in the session holds ends (what its expires_at, set from the token's iat, says then).
    at.session_state["identity"] = dataclasses.replace(at.session_state["identity"], expires_at=time.time() - 1)
    button.click().run()  # the click's callback runs with the session's identity, whose sign-in has ended
    assert not at.exception, at.exception
    # The card (a fragment, rerun alone) says why nothing was recorded; the next run through app.py asks for a
    # new sign-in (test_an_expired_sign_in_asks_to_sign_in_again_and_records_nothing: AppTest reruns the page's
    # script alone after its first run).
    assert any("sign-in as ben@example.org ended" in e and "Nothing was recorded" in e for e in _said(at, "error"))
    con = open_store(loaded_db)
    try:
        assert con.execute("SELECT count(*) FROM decisions").fetchall()[0][0] == 0
    finally:
        con.close()


def test_an_account_without_an_email_is_refused_and_can_sign_out(monkeypatch, loaded_db):
    at = _app(monkeypatch, loaded_db, {"is_logged_in": True, "sub": "4711", "iat": int(time.time())})
    assert not at.exception, at.exception
    assert any("email claim names nobody" in e for e in _said(at, "error"))
    assert [b.label for b in at.button] == ["Sign out"]
    assert "identity" not in at.session_state


def test_an_unknown_identity_setting_is_said_not_a_traceback(monkeypatch, loaded_db):
    monkeypatch.setenv("CURATION_DB", str(loaded_db))
    monkeypatch.setenv("CURATION_IDENTITY", "ldap")
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception, at.exception
    assert any("CURATION_IDENTITY is 'ldap'" in e for e in _said(at, "error"))
    assert not [t for t in at.text_input if t.label == "Curator"]


def test_an_account_presenting_another_accounts_email_is_refused(monkeypatch, loaded_db):
    _app(monkeypatch, loaded_db, _user("ana@example.org", sub="ana-1"))  # ana's account: the first sign-in
    at = _app(monkeypatch, loaded_db, _user("ana@example.org", sub="someone-else"))
    assert not at.exception, at.exception
    assert any("ana@example.org belongs to another account" in e for e in _said(at, "error"))
    assert [b.label for b in at.button] == ["Sign out"]
    assert "identity" not in at.session_state
