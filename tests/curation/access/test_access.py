"""Team mode: identities, roles, and the role check on every write path (workflow layer)."""

from __future__ import annotations

import json
import secrets
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from curation import access
from curation.access import Identity, IdentitySource
from curation.config import Settings
from curation.errors import AccessDeniedError, CurationError, SignInExpiredError
from curation.grades import Grade
from curation.learning.feedback import resolve_decisions
from curation.review.agreement import disagreements, open_disagreements
from curation.review.provenance import decision_history
from curation.schemas import PO
from curation.store.base import stats
from curation.store.decisions import get_decision, list_decisions
from curation.store.jobs import list_jobs
from curation.store.kb import list_kb_records
from curation.store.opening import open_store
from curation.store.team import list_accounts, list_people, list_role_changes, list_roles_of
from curation.workflows import (
    annotation_queue,
    curate,
    entities,
    export,
    linker_training,
    maintenance,
    quickstart,
    recogniser_training,
    relation_scoring,
    retrain,
    team,
    versions,
    watch,
    worklist,
)
from curation.workflows.ingestion import ingest_corpus, ingest_kb

BRAF = {"Gene": "BRAF", "Variant": "V600E"}
SECRET = "s" * 24


def person(name: str, source: IdentitySource = IdentitySource.OIDC, **kw) -> Identity:
    return Identity(name, source, **kw)


ANA, BEN, CAT, DAN = (person(n) for n in ("ana@example.org", "ben@example.org", "cat@example.org",
                                          "dan@example.org"))


@pytest.fixture
def loaded(con, fixtures):
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    return con


@pytest.fixture
def teamed(loaded):
    """A team store: ana (first sign-in: maintainer), ben curator, cat annotator, dan adjudicator."""
    assert access.sign_in(loaded, ANA) == {access.Role.MAINTAINER}
    team.grant_role(loaded, ANA, BEN.name, "curator")
    team.grant_role(loaded, ANA, CAT.name, "annotator")
    team.grant_role(loaded, ANA, DAN.name, "adjudicator")
    return loaded


def _decisions(con) -> int:
    return con.execute("SELECT count(*) FROM decisions").fetchall()[0][0]


def test_personal_mode_is_unchanged_typed_names_do_everything_and_are_marked_self_declared(loaded):
    assert not access.is_team_store(loaded)
    d = curate.record_judgement(loaded, None, "ana", PO, BRAF, "1000001", Grade.PARTIAL)
    assert (d.curator, d.identity_source) == ("ana", "self-declared")
    assert list_decisions(loaded)[0].identity_source == "self-declared"
    assert curate.undo_last(loaded, "ana").decision_id == d.decision_id
    assert access.roles_of(loaded, "anyone") == frozenset(access.Role)


def test_first_sign_in_of_an_empty_team_store_becomes_maintainer_with_an_audit_row(loaded):
    assert access.sign_in(loaded, ANA) == {access.Role.MAINTAINER}
    assert access.sign_in(loaded, BEN) == frozenset()  # the second person gets nothing by signing in
    audit = list_role_changes(loaded)
    assert [(c.actor, c.person, c.role, c.change, c.reason) for c in audit] == [
        ("ana@example.org", "ana@example.org", "maintainer", "grant", access.roles.FIRST_SIGN_IN)]
    assert {p.person for p in list_people(loaded)} == {ANA.name, BEN.name}


def _sign_in_at_once(con, people: list[Identity]) -> list[BaseException]:
    """Sign ``people`` in at the same moment, each on its own cursor of ``con`` (as the app's sessions do)."""
    import threading

    start = threading.Barrier(len(people))
    errors: list[BaseException] = []

    def one(who: Identity) -> None:
        cursor = con.cursor()
        try:
            start.wait()
            access.sign_in(cursor, who)
        except BaseException as exc:  # a failed thread must fail the test, not vanish
            errors.append(exc)
        finally:
            cursor.close()

    threads = [threading.Thread(target=one, args=(p,)) for p in people]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_concurrent_first_sign_ins_make_exactly_one_maintainer(tmp_path):
    """The "no roles yet" check and the grant must not interleave: six people at once, several times."""
    for trial in range(8):
        con = open_store(tmp_path / f"race{trial}.duckdb")
        people = [person(f"p{i}@example.org") for i in range(6)]
        assert _sign_in_at_once(con, people) == []
        holders = access.roles.list_role_holders(con, access.Role.MAINTAINER)
        assert len(holders) == 1, f"trial {trial}: {holders}"
        assert len(list_role_changes(con)) == 1 and len(list_people(con)) == len(people)
        con.close()


def test_the_first_maintainer_setting_decides_who_owns_an_empty_team_store(loaded):
    assert access.sign_in(loaded, BEN, first_maintainer="ana@example.org") == frozenset()  # a stranger first
    assert not access.is_team_store(loaded)
    assert access.sign_in(loaded, ANA, first_maintainer="ANA@example.org") == {access.Role.MAINTAINER}


def test_team_domains_refuse_people_from_elsewhere_before_anything_is_written(loaded):
    stranger = person("eve@evil.example")
    with pytest.raises(AccessDeniedError, match="evil.example"):
        access.sign_in(loaded, stranger, domains=("example.org",))
    assert list_people(loaded) == [] and not access.is_team_store(loaded)
    assert access.sign_in(loaded, ANA, domains=("Example.org",)) == {access.Role.MAINTAINER}
    with pytest.raises(AccessDeniedError):
        access.sign_in(loaded, person("eve@sub.example.org"), domains=("example.org",))  # a domain, not a suffix


def test_team_allow_list_settings(monkeypatch):
    monkeypatch.setenv("CURATION_TEAM_FIRST_MAINTAINER", " Ana@Example.org ")
    monkeypatch.setenv("CURATION_TEAM_DOMAINS", "example.org, Lab.example.net ,")
    settings = Settings()
    assert settings.team_first_maintainer == "ana@example.org"
    assert settings.team_domains == ("example.org", "lab.example.net")
    monkeypatch.setenv("CURATION_TEAM_DOMAINS", "@example.org")
    with pytest.raises(CurationError, match="CURATION_TEAM_DOMAINS"):
        Settings()


def test_role_changes_are_audited_and_only_maintainers_make_them(teamed):
    with pytest.raises(AccessDeniedError, match="ben@example.org cannot grant and revoke roles.*maintainer"):
        team.grant_role(teamed, BEN, "eve@example.org", "maintainer")
    made = team.grant_role(teamed, ANA, "Eve@Example.org ", "curator", reason="joined")
    assert made == "eve@example.org is now curator"
    assert team.grant_role(teamed, ANA, "eve@example.org", "curator") == "eve@example.org was already curator"
    assert team.revoke_role(teamed, ANA, "eve@example.org", "curator", reason="left") == \
        "eve@example.org is no longer curator"
    newest = list_role_changes(teamed)[:2]
    assert [(c.change, c.person, c.role, c.actor, c.actor_source, c.reason) for c in newest] == [
        ("revoke", "eve@example.org", "curator", ANA.name, "oidc", "left"),
        ("grant", "eve@example.org", "curator", ANA.name, "oidc", "joined")]
    with pytest.raises(CurationError, match="only maintainer"):
        team.revoke_role(teamed, ANA, ANA.name, "maintainer")
    with pytest.raises(CurationError, match="'admin' is not a role"):
        team.grant_role(teamed, ANA, "eve@example.org", "admin")
    rows = {r["person"]: r["roles"] for r in team.team_rows(teamed)}
    assert rows[BEN.name] == "curator" and rows[ANA.name] == "maintainer"


def test_decide_undo_and_withdraw_follow_the_roles(teamed):
    d = curate.record_judgement(teamed, None, BEN, PO, BRAF, "1000001", Grade.COMPLETE)
    assert (d.curator, d.identity_source) == (BEN.name, "oidc")
    for who in (CAT, DAN):  # an annotator or adjudicator does not judge search results
        with pytest.raises(AccessDeniedError, match="cannot record decisions"):
            curate.record_judgement(teamed, None, who, PO, BRAF, "1000001", Grade.PARTIAL)
    # A curator's undo reaches only their own decisions; withdrawing another's is refused and changes nothing.
    curate.record_judgement(teamed, None, ANA, PO, BRAF, "1000002", Grade.PARTIAL)
    ana_last = list_decisions(teamed, curator=ANA.name)[-1]
    with pytest.raises(AccessDeniedError, match="withdraw another person's decision"):
        curate.withdraw(teamed, BEN, ana_last.decision_id)
    assert get_decision(teamed, ana_last.decision_id).superseded_by is None
    assert curate.undo_last(teamed, BEN).decision_id == d.decision_id
    assert curate.undo_last(teamed, BEN) is None  # ana's decision is not ben's to undo
    assert get_decision(teamed, ana_last.decision_id).superseded_by is None
    # An adjudicator may withdraw anyone's.
    assert curate.withdraw(teamed, DAN, ana_last.decision_id).decision_id == ana_last.decision_id
    assert get_decision(teamed, ana_last.decision_id).superseded_by == ana_last.decision_id


def test_annotators_label_adjudicators_resolve(teamed):
    with pytest.raises(AccessDeniedError, match="grade pairs in the annotation queue"):
        annotation_queue.record_label(teamed, BEN, PO, BRAF, "1000001", Grade.COMPLETE)
    annotation_queue.record_label(teamed, CAT, PO, BRAF, "1000001", Grade.COMPLETE)
    curate.record_judgement(teamed, None, BEN, PO, BRAF, "1000001", Grade.NOT_RELEVANT)
    disagreement = disagreements(list_decisions(teamed))[0]
    before = _decisions(teamed)
    for who in (BEN, CAT):
        with pytest.raises(AccessDeniedError, match="resolve disagreements"):
            annotation_queue.adjudicate(teamed, who, PO, disagreement, Grade.COMPLETE)
    assert _decisions(teamed) == before
    final = annotation_queue.adjudicate(teamed, DAN, PO, disagreement, Grade.COMPLETE)
    assert (final.curator, final.identity_source) == (DAN.name, "oidc")
    assert {d.curator for d in list_decisions(teamed)} == {BEN.name, CAT.name, DAN.name}


def test_a_curator_cannot_adjudicate_by_typing_adjudication_as_a_note(teamed):
    annotation_queue.record_label(teamed, CAT, PO, BRAF, "1000001", Grade.COMPLETE)
    curate.record_judgement(teamed, None, BEN, PO, BRAF, "1000001", Grade.NOT_RELEVANT)
    (disagreement,) = disagreements(list_decisions(teamed))
    with pytest.raises(AccessDeniedError, match="resolve disagreements"):
        annotation_queue.adjudicate(teamed, BEN, PO, disagreement, Grade.PARTIAL)
    for note in ("adjudication", "Adjudication: the final grade"):
        curate.record_judgement(teamed, None, BEN, PO, BRAF, "1000001", Grade.PARTIAL, note=note)
    decisions = list_decisions(teamed, include_superseded=True)
    assert [d.item.pmid for d in open_disagreements(decisions)] == ["1000001"]  # still open: a note decides nothing
    chosen, counts = resolve_decisions(decisions)  # training leaves the item out; it does not take the curator's grade
    assert chosen == [] and counts.get("conflicts_excluded") == 1 and not counts.get("adjudicated")
    assert not any(d.adjudication for d in decisions)
    final = annotation_queue.adjudicate(teamed, DAN, PO, disagreement, Grade.PARTIAL)
    assert final.adjudication and get_decision(teamed, final.decision_id).adjudication
    decisions = list_decisions(teamed, include_superseded=True)
    assert open_disagreements(decisions) == []
    chosen, counts = resolve_decisions(decisions)
    assert [d.decision_id for d in chosen] == [final.decision_id] and counts.get("adjudicated") == 1


def test_maintainer_only_writes_are_refused_to_everyone_else_before_anything_is_written(teamed, fixtures, tmp_path):
    settings = Settings(db_path=tmp_path / "test.duckdb", jobs_dir=tmp_path / "jobs", models_dir=tmp_path / "models",
                        backups_dir=tmp_path / "backups", data_dir=tmp_path / "nodata")
    documents = stats(teamed)["documents"]
    kb_path = fixtures / "civic" / "current.tsv"
    writes = {
        "import a KB": lambda who: ingest_kb(teamed, "civic", kb_path, who=who),
        "import a corpus": lambda who: ingest_corpus(teamed, "pubtator", fixtures / "pubtator" / "small.PubTator",
                                                     who=who),
        "load the sample": lambda who: quickstart.load_sample(teamed, settings, who=who),
        "retrain": lambda who: retrain.start(teamed, retrain.RetrainForm(schema="PO"), settings, who=who),
        "cancel a job": lambda who: retrain.cancel(teamed, 1, who=who),
        "activate a version": lambda who: versions.activate(teamed, "v1", who=who),
        "train a recogniser": lambda who: recogniser_training.start_recogniser_training(teamed, settings, who=who),
        "activate a recogniser": lambda who: entities.activate_entity_model(teamed, "recogniser", tmp_path, who=who),
        "train a linker": lambda who: linker_training.start_linker_training(teamed, settings, who=who),
        "activate a linker": lambda who: linker_training.activate_linker(teamed, settings, tmp_path, who=who),
        "train a relation scorer": lambda who: relation_scoring.start_relation_training(teamed, settings, who=who),
        "activate a relation scorer": lambda who: relation_scoring.activate_scorer(teamed, tmp_path, who=who),
        "back up": lambda who: maintenance.back_up(teamed, settings, who=who),
    }
    for what, write in writes.items():
        for who in (BEN, CAT, DAN, "ana@example.org"):  # the typed name of the maintainer is not her
            with pytest.raises(AccessDeniedError):
                write(who)
            assert stats(teamed)["documents"] == documents, what
    assert list_jobs(teamed) == []
    assert not (tmp_path / "backups").exists()
    # The maintainer (and the shell) pass the check: a backup is made.
    assert maintenance.back_up(teamed, settings, who=ANA).folder.exists()
    assert maintenance.back_up(teamed, settings, who=access.local_operator("ops")).folder.exists()


def test_restore_needs_the_shell(tmp_path):
    settings = Settings(db_path=tmp_path / "x.duckdb", backups_dir=tmp_path / "backups")
    with pytest.raises(AccessDeniedError, match="needs a shell on the machine"):
        maintenance.restore(tmp_path / "x.duckdb", settings, who=ANA)
    assert not (tmp_path / "x.duckdb").exists()


def test_curator_only_writes(teamed):
    with pytest.raises(AccessDeniedError, match="export decisions"):
        export.decisions_file(teamed, who=CAT)
    assert export.decisions_file(teamed, who=BEN).rows == 0
    curate.record_judgement(teamed, None, BEN, PO, BRAF, "1000001", Grade.PARTIAL)
    header, row = export.decisions_file(teamed, who=BEN).text.splitlines()
    cells = row.split("\t")
    assert header.split("\t")[-1] == "identity_source" and (cells[1], cells[-1]) == (BEN.name, "oidc")
    with pytest.raises(AccessDeniedError, match="save queries"):
        watch.save_search(teamed, CAT, "PO", BRAF, [])
    watch.save_search(teamed, BEN, "PO", BRAF, [])
    assert [w.saved.curator for w in watch.watched(teamed, BEN.name, "PO")] == [BEN.name]
    with pytest.raises(AccessDeniedError, match="take worklist items"):
        worklist.take_worklist_item(teamed, 1, CAT)
    with pytest.raises(AccessDeniedError, match="take worklist items"):
        worklist.fill_worklist(teamed, PO, who=CAT)
    assert worklist.fill_worklist(teamed, PO, who=BEN) > 0


def test_a_store_switched_from_personal_to_team_keeps_its_self_declared_decisions(loaded):
    typed = curate.record_judgement(loaded, None, "ben@example.org", PO, BRAF, "1000001", Grade.PARTIAL)
    access.sign_in(loaded, ANA)  # the store becomes a team store
    team.grant_role(loaded, ANA, BEN.name, "curator")
    kept = get_decision(loaded, typed.decision_id)
    assert (kept.curator, kept.identity_source, kept.superseded_by) == (BEN.name, "self-declared", None)
    assert "ben@example.org (self-declared) · Partial" in decision_history([kept], team=True)[0]
    assert "(self-declared)" not in decision_history([kept])[0]  # personal mode: as it was
    with pytest.raises(AccessDeniedError, match="team store.*typed name cannot record decisions"):
        curate.record_judgement(loaded, None, "ben@example.org", PO, BRAF, "1000001", Grade.COMPLETE)
    # The signed-in ben's decision stands beside the typed one; his undo never reaches the typed one.
    signed = curate.record_judgement(loaded, None, BEN, PO, BRAF, "1000001", Grade.COMPLETE)
    assert get_decision(loaded, typed.decision_id).superseded_by is None
    assert curate.undo_last(loaded, BEN).decision_id == signed.decision_id
    assert curate.undo_last(loaded, BEN) is None
    assert get_decision(loaded, typed.decision_id).superseded_by is None
    assert "team store" in team.personal_mode_problem(loaded, Settings(identity="personal"))
    # The shell keeps every role on a team store.
    assert access.roles_of(loaded, access.local_operator("ops")) == frozenset(access.Role)


def test_an_identity_that_expires_mid_work_writes_nothing(teamed):
    ending = person(BEN.name, expires_at=time.time() + 60)
    curate.record_judgement(teamed, None, ending, PO, BRAF, "1000001", Grade.PARTIAL)
    before = _decisions(teamed)
    ended = person(BEN.name, expires_at=time.time() - 1)
    with pytest.raises(SignInExpiredError, match="sign-in as ben@example.org ended.*Nothing was recorded"):
        curate.record_judgement(teamed, None, ended, PO, BRAF, "1000002", Grade.COMPLETE, answer="Vemurafenib",
                                confirm_kind=True)
    with pytest.raises(SignInExpiredError):
        curate.undo_last(teamed, ended)
    assert _decisions(teamed) == before
    assert list_decisions(teamed, curator=BEN.name)[-1].superseded_by is None
    assert not [r for r in list_kb_records(teamed, "PO") if r.source == "curator"]


def test_roles_claimed_by_the_provider_count_without_being_stored(teamed):
    settings = Settings(identity="oidc", roles_claim="groups")
    claims = {"iss": "https://idp.example.org", "sub": "fay-1", "email": "Fay@Example.org", "email_verified": True,
              "name": "Fay", "iat": int(time.time()), "groups": ["curator", "staff"]}
    fay = access.from_claims(claims, settings)
    assert (fay.name, fay.display_name, fay.claimed_roles) == ("fay@example.org", "Fay", {"curator", "staff"})
    assert access.sign_in(teamed, fay) == {access.Role.CURATOR}
    assert list_roles_of(teamed, fay.name) == ()
    curate.record_judgement(teamed, None, fay, PO, BRAF, "1000001", Grade.PARTIAL)


def test_oidc_claims_without_a_usable_email_are_refused():
    settings = Settings(identity="oidc", sign_in_hours=2)
    with pytest.raises(AccessDeniedError, match="names nobody"):
        access.from_claims({"sub": "x"}, settings)
    with pytest.raises(AccessDeniedError, match="not verified"):
        access.from_claims({"email": "a@b.org", "email_verified": False}, settings)
    with pytest.raises(AccessDeniedError, match="not an email address"):
        access.from_claims({"email": "a\nb@c.org"}, settings)
    old = access.from_claims({"iss": "https://idp.example.org", "sub": "a", "email": "a@b.org", "email_verified": True,
                              "iat": time.time() - 3 * 3600}, settings)
    assert old.expired()


def test_proxy_headers_are_believed_only_from_the_proxy():
    settings = Settings(identity="proxy", proxy_secret=SECRET)
    good = {"X-Forwarded-Email": "Ana@Example.org", "x-curation-proxy-secret": SECRET}
    assert access.from_proxy(good, "127.0.0.1", settings).name == "ana@example.org"
    with pytest.raises(AccessDeniedError, match="did not come through the sign-in proxy"):
        access.from_proxy({"X-Forwarded-Email": "ana@example.org"}, "127.0.0.1", settings)  # forged, direct
    with pytest.raises(AccessDeniedError, match="did not come through"):
        access.from_proxy({**good, "x-curation-proxy-secret": "guess"}, "127.0.0.1", settings)
    for bound in ("0.0.0.0", "192.168.1.5", ""):  # the socket's peer could be anywhere
        with pytest.raises(CurationError, match="needs the app on a loopback address"):
            access.from_proxy(good, bound, settings)
    for bound in ("localhost", "::1", "127.0.0.2"):
        assert access.from_proxy(good, bound, settings).name == "ana@example.org"
    with pytest.raises(CurationError, match="needs CURATION_PROXY_SECRET"):
        access.from_proxy(good, "127.0.0.1", Settings(identity="proxy"))
    with pytest.raises(AccessDeniedError, match="names nobody"):
        access.from_proxy({"X-Curation-Proxy-Secret": SECRET}, "127.0.0.1", settings)


def test_the_proxy_is_trusted_behind_nginx_whatever_x_forwarded_for_says():
    """nginx and oauth2-proxy send the browser's address in X-Forwarded-For; it neither grants nor refuses trust."""
    settings = Settings(identity="proxy", proxy_secret=SECRET)
    nginx = {"X-Forwarded-For": "203.0.113.9, 127.0.0.1", "X-Forwarded-Proto": "https", "X-Real-IP": "203.0.113.9",
             "X-Forwarded-Email": "ana@example.org", "X-Curation-Proxy-Secret": SECRET}
    assert access.from_proxy(nginx, "127.0.0.1", settings).name == "ana@example.org"
    with pytest.raises(AccessDeniedError, match="did not come through"):  # a forged loopback address is no secret
        access.from_proxy({**nginx, "X-Forwarded-For": "127.0.0.1", "X-Curation-Proxy-Secret": ""}, "127.0.0.1",
                          settings)


AUTH = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": secrets.token_hex(24),
        "client_id": "workbench", "client_secret": "x",
        "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}


@pytest.mark.parametrize(("section", "message"), [
    (None, r"\[auth\] section of .streamlit/secrets.toml is missing"),
    ({k: v for k, v in AUTH.items() if k != "client_id"}, "lacks client_id"),
    ({**AUTH, "redirect_uri": "http://localhost:8501/"}, "must be the app's address followed by /oauth2callback"),
    ({**AUTH, "cookie_secret": "short"}, "cookie_secret has 5 characters"),
    ({**AUTH, "server_metadata_url": "idp.example.org"}, "server_metadata_url is 'idp.example.org'"),
    ({"redirect_uri": AUTH["redirect_uri"], "cookie_secret": AUTH["cookie_secret"], "a": {"client_id": "x"},
      "b": {"client_id": "y"}}, "has 2 providers"),
    ({"redirect_uri": AUTH["redirect_uri"], "cookie_secret": AUTH["cookie_secret"], "okta": {"client_id": "x"}},
     "lacks okta.client_secret, okta.server_metadata_url"),
])
def test_a_missing_or_malformed_auth_section_says_what_is_wrong(section, message):
    with pytest.raises(CurationError, match=message):
        access.auth_provider(section)


@pytest.mark.parametrize(("key", "url", "message"), [
    ("redirect_uri", "http://curation.example.org/oauth2callback", "must use https"),
    ("redirect_uri", "https:///oauth2callback", "names no host"),
    ("redirect_uri", "https://curation.example.org/?next=/oauth2callback", "path must end in /oauth2callback"),
    ("redirect_uri", "https://curation.example.org/x#/oauth2callback", "fragment"),
    ("redirect_uri", "https://curation.example.org/oauth2callback#frag", "fragment"),
    ("redirect_uri", "https://curation.example.org:99999/oauth2callback", "port"),
    ("redirect_uri", "ftp://curation.example.org/oauth2callback", "must use https"),
    ("server_metadata_url", "http://idp.example.org/.well-known/openid-configuration", "must use https"),
    ("server_metadata_url", "https:///.well-known/openid-configuration", "names no host"),
    ("server_metadata_url", "https://idp.example.org/.well-known/open id", "spaces or control"),
])
def test_auth_urls_are_parsed_https_with_a_host_except_on_loopback(key, url, message):
    with pytest.raises(CurationError, match=f"{key} .*{message}"):
        access.auth_provider({**AUTH, key: url})


@pytest.mark.parametrize("url", ["http://localhost:8501/oauth2callback", "http://127.0.0.1:{port}/oauth2callback",
                                 "http://[::1]:8501/app/oauth2callback", "https://curation.example.org/oauth2callback"])
def test_auth_redirect_urls_that_are_fine(url):
    assert access.auth_provider({**AUTH, "redirect_uri": url}) is None


@pytest.mark.parametrize("secret", ["c" * 40, "password" * 4, "ab" * 20, "0123456789abcdef" * 2])
def test_a_cookie_secret_without_real_entropy_is_refused(secret):
    with pytest.raises(CurationError, match="cookie_secret .*not random"):
        access.auth_provider({**AUTH, "cookie_secret": secret})


def test_random_cookie_secrets_pass():
    for _ in range(200):
        for secret in (secrets.token_hex(16), secrets.token_urlsafe(24), secrets.token_hex(32)):
            assert access.auth_provider({**AUTH, "cookie_secret": secret}) is None


def test_a_well_formed_auth_section_names_its_provider():
    assert access.auth_provider(AUTH) is None
    nested = {"redirect_uri": AUTH["redirect_uri"], "cookie_secret": AUTH["cookie_secret"],
              "okta": {k: AUTH[k] for k in ("client_id", "client_secret", "server_metadata_url")}}
    assert access.auth_provider(nested) == "okta"


def test_identity_setting_is_checked(monkeypatch):
    monkeypatch.setenv("CURATION_IDENTITY", "ldap")
    with pytest.raises(CurationError, match="CURATION_IDENTITY is 'ldap'; use one of personal, oidc, proxy"):
        Settings()


def test_the_roles_and_withdraw_commands_act_as_the_local_account(loaded, fixtures, capsys):
    from curation.cli import main

    db = loaded.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()[0][0]
    d = curate.record_judgement(loaded, None, "ben", PO, BRAF, "1000001", Grade.PARTIAL)
    loaded.close()
    assert main(["roles", "--db", db]) == 0
    assert "nobody holds a role" in capsys.readouterr().out
    assert main(["roles", "grant", "Ana@Example.org", "maintainer", "--reason", "set-up", "--db", db]) == 0
    # The store is a team store now; the shell still writes to it (every role, under local:<account>).
    assert main(["ingest-kb", "civic", str(fixtures / "civic" / "current.tsv"), "--db", db]) == 0
    assert main(["roles", "grant", "ana@example.org", "chief", "--db", db]) == 2
    assert "'chief' is not a role" in capsys.readouterr().err
    assert main(["withdraw", str(d.decision_id), "--db", db]) == 0
    assert f"withdrew decision {d.decision_id} by ben (self-declared)" in capsys.readouterr().out
    assert main(["roles", "audit", "--json", "--db", db]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["by"].startswith("local:"), row["by (source)"], row["person"], row["role"], row["reason"]) == (
        True, "local", "ana@example.org", "maintainer", "set-up")


def test_only_the_shell_turns_a_team_store_back_into_a_personal_store(teamed, capsys):
    from curation.cli import main

    with pytest.raises(AccessDeniedError, match="from the shell only"):
        team.leave_team_mode(teamed, ANA)
    assert access.is_team_store(teamed)
    db = teamed.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()[0][0]
    teamed.close()
    assert main(["roles", "leave-team", "--db", db]) == 2
    assert "add --yes" in capsys.readouterr().err
    assert main(["roles", "leave-team", "--yes", "--reason", "back to one curator", "--db", db]) == 0
    assert "revoked 4 role grants" in capsys.readouterr().out
    con = open_store(db)
    try:
        assert not access.is_team_store(con)
        assert [c.change for c in list_role_changes(con)][:4] == ["revoke"] * 4
        curate.record_judgement(con, None, "ben", PO, BRAF, "1000001", Grade.PARTIAL)  # typed names write again
    finally:
        con.close()


ISSUER = "https://idp.example.org"


def _claims(email: str, sub: str, iss: str = ISSUER, **more) -> dict:
    return {"iss": iss, "sub": sub, "email": email, "email_verified": True, "iat": int(time.time()), **more}


@pytest.mark.parametrize("verified", [None, "false", "true", 1, False])
def test_oidc_email_must_be_marked_verified_with_the_boolean_true(verified):
    claims = {k: v for k, v in _claims("ana@example.org", "1").items() if k != "email_verified"}
    if verified is not None:
        claims["email_verified"] = verified
    with pytest.raises(AccessDeniedError, match="not verified"):
        access.from_claims(claims, Settings(identity="oidc"))
    assert access.from_claims({**claims, "email_verified": True}, Settings(identity="oidc")).name == "ana@example.org"


def test_a_provider_that_never_sends_email_verified_can_be_allowed_but_false_is_still_refused():
    relaxed = Settings(identity="oidc", oidc_email_verified="if-sent")
    claims = {k: v for k, v in _claims("ana@example.org", "1").items() if k != "email_verified"}
    assert access.from_claims(claims, relaxed).name == "ana@example.org"
    for sent in (False, "false"):
        with pytest.raises(AccessDeniedError, match="not verified"):
            access.from_claims({**claims, "email_verified": sent}, relaxed)


def test_the_email_verified_setting_is_checked(monkeypatch):
    monkeypatch.setenv("CURATION_OIDC_EMAIL_VERIFIED", "maybe")
    with pytest.raises(CurationError, match="CURATION_OIDC_EMAIL_VERIFIED is 'maybe'; use required or if-sent"):
        Settings()


def test_oidc_claims_without_issuer_or_subject_are_refused():
    for missing in ("iss", "sub"):
        claims = {k: v for k, v in _claims("ana@example.org", "1").items() if k != missing}
        with pytest.raises(AccessDeniedError, match=f"no '{missing}' claim"):
            access.from_claims(claims, Settings(identity="oidc"))
    ana = access.from_claims(_claims("Ana@Example.org", "1"), Settings(identity="oidc"))
    assert (ana.issuer, ana.subject, ana.name) == (ISSUER, "1", "ana@example.org")


def test_people_are_keyed_by_issuer_and_subject_and_an_email_taken_by_another_subject_is_refused(loaded):
    settings = Settings(identity="oidc")
    ana = team.sign_in_oidc(loaded, _claims("ana@example.org", "ana-1"), settings)
    assert (ana.identity.name, ana.roles) == ("ana@example.org", {access.Role.MAINTAINER})
    team.grant_role(loaded, ana.identity, "ben@example.org", "curator")
    # Another account (another subject, or the same subject at another issuer) now says it is ana: refused.
    for claims in (_claims("ana@example.org", "mallory-7"), _claims("ana@example.org", "ana-1", iss="https://evil")):
        with pytest.raises(AccessDeniedError, match="ana@example.org belongs to another account"):
            team.sign_in_oidc(loaded, claims, settings)
    assert [p.person for p in list_people(loaded)] == ["ana@example.org"]
    # The person is the account: ana's account whose email changed keeps her name, roles and history.
    moved = team.sign_in_oidc(loaded, _claims("ana.new@example.org", "ana-1"), settings, noted="ana@example.org")
    assert (moved.identity.name, moved.roles) == ("ana@example.org", {access.Role.MAINTAINER})
    # ben's first sign-in binds his email to his account; a second account with it is refused from then on.
    assert team.sign_in_oidc(loaded, _claims("Ben@Example.org", "ben-2"), settings).roles == {access.Role.CURATOR}
    with pytest.raises(AccessDeniedError, match="belongs to another account"):
        team.sign_in_oidc(loaded, _claims("ben@example.org", "ben-3"), settings, noted="ben@example.org")
    assert [(a.issuer, a.subject, a.person) for a in list_accounts(loaded)] == [
        (ISSUER, "ana-1", "ana@example.org"), (ISSUER, "ben-2", "ben@example.org")]


def test_a_proxy_sign_in_ends_sign_in_hours_after_the_session_first_saw_it(loaded):
    settings = Settings(identity="proxy", proxy_secret=SECRET, sign_in_hours=1)
    headers = {"X-Forwarded-Email": "ana@example.org", "X-Curation-Proxy-Secret": SECRET}
    first = time.time() - 2 * 3600  # the session first saw ana two hours ago; every run since sent the same headers
    later = access.from_proxy(headers, "127.0.0.1", settings, since=first)
    assert later.expires_at == first + 3600 and later.expired()
    with pytest.raises(SignInExpiredError, match="sign-in as ana@example.org has ended"):
        team.sign_in_proxy(loaded, headers, "127.0.0.1", settings, since=first)
    assert list_people(loaded) == []  # nothing recorded for an ended sign-in
    fresh = team.sign_in_proxy(loaded, headers, "127.0.0.1", settings, since=time.time())
    assert not fresh.identity.expired() and fresh.identity.expires_at <= time.time() + 3600


@pytest.mark.parametrize("header", ["X-Forwarded-Email", "X-Curation-Proxy-Secret"])
def test_a_repeated_identity_header_is_refused(header):
    settings = Settings(identity="proxy", proxy_secret=SECRET)
    headers = {"X-Forwarded-Email": ["ana@example.org"], "X-Curation-Proxy-Secret": [SECRET]}
    # A client's own header, passed on beside the proxy's: which one is the proxy's cannot be told.
    headers[header] = ["mallory@example.org" if "Email" in header else SECRET, *headers[header]]
    with pytest.raises(AccessDeniedError, match=f"2 {header} headers"):
        access.from_proxy(headers, "127.0.0.1", settings)
    single = {k: v[-1:] for k, v in headers.items()}
    assert access.from_proxy(single, "127.0.0.1", settings).name == "ana@example.org"


def test_accounts_signing_in_at_once_with_one_email_bind_it_to_exactly_one(con):
    def attempt(n: int) -> str:
        cursor = con.cursor()  # one connection per session thread, as the app's sessions have
        try:
            return access.account_identity(cursor, person("ana@example.org", issuer=ISSUER, subject=f"s{n}")).subject
        except AccessDeniedError:
            return "refused"

    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(attempt, range(8)))
    winners = [o for o in outcomes if o != "refused"]
    assert len(winners) == 1 and [(a.subject, a.person) for a in list_accounts(con)] == [(winners[0],
                                                                                          "ana@example.org")]


def test_an_email_outside_the_teams_domains_is_refused_before_it_is_bound_to_an_account(loaded):
    settings = Settings(identity="oidc", team_domains=("example.org",))
    with pytest.raises(AccessDeniedError, match="admits email addresses of example.org only"):
        team.sign_in_oidc(loaded, _claims("eve@elsewhere.net", "eve-1"), settings)
    assert list_accounts(loaded) == [] and list_people(loaded) == []
