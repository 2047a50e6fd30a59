"""Team mode under concurrent sessions: each app session writes through its own cursor of the one connection."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from curation import access
from curation.access import Identity, IdentitySource
from curation.config import Settings
from curation.errors import CurationError
from curation.store.opening import open_store
from curation.store.team import list_accounts, list_people, list_role_holders
from curation.workflows import team

ISSUER = "https://idp.example.org"


def _at_once(con, calls: list[Callable[[object], object]]) -> list[object]:
    """Run each call on its own cursor of ``con``, released together; returns each one's result or exception."""
    start = threading.Barrier(len(calls))
    outcomes: list[object] = [None] * len(calls)

    def one(i: int) -> None:
        cursor = con.cursor()
        try:
            start.wait()
            outcomes[i] = calls[i](cursor)
        except BaseException as exc:  # kept for the test to judge, not lost in the thread
            outcomes[i] = exc
        finally:
            cursor.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return outcomes


def test_two_maintainers_revoking_each_other_at_once_leave_one(tmp_path):
    ana, ben = (Identity(n, IdentitySource.OIDC) for n in ("ana@example.org", "ben@example.org"))
    for trial in range(40):
        con = open_store(tmp_path / f"revoke{trial}.duckdb")
        access.sign_in(con, ana)
        access.grant(con, ana, ben.name, "maintainer")
        outcomes = _at_once(con, [lambda c: access.revoke(c, ana, ben.name, "maintainer"),
                                  lambda c: access.revoke(c, ben, ana.name, "maintainer")])
        holders = list_role_holders(con, "maintainer")
        con.close()
        assert len(holders) == 1, f"trial {trial}: maintainers left {holders}, outcomes {outcomes}"
        refused = [o for o in outcomes if isinstance(o, Exception)]
        # One revoke is made; the other is refused with the message, or finds its actor no longer a maintainer.
        assert outcomes.count(True) == 1 and len(refused) == 1, f"trial {trial}: {outcomes}"
        assert isinstance(refused[0], CurationError), f"trial {trial}: {refused[0]!r}"


def test_the_last_maintainer_cannot_be_revoked_even_by_the_shell(tmp_path):
    con = open_store(tmp_path / "last.duckdb")
    access.sign_in(con, Identity("ana@example.org", IdentitySource.OIDC))
    with pytest.raises(CurationError, match="only maintainer"):
        access.revoke(con, access.local_operator(), "ana@example.org", "maintainer")
    assert list_role_holders(con, "maintainer") == ["ana@example.org"]
    con.close()


def _claims(email: str, sub: str) -> dict:
    import time

    return {"iss": ISSUER, "sub": sub, "email": email, "email_verified": True, "iat": int(time.time())}


def test_one_account_signing_in_from_two_tabs_at_its_first_sign_in_gets_one_binding(tmp_path):
    settings = Settings(identity="oidc")
    for trial in range(40):
        con = open_store(tmp_path / f"tabs{trial}.duckdb")
        outcomes = _at_once(con, [lambda c: team.sign_in_oidc(c, _claims("ana@example.org", "ana-1"), settings)] * 2)
        accounts = [(a.issuer, a.subject, a.person) for a in list_accounts(con)]
        people = [p.person for p in list_people(con)]
        con.close()
        errors = [o for o in outcomes if isinstance(o, BaseException)]
        assert errors == [], f"trial {trial}: {errors!r}"
        assert {o.identity.name for o in outcomes} == {"ana@example.org"}
        assert accounts == [(ISSUER, "ana-1", "ana@example.org")] and people == ["ana@example.org"]
