"""Commands that keep the store safe: ``backup`` and ``recover``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from curation.cli.common import _open, operator
from curation.config import load_settings


def _count_of_backups(text: str) -> int:
    """``--keep``: a whole number of at least 1 (0 or less would delete every older backup)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: keep at least 1 backup (the one being written)")
    return value


def cmd_backup(args: argparse.Namespace) -> int:
    from curation.workflows.maintenance import back_up, backup_folder

    folder = args.dir or backup_folder(load_settings(), args.db)
    made = back_up(_open(args), load_settings(), folder, keep=args.keep, who=operator())
    counts = made.counts
    print(f"backed up {args.db} to {made.folder} in {made.manifest['seconds']} s "
          f"({made.manifest['bytes']:,} bytes): {counts.get('decisions', 0)} decision rows, "
          f"{counts.get('kb_records', 0)} KB records, {counts.get('documents', 0)} documents")
    return 0


def cmd_recover(args: argparse.Namespace) -> int:
    from curation.workflows.maintenance import backup_folder, restore

    folder = args.dir or backup_folder(load_settings(), args.db)
    report = restore(args.db, load_settings(), folder, who=operator())
    print(json.dumps(report.to_dict(), indent=2) if args.json else "\n".join(report.lines()))
    return 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add backup and recover to ``sub`` (``common`` holds ``--db``)."""
    p = sub.add_parser("backup", parents=[common], help="write a consistent backup of the store (the app does too)")
    p.add_argument("--dir", type=Path, help="this store's backup folder (default: CURATION_BACKUPS_DIR/<store name>)")
    p.add_argument("--keep", type=_count_of_backups, default=10, help="how many backups to keep (at least 1)")
    p.set_defaults(func=cmd_backup)

    p = sub.add_parser("recover", parents=[common],
                       help="when the store will not open: set the damaged files aside, put back the newest good state")
    p.add_argument("--dir", type=Path, help="this store's backup folder (default: CURATION_BACKUPS_DIR/<store name>)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_recover)
