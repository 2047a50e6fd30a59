"""Team mode's tables: who holds which role, the audit of every role change, the people who signed in, and the
OIDC account (issuer, subject) each signed-in email belongs to.

A role change and its audit row are written in one transaction: there is no change without its row.
Which roles exist and what each may do is :mod:`curation.access.roles`'s business; this module stores
names as given.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from curation.errors import CurationError
from curation.store.base import _scalar, transaction

SQL_COUNT_ROLES = "SELECT count(*) FROM team_roles"
SQL_ROLES_OF = "SELECT role FROM team_roles WHERE person = ? ORDER BY role"
SQL_HAS_ROLE = "SELECT count(*) FROM team_roles WHERE person = ? AND role = ?"
SQL_GRANT = "INSERT INTO team_roles (person, role, granted_by) VALUES (?, ?, ?)"
SQL_REVOKE = "DELETE FROM team_roles WHERE person = ? AND role = ?"
SQL_HOLDERS = "SELECT person FROM team_roles WHERE role = ? ORDER BY person"
SQL_COUNT_HOLDERS = "SELECT count(*) FROM team_roles WHERE role = ?"
SQL_LIST_ROLES = """
SELECT person, role, granted_by, CAST(granted_at AS VARCHAR) FROM team_roles ORDER BY person, role
"""
SQL_AUDIT = """
INSERT INTO role_audit (actor, actor_source, person, role, change, reason) VALUES (?, ?, ?, ?, ?, ?)
"""
SQL_LIST_AUDIT = """
SELECT audit_id, CAST(changed_at AS VARCHAR), actor, actor_source, person, role, change, reason
FROM role_audit ORDER BY audit_id DESC LIMIT ?
"""
#: Role writes of this process, one at a time. DuckDB's snapshot isolation lets two transactions that each saw
#: "no roles yet" both insert their (different) grant without a conflict, so a check and the grant it decides
#: are made under this lock, in one transaction. Only one process opens a store for writing (DuckDB's file
#: lock), so a process-wide lock covers every writer of it.
_ROLES_LOCK = threading.RLock()
#: Writes of ``team_people`` and ``team_accounts`` in this process, one at a time: two sessions' transactions
#: that both insert one person (two tabs of a first sign-in) fail at commit with a constraint error, and a name
#: both saw unbound would be refused to one of them.
_PEOPLE_LOCK = threading.Lock()

SQL_SEEN = """
INSERT INTO team_people (person, display_name, source, claimed_roles) VALUES (?, ?, ?, ?)
ON CONFLICT (person) DO UPDATE SET display_name = excluded.display_name, source = excluded.source,
    claimed_roles = excluded.claimed_roles, last_seen_at = now()
"""
SQL_ACCOUNT_PERSON = "SELECT person FROM team_accounts WHERE issuer = ? AND subject = ?"
SQL_PERSON_ACCOUNT = "SELECT issuer, subject FROM team_accounts WHERE person = ?"
SQL_BIND_ACCOUNT = "INSERT INTO team_accounts (issuer, subject, person) VALUES (?, ?, ?)"
SQL_LIST_ACCOUNTS = """
SELECT issuer, subject, person, CAST(bound_at AS VARCHAR) FROM team_accounts ORDER BY person
"""
SQL_LIST_PEOPLE = """
SELECT person, display_name, source, claimed_roles, CAST(first_seen_at AS VARCHAR), CAST(last_seen_at AS VARCHAR)
FROM team_people ORDER BY person
"""


@dataclass(frozen=True)
class RoleGrant:
    """One role held by one person: who granted it and when."""

    person: str
    role: str
    granted_by: str
    granted_at: str


@dataclass(frozen=True)
class RoleChange:
    """One row of the role audit: who changed whose role, how, and why."""

    audit_id: int
    changed_at: str
    actor: str
    actor_source: str
    person: str
    role: str
    change: str  # "grant" or "revoke"
    reason: str


@dataclass(frozen=True)
class Person:
    """Someone who signed in: their latest display name, identity source and roles claimed by the provider."""

    person: str
    display_name: str
    source: str
    claimed_roles: tuple[str, ...]
    first_seen_at: str
    last_seen_at: str


@dataclass(frozen=True)
class Account:
    """An OIDC account (issuer, subject) and the email it signed in with first: the name it acts under."""

    issuer: str
    subject: str
    person: str
    bound_at: str


def count_role_grants(con: duckdb.DuckDBPyConnection) -> int:
    """How many (person, role) grants the store holds; 0 for a store that was never in team mode."""
    return int(_scalar(con, SQL_COUNT_ROLES) or 0)


def list_roles_of(con: duckdb.DuckDBPyConnection, person: str) -> tuple[str, ...]:
    """The roles stored for ``person`` (exact name), sorted."""
    return tuple(r[0] for r in con.execute(SQL_ROLES_OF, [person]).fetchall())


def list_role_holders(con: duckdb.DuckDBPyConnection, role: str) -> list[str]:
    """Who holds ``role``, sorted."""
    return [r[0] for r in con.execute(SQL_HOLDERS, [role]).fetchall()]


def list_role_grants(con: duckdb.DuckDBPyConnection) -> list[RoleGrant]:
    """Every stored role grant, by person then role."""
    return [RoleGrant(*row) for row in con.execute(SQL_LIST_ROLES).fetchall()]


def change_roles(con: duckdb.DuckDBPyConnection, changes: Sequence[tuple[str, str, str]], actor: str,
                 actor_source: str, reason: str = "", keep: str = "") -> int:
    """Apply (person, role, "grant" | "revoke") changes with one audit row each, in one transaction.

    A grant of a role already held, or a revoke of one not held, changes nothing and writes no row.
    Returns how many changes were made.

    Args:
        keep: a role that must keep a holder (the maintainer's): changes that would leave it with none are
            refused whole. It is checked in the transaction that makes them, under the lock, so two maintainers
            revoking each other at once cannot both pass a check made before either change.

    Raises:
        CurationError: the changes would leave ``keep`` with no holder; nothing was changed.
    """
    made = 0
    with _ROLES_LOCK, transaction(con):
        for person, role, change in changes:
            held = bool(_scalar(con, SQL_HAS_ROLE, [person, role]))
            if change == "grant" and not held:
                con.execute(SQL_GRANT, [person, role, actor])
            elif change == "revoke" and held:
                con.execute(SQL_REVOKE, [person, role])
            elif change not in ("grant", "revoke"):
                raise ValueError(f"a role change is 'grant' or 'revoke', not '{change}'")
            else:
                continue
            con.execute(SQL_AUDIT, [actor, actor_source, person, role, change, reason])
            made += 1
        if keep and not _scalar(con, SQL_COUNT_HOLDERS, [keep]):
            lost = ", ".join(p for p, r, c in changes if r == keep and c == "revoke")
            raise CurationError(f"{lost} is the team's only {keep}; grant the {keep} role to someone else first")
    return made


def grant_first_role(con: duckdb.DuckDBPyConnection, person: str, role: str, source: str, reason: str) -> bool:
    """Grant ``role`` to ``person`` (granted by themselves, with an audit row) only if the store holds no role
    grant at all; the check and the grant are one step, so of several first sign-ins at once exactly one
    wins. Returns whether it was granted."""
    with _ROLES_LOCK, transaction(con):
        if _scalar(con, SQL_COUNT_ROLES):
            return False
        con.execute(SQL_GRANT, [person, role, person])
        con.execute(SQL_AUDIT, [person, source, person, role, "grant", reason])
    return True


def list_role_changes(con: duckdb.DuckDBPyConnection, limit: int = 200) -> list[RoleChange]:
    """The role audit, newest first."""
    return [RoleChange(*row) for row in con.execute(SQL_LIST_AUDIT, [limit]).fetchall()]


def note_person(con: duckdb.DuckDBPyConnection, person: str, display_name: str, source: str,
                claimed_roles: Sequence[str] = ()) -> None:
    """Record a sign-in: the person's display name, identity source and the roles their provider claims."""
    with _PEOPLE_LOCK:
        con.execute(SQL_SEEN, [person, display_name, source, list(claimed_roles)])


def list_people(con: duckdb.DuckDBPyConnection) -> list[Person]:
    """Everyone who signed in, by name."""
    return [Person(p, d, s, tuple(c or ()), f, la) for p, d, s, c, f, la in con.execute(SQL_LIST_PEOPLE).fetchall()]


def find_account_person(con: duckdb.DuckDBPyConnection, issuer: str, subject: str) -> str | None:
    """The name the account (``issuer``, ``subject``) acts under; None: it never signed in."""
    person = _scalar(con, SQL_ACCOUNT_PERSON, [issuer, subject])
    return None if person is None else str(person)


def find_person_account(con: duckdb.DuckDBPyConnection, person: str) -> tuple[str, str] | None:
    """The account (issuer, subject) bound to the name ``person``; None: no account holds it."""
    rows = con.execute(SQL_PERSON_ACCOUNT, [person]).fetchall()
    return (rows[0][0], rows[0][1]) if rows else None


def bind_account(con: duckdb.DuckDBPyConnection, issuer: str, subject: str, person: str) -> str | None:
    """The name the account (``issuer``, ``subject``) acts under: the one bound to it, or else ``person``, bound
    to it now for good; None when ``person`` is bound to another account.

    The reads and the insert are one transaction under this process's lock, so two first sign-ins of one
    account (two tabs) both get the one binding, and of several accounts with one email exactly one does. A
    conflict all the same (another connection of this process) is read again, never raised.
    """
    with _PEOPLE_LOCK:
        try:
            with transaction(con):
                bound = _scalar(con, SQL_ACCOUNT_PERSON, [issuer, subject])
                if bound is not None:
                    return str(bound)
                if con.execute(SQL_PERSON_ACCOUNT, [person]).fetchall():
                    return None
                con.execute(SQL_BIND_ACCOUNT, [issuer, subject, person])
                return person
        except (duckdb.ConstraintException, duckdb.TransactionException):
            return find_account_person(con, issuer, subject)


def list_accounts(con: duckdb.DuckDBPyConnection) -> list[Account]:
    """Every bound account, by name."""
    return [Account(*row) for row in con.execute(SQL_LIST_ACCOUNTS).fetchall()]
