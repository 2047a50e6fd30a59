"""Team mode from the shell: ``roles`` (list, grant, revoke, audit, leave-team) and ``withdraw`` (one decision by id).

The command line acts as the machine account running it (``local:<account>``), with every role: whoever can
open the store read-write can edit its file too. Every change is written to the role audit under that name.
"""

from __future__ import annotations

import argparse
import json
import sys

from curation.cli.common import _open, operator


def cmd_roles(args: argparse.Namespace) -> int:
    """List the team's roles, grant or revoke one, or print the audit."""
    from curation.workflows import team

    con = _open(args, read_only=args.action in ("list", "audit"))  # listing writes nothing: it shares the store
    if args.action == "leave-team":
        if not args.yes:
            print("error: roles leave-team revokes every role and lets typed names write again; add --yes",
                  file=sys.stderr)
            return 2
        print(team.leave_team_mode(con, operator(), args.reason))
        return 0
    if args.action in ("grant", "revoke"):
        if not args.person or not args.role:
            print(f"error: roles {args.action} needs a person and a role, e.g. roles {args.action} ana@example.org "
                  f"curator (roles: {', '.join(team.ROLES)})", file=sys.stderr)
            return 2
        change = team.grant_role if args.action == "grant" else team.revoke_role
        print(change(con, operator(), args.person, args.role, args.reason))
        return 0
    rows = team.audit_rows(con) if args.action == "audit" else team.team_rows(con)
    if args.json:
        print(json.dumps(rows, indent=2))
    elif not rows:
        print("no role has changed yet" if args.action == "audit" else
              "nobody holds a role: the store is in personal mode (the first sign-in in team mode becomes maintainer)")
    else:
        for row in rows:
            print("  ".join(f"{k}: {v}" for k, v in row.items() if v != ""))
    return 0


def cmd_withdraw(args: argparse.Namespace) -> int:
    """Withdraw one decision by id (kept in the history, marked withdrawn; its KB record removed)."""
    from curation.workflows.curate import withdraw

    decision = withdraw(_open(args), operator(), args.decision)
    print(f"withdrew decision {decision.decision_id} by {decision.curator} ({decision.identity_source}): PMID "
          f"{decision.pmid}, {decision.grade}")
    return 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add roles and withdraw to ``sub`` (``common`` holds ``--db``)."""
    p = sub.add_parser("roles", parents=[common],
                       help="team mode: who holds which role; grant or revoke one (audited); the audit")
    p.add_argument("action", nargs="?", choices=("list", "grant", "revoke", "audit", "leave-team"), default="list")
    p.add_argument("person", nargs="?", help="the person's sign-in email (grant, revoke)")
    p.add_argument("role", nargs="?", help="curator, annotator, adjudicator or maintainer (grant, revoke)")
    p.add_argument("--reason", default="", help="why, kept in the audit")
    p.add_argument("--yes", action="store_true", help="leave-team: yes, revoke every role")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_roles)

    p = sub.add_parser("withdraw", parents=[common],
                       help="withdraw one decision by id (kept in the history, marked withdrawn)")
    p.add_argument("decision", type=int, help="the decision's id (the decisions export's first column)")
    p.set_defaults(func=cmd_withdraw)
