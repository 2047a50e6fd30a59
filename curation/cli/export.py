"""``python -m curation export``: curators' work written out (decisions, the KB records they made, CIViC
source suggestions)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from curation.cli.common import operator
from curation.workflows.shell import open_command_store


def cmd_export(args: argparse.Namespace) -> int:
    """Write curators' work: decisions, the KB records they made, or CIViC source suggestions."""
    from curation.errors import CurationError
    from curation.files import write_atomic
    from curation.workflows import export

    con = open_command_store(args.db, read_only=True)
    try:
        if args.what == "civic-suggestions":
            made = export.civic_suggestions(con, curator=args.curator, who=operator())
        elif args.format not in export.FORMATS:
            raise CurationError(f"--format must be one of {export.FORMATS} for {args.what}")
        elif args.what == "decisions":
            made = export.decisions_file(con, args.format, curator=args.curator, active_only=args.active_only,
                                            who=operator())
        else:
            schema = export.records_schema(con, args.schema)
            made = export.new_records_file(con, schema, args.format, curator=args.curator, who=operator())
    finally:
        con.close()
    if args.out:
        write_atomic(args.out, made.text)  # all or nothing
        print(f"wrote {args.out}: {made.summary()}")
    else:
        print(made.text, end="")
        print(made.summary(), file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add export to ``sub`` (``common`` holds ``--db``)."""
    p = sub.add_parser("export", parents=[common],
                       help="write curators' work: decisions, the KB records they made, or CIViC source suggestions")
    p.add_argument("what", choices=("decisions", "records", "civic-suggestions"))
    p.add_argument("--format", default="tsv", help="tsv or jsonl (decisions, records); civic-suggestions is CSV")
    p.add_argument("--schema", default="PO", help="records: the schema whose records to write")
    p.add_argument("--curator", help="only this curator's decisions (default: everyone's)")
    p.add_argument("--active-only", action="store_true", help="decisions: leave out superseded and undone ones")
    p.add_argument("--out", type=Path, help="file to write (default: standard output; the summary goes to stderr)")
    p.set_defaults(func=cmd_export)
