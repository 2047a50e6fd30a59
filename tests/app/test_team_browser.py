"""Team mode in a real browser, against a real identity provider and a real Streamlit server.

OIDC: a local OpenID Connect provider (``oidc-provider-mock``, on 127.0.0.1) and ``streamlit run`` with an
``[auth]`` section pointing at it. Two people sign in through the actual login redirect (the app's button →
the provider's authorisation form → ``/oauth2callback`` → the app): ana, the first sign-in, becomes maintainer
and grants ben the curator role on the Team page; both judge the same abstract; ben's "Undo my last decision"
withdraws only his own; the Train & evaluate page is not in ben's navigation and its address tells him why;
the abstract's history shows both signed-in names; the store holds both decisions with their identity source.

Proxy header: the app in ``proxy`` mode; a browser whose requests carry what nginx and oauth2-proxy add
(X-Forwarded-For with the browser's address, the proxy's secret and email header) is signed in, and a direct
connection that forges the email header without the secret is refused; a proxy sign-in ends within its session
and a reload signs in again.
"""

from __future__ import annotations

import html
import json
import secrets

import pytest
from oidc_provider_mock import User, run_server_in_thread
from playwright.sync_api import Page, expect

from bench._browser import (
    CHROMIUM,
    GRADE_LABEL,
    chromium,
    decide,
    result_pmids,
    screenshot,
    search_slots,
    sidebar_text,
    wait_for_page,
)
from bench._server import app_server
from curation.store.opening import open_store
from curation.store.team import list_people, list_role_changes
from curation.workflows.ingestion import ingest_corpus, ingest_kb

pytestmark = pytest.mark.browser

ANA, BEN = "ana@example.org", "ben@example.org"
SECRET = secrets.token_hex(24)  # the proxy's, made up for the run
BROWSER_IP = "203.0.113.9"  # the browser's address as the proxy saw it (a documentation address)


@pytest.fixture(scope="module", autouse=True)
def _chromium_present():
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")


def _secrets(folder, provider_port: int):
    """A secrets.toml whose [auth] points at the local provider (secrets made up for the run)."""
    auth = {
        "redirect_uri": "http://127.0.0.1:{port}/oauth2callback",  # Streamlit fills in its own port
        "cookie_secret": secrets.token_hex(24),
        "client_id": "curation-workbench",
        "client_secret": secrets.token_hex(8),
        "server_metadata_url": f"http://127.0.0.1:{provider_port}/.well-known/openid-configuration",
    }
    path = folder / "secrets.toml"
    path.write_text("[auth]\n" + "".join(f"{key} = {json.dumps(value)}\n" for key, value in auth.items()))
    return path


def _sign_in(page: Page, url: str, email: str) -> None:
    """Open the app, press its Sign in button, pick ``email`` on the provider's form; back in the app, signed in."""
    page.goto(url)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/oauth2/authorize**", timeout=60_000)
    page.get_by_role("button", name=email, exact=True).click()  # the provider's predefined user
    page.wait_for_url(f"{url}/**", timeout=60_000)
    expect(page.get_by_test_id("stSidebar")).to_contain_text(f"Signed in as {email}", timeout=120_000)
    wait_for_page(page)


def _nav(page: Page, count: int) -> list[str]:
    """The sidebar's page links (``count`` of them, waited for)."""
    links = page.get_by_test_id("stSidebar").get_by_test_id("stPageLink")
    expect(links).to_have_count(count, timeout=60_000)
    links = links.all_inner_texts()
    return [t.strip().splitlines()[-1].strip() for t in links]


def _history(page: Page, pmid: str) -> str:
    card = page.locator(f"a:text-is('PMID {pmid}')").first.locator(
        "xpath=ancestor::div[@data-testid='stVerticalBlock'][1]")
    card.get_by_text("Decisions on this abstract").click()
    return card.inner_text()


def test_two_people_sign_in_through_the_provider_and_their_roles_hold(tmp_path, fixtures):
    db, models, shots = tmp_path / "store.duckdb", tmp_path / "models", tmp_path / "screenshots"
    con = open_store(db)

    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    con.close()
    users = [User(sub=e, claims={"email": e, "email_verified": True, "name": e.split("@")[0].title()})
             for e in (ANA, BEN)]
    with run_server_in_thread(port=0, user_claims=users) as provider:
        secrets_file = _secrets(tmp_path, provider.server_port)
        env = {"CURATION_IDENTITY": "oidc", "CURATION_BACKUP_INTERVAL_MIN": "0",
               "CURATION_JOBS_DIR": str(tmp_path / "jobs"), "CURATION_CACHE_DIR": str(tmp_path / "cache")}
        with app_server(db, models, tmp_path / "server.log", extra_env=env,
                        extra_args=("--secrets.files", str(secrets_file))) as url:
            with chromium(tmp_path / "ana") as ana_browser:  # one browser at a time (one Playwright per thread)
                ana = ana_browser.new_page()
                _sign_in(ana, url, ANA)
                assert "Roles: maintainer" in sidebar_text(ana)
                assert _nav(ana, 6) == ["Curate", "Annotate", "Knowledge base", "Explore embeddings",
                                     "Train & evaluate", "Team"]
                # ana grants ben the curator role on the Team page.
                ana.get_by_test_id("stSidebar").get_by_text("Team", exact=True).click()
                expect(ana.locator("h1", has_text="Team")).to_be_visible(timeout=60_000)
                ana.get_by_label("Person (their sign-in email)").fill(BEN)
                ana.get_by_label("Reason (kept in the audit)").fill("joins the team")
                ana.get_by_role("button", name="Grant").click()
                expect(ana.get_by_text(f"{BEN} is now curator")).to_be_visible(timeout=60_000)
                wait_for_page(ana)
                expect(ana.get_by_test_id("stDataFrame").last).to_be_visible(timeout=60_000)
                ana.wait_for_timeout(500)  # the data grids draw on a canvas after they appear
                screenshot(ana, shots / "team.png")
                ana.get_by_test_id("stSidebar").get_by_text("Curate", exact=True).click()
                wait_for_page(ana, not_title="Team")
                search_slots(ana, {"Gene": "BRAF"})
                pmid = result_pmids(ana)[0]
                decide(ana, pmid, ANA)
            with chromium(tmp_path / "ben") as ben_browser:
                ben = ben_browser.new_page()
                _sign_in(ben, url, BEN)
                assert "Roles: curator" in sidebar_text(ben)
                assert _nav(ben, 3) == ["Curate", "Knowledge base", "Explore embeddings"]
                search_slots(ben, {"Gene": "BRAF"})
                decide(ben, pmid, BEN)
                history = _history(ben, pmid)
                assert f"{ANA} · {GRADE_LABEL}" in history and f"{BEN} · {GRADE_LABEL}" in history
                # ben's undo withdraws his decision, then finds nothing more of his: ana's stays.
                for toast in ("Undone: PMID", "Nothing to undo"):
                    ben.get_by_role("button", name="Undo my last decision").click()
                    expect(ben.get_by_test_id("stToast").filter(has_text=toast).first).to_be_visible(
                        timeout=60_000)
                # The Train & evaluate page's address opened anyway says why it is closed; nothing to activate.
                ben.goto(f"{url}/train")
                expect(ben.locator("h1", has_text="Train & evaluate")).to_be_visible(timeout=60_000)
                refusal = html.unescape(ben.get_by_test_id("stAlert").first.inner_text())
                assert "Train & evaluate is for the maintainer role" in refusal and BEN in refusal
                assert ben.get_by_role("button", name="Activate").count() == 0
                screenshot(ben, shots / "team_closed_page.png")
    con = open_store(db)
    try:
        rows = con.execute("SELECT curator, identity_source, pmid, superseded_by IS NULL FROM decisions "
                           "ORDER BY decision_id").fetchall()
        audit = [(c.actor, c.person, c.role, c.change) for c in list_role_changes(con)]
    finally:
        con.close()
    assert rows == [(ANA, "oidc", pmid, True), (BEN, "oidc", pmid, False)]
    assert audit == [(ANA, BEN, "curator", "grant"), (ANA, ANA, "maintainer", "grant")]


def test_proxy_mode_believes_the_proxy_and_refuses_a_forged_header(tmp_path, fixtures):
    db, models = tmp_path / "store.duckdb", tmp_path / "models"
    con = open_store(db)

    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    con.close()
    env = {"CURATION_IDENTITY": "proxy", "CURATION_PROXY_SECRET": SECRET, "CURATION_BACKUP_INTERVAL_MIN": "0"}
    with app_server(db, models, tmp_path / "server.log", extra_env=env) as url:
        with chromium(tmp_path / "proxied") as proxied:
            # What the proxies add to every request they forward, as the README's nginx block and oauth2-proxy
            # send them: nginx's X-Forwarded-For (the browser's address) and X-Forwarded-Proto, oauth2-proxy's
            # address appended to X-Forwarded-For and its email header, and the secret.
            proxied.set_extra_http_headers({"X-Forwarded-For": f"{BROWSER_IP}, 127.0.0.1", "X-Forwarded-Proto": "http",
                                            "X-Curation-Proxy-Secret": SECRET, "X-Forwarded-Email": "Cat@Example.org"})
            page = proxied.new_page()
            page.goto(url)
            expect(page.get_by_test_id("stSidebar")).to_contain_text("Signed in as cat@example.org", timeout=120_000)
            # the first sign-in of an empty team store; the roles line is drawn after the name (waited for, under load)
            expect(page.get_by_test_id("stSidebar")).to_contain_text("Roles: maintainer", timeout=30_000)
        with chromium(tmp_path / "forged") as forged:
            # A direct connection that forges the email header and a loopback X-Forwarded-For, without the
            # proxy's secret, is refused.
            forged.set_extra_http_headers({"X-Forwarded-For": "127.0.0.1", "X-Forwarded-Email": "cat@example.org"})
            intruder = forged.new_page()
            intruder.goto(url)
            expect(intruder.get_by_test_id("stAlert").first).to_contain_text("did not come through the sign-in proxy",
                                                                               timeout=120_000)
            assert "Signed in" not in intruder.locator("body").inner_text()
    con = open_store(db)
    try:
        assert [(p.person, p.source) for p in list_people(con)] == [("cat@example.org", "proxy")]
    finally:
        con.close()


def test_a_proxy_sign_in_ends_in_its_session_and_a_reload_signs_in_again(tmp_path):
    """The proxy's headers are the same on every run of a session: the sign-in still ends, counted from when the
    session first saw it, and only a new session (a reload, through the proxy) starts another."""
    db, models = tmp_path / "store.duckdb", tmp_path / "models"
    open_store(db).close()
    hours = 0.01  # 36 s: long enough for the first page on a busy machine, short enough to wait out
    env = {"CURATION_IDENTITY": "proxy", "CURATION_PROXY_SECRET": SECRET, "CURATION_BACKUP_INTERVAL_MIN": "0",
           "CURATION_SIGN_IN_HOURS": str(hours)}
    with app_server(db, models, tmp_path / "server.log", extra_env=env) as url:
        with chromium(tmp_path / "proxied") as proxied:
            proxied.set_extra_http_headers({"X-Forwarded-For": f"{BROWSER_IP}, 127.0.0.1",
                                            "X-Curation-Proxy-Secret": SECRET, "X-Forwarded-Email": "dan@example.org"})
            page = proxied.new_page()
            page.goto(url)
            sidebar = page.get_by_test_id("stSidebar")
            expect(sidebar).to_contain_text("Signed in as dan@example.org", timeout=int(hours * 3600 * 1000))
            wait_for_page(page)
            page.wait_for_timeout(hours * 3600 * 1000)  # the sign-in has ended now, whenever it began
            sidebar.get_by_text("Knowledge base", exact=True).click()  # a run of the same session
            expect(page.get_by_test_id("stAlert").first).to_contain_text(
                "sign-in as dan@example.org has ended; reload the page", timeout=60_000)
            page.reload()  # a new session through the proxy: a new sign-in
            expect(page.get_by_test_id("stSidebar")).to_contain_text("Signed in as dan@example.org", timeout=60_000)
