"""Team mode in the app: who is signed in, and a navigation that follows their roles.

Personal mode (``CURATION_IDENTITY=personal``, the default) draws nothing here and keeps the typed name.
Team mode resolves the person on every run, before any page: from Streamlit's OIDC login (``st.user``) or from
a trusted proxy's header (``st.context.headers``); a session without one sees a sign-in button, or why it is
refused, and nothing else. What the person may *do* is checked again by every write workflow
(:mod:`curation.access`); the navigation only keeps pages they cannot use out of sight, and a page's address
opened anyway says why it is closed.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import duckdb
import streamlit as st

from curation.config import Settings, load_settings
from curation.errors import USER_ERRORS, CurationError, SignInExpiredError
from curation.workflows import team
from pages.parts.addresses import with_root_forwarding
from pages.parts.highlight import escape_text

SESSION = "identity"  # session key: the signed-in person's Identity (set on every run, read by callbacks)
NOTED = "identity_noted"  # session key: the name whose sign-in was noted in the store this session
# session key: when this session first saw its proxy sign-in. Kept when a sign-in ends (only a new session,
# a reloaded page, starts another), so an ended one stays ended on the next run.
PROXY_SINCE = "identity_proxy_since"


def _forget(keep_name: bool = False) -> None:
    """Drop the session's signed-in identity (and the name it set, unless ``keep_name``: personal mode's typed
    name stays as it was)."""
    for key in (SESSION, NOTED) if keep_name else (SESSION, "curator", NOTED):
        st.session_state.pop(key, None)


def _auth_section() -> dict | None:
    """secrets.toml's ``[auth]`` (None when there is no secrets file); a file that does not parse is an error."""
    try:
        return st.secrets.to_dict().get("auth")
    except FileNotFoundError as exc:  # Streamlit's StreamlitSecretNotFoundError: no file, or one it cannot read
        if getattr(exc, "error_id", "") == "no-secrets-found" or "No secrets found" in str(exc):
            return None
        raise CurationError(f"CURATION_IDENTITY=oidc, but the secrets cannot be read: {exc}") from None


def _sign_in_page(provider: str | None, message: str = "") -> None:
    st.title("Curation workbench")
    if message:
        st.warning(escape_text(message))
    st.write("This workbench is shared by a team: sign in to curate, annotate or maintain it.")
    if st.button("Sign in", type="primary", key="sign_in"):
        if provider:
            st.login(provider)
        else:
            st.login()
    st.stop()


def _oidc(con: duckdb.DuckDBPyConnection, settings: Settings) -> team.SignedIn:
    provider = team.oidc_provider(_auth_section())  # a missing or malformed [auth] stops here, saying why
    if not st.user.is_logged_in:
        _forget()
        _sign_in_page(provider)
    try:
        return team.sign_in_oidc(con, st.user.to_dict(), settings, noted=st.session_state.get(NOTED, ""))
    except SignInExpiredError as exc:
        _forget()
        st.warning(escape_text(str(exc)))
        st.button("Sign in again", type="primary", on_click=st.logout)
        st.stop()


def session(con: duckdb.DuckDBPyConnection | None) -> team.SignedIn | None:
    """The signed-in person (team mode), or None (personal mode). Stops the run with the reason when nobody is
    signed in or the set-up is wrong: team mode never falls back to typed names."""
    try:
        settings = load_settings()
    except USER_ERRORS:  # a bad CURATION_* value: pages.parts.common.connection has said which
        _forget()
        st.stop()
    if not settings.team:
        _forget(keep_name=True)  # personal mode: a session never carries a signed-in identity
        if con is not None and (problem := team.personal_mode_problem(con, settings)):
            st.error(problem)
        return None
    if con is None:
        st.stop()
    try:
        if settings.identity == "oidc":
            signed = _oidc(con, settings)
        else:
            # Every value of every header (a repeated identity header is refused), and when this session first
            # saw the sign-in: the headers are the handshake's, the same on every run, and it ends hours after.
            # Not st.context.ip_address: behind nginx it is the browser's (X-Forwarded-For), never the proxy's.
            headers = {name: st.context.headers.get_all(name) for name in st.context.headers}
            since = st.session_state.setdefault(PROXY_SINCE, time.time())
            signed = team.sign_in_proxy(con, headers, str(st.get_option("server.address") or ""), settings,
                                        since=since, noted=st.session_state.get(NOTED, ""))
    except USER_ERRORS as exc:
        _forget()
        st.title("Curation workbench")
        st.error(f"Team mode: {escape_text(str(exc))}")
        if settings.identity == "oidc" and st.user.is_logged_in:  # e.g. an account without an email: try another
            st.button("Sign out", key="sign_out_refused", on_click=st.logout)
        st.stop()
    st.session_state[SESSION] = signed.identity
    st.session_state["curator"] = signed.identity.name
    st.session_state[NOTED] = signed.identity.name
    return signed



def sidebar_identity(signed: team.SignedIn) -> None:
    """Who is signed in, with their roles, in place of the Curator text field; and how to sign out."""
    st.markdown(f"**Signed in** as {escape_text(signed.identity.name)}")
    st.caption(f"Roles: {escape_text(', '.join(sorted(r.value for r in signed.roles)) or 'none yet')}")
    if load_settings().identity == "oidc":
        st.button("Sign out", key="sign_out", on_click=st.logout)


def _closed(title: str, message: str):
    def page() -> None:
        st.title(title)
        st.error(escape_text(message), icon=":material/lock:")

    return page


def navigation(con: duckdb.DuckDBPyConnection, signed: team.SignedIn, pages: Sequence[tuple[str, str, str]]):
    """The pages the person's roles open, as sidebar links; every other page keeps its address and, opened,
    says why it is closed. ``pages``: (script, title, icon), in app.py's order. Returns what ``st.navigation``
    returns (the caller runs it)."""
    allowed = [team.page_allowed(signed, Path(script).stem) for script, _, _ in pages]
    first = allowed.index(True) if any(allowed) else None
    ask = team.maintainers(con) if not all(allowed) else []
    routed, links = [], []
    for (script, title, icon), ok in zip(pages, allowed, strict=True):
        path = Path(script).stem
        if ok:
            page = st.Page(script, title=title, icon=icon, url_path=path)
            links.append(page)
        else:
            page = st.Page(_closed(title, team.page_refusal(signed, path, title, ask)), title=title, icon=icon,
                           url_path=path)
        routed.append(page)
    if first is None:
        message = (f"You are signed in as {signed.identity.name}, but hold no role in this team yet. Ask a "
                   "maintainer to grant you one on the Team page.")
        routed.insert(0, st.Page(_closed("Curation workbench", message), title="Welcome", url_path="welcome"))
    start = routed[0] if first is None else routed[first]
    chosen = st.navigation(with_root_forwarding(routed, start), position="hidden")
    with st.sidebar:
        for page in links:
            st.page_link(page)
    return chosen
