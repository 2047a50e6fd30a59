"""Roles and what each allows; the one check every write path calls (:func:`require`).

A store becomes a *team store* when its first role is granted (the first sign-in of an empty team store makes
that person maintainer). From then on a typed, self-declared name cannot write to it, whichever front end
passes it (a page run in personal mode by mistake, a script): only signed-in people with a role, or the local
shell. A store with no role grant (personal mode) lets everyone do everything, as before team mode existed.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Sequence
from enum import StrEnum

import duckdb

from curation.access.identity import MAX_NAME, Identity, IdentitySource, identity_of
from curation.errors import AccessDeniedError, CurationError, SignInExpiredError
from curation.store.team import (
    bind_account,
    change_roles,
    count_role_grants,
    grant_first_role,
    list_role_grants,
    list_role_holders,
    list_roles_of,
    note_person,
)

Who = Identity | str  # a workflow's "who": an Identity, or a typed name (self-declared)


class Role(StrEnum):
    CURATOR = "curator"
    ANNOTATOR = "annotator"
    ADJUDICATOR = "adjudicator"
    MAINTAINER = "maintainer"


class Action(StrEnum):
    """What a write does; the value reads in a sentence ("… cannot <value>")."""

    DECIDE = "record decisions and notes"
    UNDO_OWN = "undo their own decisions"
    WITHDRAW_ANY = "withdraw another person's decision"
    SAVE_QUERY = "save queries"
    TAKE_WORK = "take worklist items"
    EXPORT = "export decisions and records"
    LABEL = "grade pairs in the annotation queue"
    ADJUDICATE = "resolve disagreements"
    IMPORT = "import into the shared store or re-annotate it"
    TRAIN = "train or retrain models"
    ACTIVATE = "activate a model"
    BACKUP = "back up the store"
    RESTORE = "restore the store"
    MANAGE_ROLES = "grant and revoke roles"
    DISMISS_NOTICES = "dismiss the store's repair notices"
    FOLLOW_JOBS = "finish background jobs and apply what they built"
    REGISTER_VERSIONS = "register published model versions"


# What a page run writes on its own (a finished job applied, new version folders registered) carries out what
# someone with the role already asked for: every role may, nobody without one. A repair notice, once dismissed,
# is hidden from everyone: the maintainer's call.
_PAGE_UPKEEP = frozenset({Action.FOLLOW_JOBS, Action.REGISTER_VERSIONS})
ROLE_ACTIONS: dict[Role, frozenset[Action]] = {
    Role.CURATOR: frozenset({Action.DECIDE, Action.UNDO_OWN, Action.SAVE_QUERY, Action.TAKE_WORK, Action.EXPORT})
    | _PAGE_UPKEEP,
    Role.ANNOTATOR: frozenset({Action.LABEL, Action.UNDO_OWN}) | _PAGE_UPKEEP,
    Role.ADJUDICATOR: frozenset({Action.ADJUDICATE, Action.LABEL, Action.UNDO_OWN, Action.WITHDRAW_ANY})
    | _PAGE_UPKEEP,
    Role.MAINTAINER: frozenset(Action),  # the team's administrator: everything
}
ALL_ROLES = frozenset(Role)
FIRST_SIGN_IN = "first sign-in of an empty team store"


def is_team_store(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the store has role grants (then only signed-in people with a role, or the shell, may write)."""
    return count_role_grants(con) > 0


def _valid(names: Iterable[str]) -> frozenset[Role]:
    return frozenset(Role(n) for n in names if n in Role._value2member_map_)


def roles_of(con: duckdb.DuckDBPyConnection, who: Who) -> frozenset[Role]:
    """What ``who`` may act as: every role for the shell and for a typed name on a personal store; none for a
    typed name on a team store; the stored roles plus the provider's claimed ones for a signed-in person."""
    identity = identity_of(who)
    if identity.source is IdentitySource.LOCAL:
        return ALL_ROLES
    if identity.source is IdentitySource.SELF_DECLARED:
        return frozenset() if is_team_store(con) else ALL_ROLES
    return _valid(list_roles_of(con, identity.name)) | _valid(identity.claimed_roles)


def actions_of(roles: Iterable[Role]) -> frozenset[Action]:
    """What holding ``roles`` allows."""
    return frozenset().union(*(ROLE_ACTIONS[r] for r in roles))


def allowed(con: duckdb.DuckDBPyConnection, who: Who, action: Action) -> bool:
    """Whether ``who`` may do ``action`` now (for showing or hiding a control; the write itself calls require)."""
    identity = identity_of(who)
    return not identity.expired() and action in actions_of(roles_of(con, identity))


def needed_roles(action: Action) -> list[Role]:
    return [r for r in Role if action in ROLE_ACTIONS[r] and r is not Role.MAINTAINER] or [Role.MAINTAINER]


def require(con: duckdb.DuckDBPyConnection | None, who: Who, action: Action, now: float | None = None) -> Identity:
    """The identity allowed to do ``action``, or an error saying why not (called before anything is written).

    ``con`` may be None only for the shell (restoring a store that cannot be opened).

    Raises:
        SignInExpiredError: the sign-in ended.
        AccessDeniedError: the roles do not allow it (a typed name on a team store has none).
    """
    identity = identity_of(who)
    if identity.expired(now):
        ended = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(identity.expires_at))
        raise SignInExpiredError(f"your sign-in as {identity.name} ended at {ended}; sign in again. Nothing was "
                                 "recorded")
    if con is None:
        if identity.source is IdentitySource.LOCAL:
            return identity
        raise AccessDeniedError(f"{identity.name} cannot {action.value} here: it needs a shell on the machine")
    roles = roles_of(con, identity)
    if action in actions_of(roles):
        return identity
    if identity.source is IdentitySource.SELF_DECLARED:
        raise AccessDeniedError(
            "this store is a team store (people hold roles in it): a typed name cannot "
            f"{action.value}. Run the app in team mode (CURATION_IDENTITY=oidc or proxy) and sign in, or use the "
            "command line on the machine")
    need = " or ".join(r.value for r in needed_roles(action))
    held = ", ".join(sorted(r.value for r in roles)) or "none"
    maintainers = ", ".join(list_role_holders(con, Role.MAINTAINER)) or "a maintainer"
    raise AccessDeniedError(f"{identity.name} cannot {action.value}: that needs the {need} role (yours: {held}). "
                            f"Ask {maintainers} to grant it")


def _person(person: str) -> str:
    name = " ".join(str(person).split()).lower()
    if not name or len(name) > MAX_NAME:
        raise CurationError(f"a person is named by their sign-in email (1 to {MAX_NAME} characters), got "
                            f"'{name[:60]}'")
    return name


def _role(role: str) -> Role:
    if role not in Role._value2member_map_:
        raise CurationError(f"'{role}' is not a role; the roles are {', '.join(r.value for r in Role)}")
    return Role(role)


def grant(con: duckdb.DuckDBPyConnection, who: Who, person: str, role: str, reason: str = "") -> bool:
    """Give ``person`` a role (with an audit row); False when they already held it. Needs the maintainer role."""
    actor = require(con, who, Action.MANAGE_ROLES)
    return change_roles(con, [(_person(person), _role(role).value, "grant")], actor.name, actor.source,
                        reason) > 0


def revoke(con: duckdb.DuckDBPyConnection, who: Who, person: str, role: str, reason: str = "") -> bool:
    """Take a role from ``person`` (with an audit row); False when they did not hold it.

    Raises:
        CurationError: it is the last maintainer's maintainer role (the team would have nobody to manage it).
    """
    actor = require(con, who, Action.MANAGE_ROLES)
    # The last-maintainer check is change_roles' (keep=): made beside the change, not before its lock.
    return change_roles(con, [(_person(person), _role(role).value, "revoke")], actor.name, actor.source, reason,
                        keep=Role.MAINTAINER.value) > 0


def leave_team_mode(con: duckdb.DuckDBPyConnection, who: Who, reason: str = "") -> int:
    """Revoke every role (an audit row each): the store is a personal store again, where typed names write.

    Only the shell may: from the app, the last maintainer could lock everyone out of the store's history.
    Returns how many grants were revoked.
    """
    actor = require(con, who, Action.MANAGE_ROLES)
    if actor.source is not IdentitySource.LOCAL:
        raise AccessDeniedError("a team store is turned back into a personal store from the shell only "
                                "(python -m curation roles leave-team --yes)")
    grants = list_role_grants(con)
    return change_roles(con, [(g.person, g.role, "revoke") for g in grants], actor.name, actor.source,
                        reason or "left team mode")


def admit(identity: Identity, domains: Sequence[str] = ()) -> None:
    """Check that ``identity``'s email is in one of the team's ``domains`` (``CURATION_TEAM_DOMAINS``; empty:
    every domain).

    Raises:
        AccessDeniedError: it is not; nothing is recorded.
    """
    admitted = {d.strip().lower() for d in domains if d.strip()}
    domain = identity.name.rpartition("@")[2].lower() if "@" in identity.name else ""
    if admitted and domain not in admitted:
        raise AccessDeniedError(f"{identity.name} cannot sign in here: this team admits email addresses of "
                                f"{', '.join(sorted(admitted))} only (CURATION_TEAM_DOMAINS). Nothing was recorded")


def sign_in(con: duckdb.DuckDBPyConnection, identity: Identity, first_maintainer: str = "",
            domains: Sequence[str] = ()) -> frozenset[Role]:
    """Note a signed-in person and return their roles; the first sign-in of an empty team store becomes its
    maintainer (with an audit row saying so), atomically: of several first sign-ins at once, one.

    Args:
        first_maintainer: the only person (email) who may become maintainer that way
            (``CURATION_TEAM_FIRST_MAINTAINER``); empty: whoever signs in first.
        domains: the email domains admitted at all (``CURATION_TEAM_DOMAINS``); empty: everyone the sign-in
            provider lets through.

    Raises:
        AccessDeniedError: the person's email is outside ``domains``; nothing is recorded.
    """
    if not identity.authenticated or identity.source is IdentitySource.LOCAL:
        raise ValueError("sign_in takes a person signed in through OIDC or the proxy")
    admit(identity, domains)
    note_person(con, identity.name, identity.display_name, identity.source,
                sorted(r.value for r in _valid(identity.claimed_roles)))
    wanted = first_maintainer.strip().lower()
    if not wanted or identity.name.lower() == wanted:
        grant_first_role(con, identity.name, Role.MAINTAINER.value, identity.source, FIRST_SIGN_IN)
    return roles_of(con, identity)


def account_identity(con: duckdb.DuckDBPyConnection, identity: Identity) -> Identity:
    """The person an OIDC account is: the name its first sign-in bound to (issuer, subject), whatever email the
    provider says now; an email never yet bound is bound to this account (for good).

    Roles are granted to names (emails), so an email that a second account presents (another subject at the
    provider, a recycled address, another issuer) would inherit the first account's roles and history; it is
    refused instead. An identity without an account (proxy, the shell, tests' hand-made ones) passes unchanged.

    Raises:
        AccessDeniedError: the email belongs to another account; nothing is recorded.
    """
    if not identity.subject:
        return identity
    bound = bind_account(con, identity.issuer, identity.subject, identity.name)
    if bound is None:
        raise AccessDeniedError(
            f"{identity.name} belongs to another account at the identity provider (it signed in here before under "
            "another subject or issuer); this account cannot act under that name. Nothing was recorded; a "
            "maintainer can tell you which account the team knows")
    return identity if bound == identity.name else dataclasses.replace(identity, name=bound)
