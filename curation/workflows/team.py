"""Team mode for the app and the command line: signing in, which pages a person's roles open, managing roles.

The check itself lives in :mod:`curation.access` and runs in every write workflow; this module is what the
pages call to decide what to draw (the navigation, the sidebar, the Team page) and what the ``roles`` command
calls. Personal mode (``CURATION_IDENTITY=personal``) uses none of it except :func:`personal_mode_problem`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import duckdb

from curation import access
from curation.access import Action, Identity, IdentitySource, Role, Who
from curation.config import Settings
from curation.errors import SignInExpiredError
from curation.store.team import list_people, list_role_changes, list_role_grants, list_role_holders

# The app's pages (by url path) and the actions that make each one useful; a page opens for a person who may
# do any of them. "explore" is read-only: anyone with a role.
PAGE_ACTIONS: dict[str, frozenset[Action]] = {
    "curate": frozenset({Action.DECIDE}),
    "annotate": frozenset({Action.LABEL, Action.ADJUDICATE}),
    "knowledge_base": frozenset({Action.IMPORT, Action.EXPORT}),
    "explore": frozenset(Action),
    "train": frozenset({Action.TRAIN, Action.ACTIVATE}),
    "team": frozenset({Action.MANAGE_ROLES}),
}


@dataclass(frozen=True)
class SignedIn:
    """A signed-in person as the app shows them: who, how, with which roles."""

    identity: Identity
    roles: frozenset[Role]


def oidc_provider(auth_section: Mapping[str, object] | None) -> str | None:
    """Check secrets.toml's ``[auth]`` for ``st.login``: the provider to pass it (None: the section's own keys).

    Raises:
        CurationError: the section is missing or malformed, naming the key.
    """
    return access.auth_provider(auth_section)


def sign_in_oidc(con: duckdb.DuckDBPyConnection, claims: Mapping[str, object], settings: Settings,
                 noted: str = "") -> SignedIn:
    """The person of an OIDC sign-in (``st.user``), noted in the store unless ``noted`` (the name this session
    already noted) is theirs: one write per session, later runs only read the roles. The first of an empty team
    store becomes maintainer.

    Raises:
        AccessDeniedError: no account or no verified email in the claims, an email outside
            ``CURATION_TEAM_DOMAINS``, or an email that belongs to another account;
            SignInExpiredError: the sign-in is older than allowed.
    """
    return _signed_in(con, access.from_claims(claims, settings), noted, settings)


def sign_in_proxy(con: duckdb.DuckDBPyConnection, headers: Mapping[str, str | Sequence[str]], server_address: str,
                  settings: Settings, since: float | None = None, noted: str = "") -> SignedIn:
    """The person a trusted proxy signed in (see :func:`curation.access.from_proxy` for what is checked); the
    sign-in ends ``CURATION_SIGN_IN_HOURS`` after ``since``, when the session first saw it.

    Raises:
        CurationError: the proxy set-up is wrong; AccessDeniedError: the connection is not the proxy's, or the
            email is outside ``CURATION_TEAM_DOMAINS``.
    """
    return _signed_in(con, access.from_proxy(headers, server_address, settings, since), noted, settings)


def _signed_in(con: duckdb.DuckDBPyConnection, identity: Identity, noted: str, settings: Settings) -> SignedIn:
    if identity.expired():
        again = "reload the page to sign in again" if identity.source is IdentitySource.PROXY else "sign in again"
        raise SignInExpiredError(f"your sign-in as {identity.name} has ended; {again}")
    # On every run, before anything is written: a team's domains only, then an email taken by another account
    # stops here (an outsider's email is never bound to their account).
    access.admit(identity, settings.team_domains)
    identity = access.account_identity(con, identity)
    fresh = identity.name != noted
    if not fresh:
        return SignedIn(identity, access.roles_of(con, identity))
    return SignedIn(identity, access.sign_in(con, identity, first_maintainer=settings.team_first_maintainer,
                                             domains=settings.team_domains))


def may(con: duckdb.DuckDBPyConnection, who: Who, action: Action) -> bool:
    """Whether ``who`` may do ``action`` now: for showing a control (the write itself checks again)."""
    return access.allowed(con, who, action)


def page_allowed(signed: SignedIn, page: str) -> bool:
    """Whether the signed-in person's roles open ``page`` (a url path of :data:`PAGE_ACTIONS`); from the roles read
    at sign-in this run, without another store read (the navigation asks for every page on every run)."""
    return bool(access.actions_of(signed.roles) & PAGE_ACTIONS[page])


def maintainers(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Who holds the maintainer role (the people to ask for a role)."""
    return list_role_holders(con, Role.MAINTAINER)


def page_refusal(signed: SignedIn, page: str, title: str, maintainers: Sequence[str]) -> str:
    """Why the signed-in person cannot open ``page``, for a person who opened its address."""
    held = ", ".join(sorted(r.value for r in signed.roles)) or "no role"
    need = sorted({r.value for a in PAGE_ACTIONS[page] for r in access.needed_roles(a)})
    return (f"{title} is for the {' or '.join(need)} role; you are signed in as {signed.identity.name} ({held}). "
            f"Ask {', '.join(maintainers) or 'a maintainer'} on the Team page to grant a role.")


def personal_mode_problem(con: duckdb.DuckDBPyConnection, settings: Settings) -> str:
    """In personal mode, why nothing typed can be recorded: the store is a team store ("" when it is not)."""
    if settings.team or not access.is_team_store(con):
        return ""
    return ("This store is a team store (people hold roles in it), but the app runs in personal mode: a typed "
            "name cannot record, import or train here. Start the app in team mode (CURATION_IDENTITY=oidc or "
            "proxy, docs/SECURITY.md) and sign in; reading and searching still work.")


def is_team_store(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether people hold roles in the store (its writes then need a signed-in person or the shell)."""
    return access.is_team_store(con)


def grant_role(con: duckdb.DuckDBPyConnection, who: Who, person: str, role: str, reason: str = "") -> str:
    """Give ``person`` a role (maintainers; an audit row is written); returns what happened, for a person."""
    changed = access.grant(con, who, person, role, reason)
    return f"{person.strip().lower()} is now {role}" if changed else f"{person.strip().lower()} was already {role}"


def revoke_role(con: duckdb.DuckDBPyConnection, who: Who, person: str, role: str, reason: str = "") -> str:
    """Take a role from ``person`` (maintainers; an audit row is written); returns what happened, for a person."""
    changed = access.revoke(con, who, person, role, reason)
    name = person.strip().lower()
    return f"{name} is no longer {role}" if changed else f"{name} did not hold {role}"


def leave_team_mode(con: duckdb.DuckDBPyConnection, who: Who, reason: str = "") -> str:
    """Revoke every role (the shell only; audited): the store is a personal store again."""
    revoked = access.leave_team_mode(con, who, reason)
    return f"revoked {revoked} role grant{'s' if revoked != 1 else ''}: the store is a personal store again"


def team_rows(con: duckdb.DuckDBPyConnection) -> list[dict[str, object]]:
    """One row per person with a role or a sign-in: stored roles, the provider's claimed roles, last seen."""
    stored: dict[str, list[str]] = {}
    for g in list_role_grants(con):
        stored.setdefault(g.person, []).append(g.role)
    people = {p.person: p for p in list_people(con)}
    rows = []
    for name in sorted(set(stored) | set(people)):
        seen = people.get(name)
        rows.append({"person": name, "roles": ", ".join(stored.get(name, [])),
                     "claimed by the provider": ", ".join(seen.claimed_roles) if seen else "",
                     "signed in through": seen.source if seen else "", "last seen": seen.last_seen_at[:19] if seen
                     else ""})
    return rows


def audit_rows(con: duckdb.DuckDBPyConnection, limit: int = 200) -> list[dict[str, object]]:
    """The role audit, newest first."""
    return [{"when": c.changed_at[:19], "by": c.actor, "by (source)": c.actor_source, "change": c.change,
             "person": c.person, "role": c.role, "reason": c.reason} for c in list_role_changes(con, limit)]


ROLES = tuple(r.value for r in Role)
__all__ = ["PAGE_ACTIONS", "ROLES", "Action", "Role", "SignedIn", "audit_rows", "grant_role", "is_team_store",
           "leave_team_mode", "maintainers", "may", "oidc_provider", "page_allowed", "page_refusal",
           "personal_mode_problem", "revoke_role", "sign_in_oidc", "sign_in_proxy", "team_rows", "Who"]
