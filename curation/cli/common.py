"""What every command shares: opening the store, progress bars, ingest reports."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from tqdm import tqdm

from curation import access
from curation.access import Action, Identity, local_operator
from curation.errors import CurationError
from curation.records import IngestReport
from curation.store.opening import open_store


def _progress_bar(description: str) -> tuple[tqdm, Callable[[int], None]]:
    bar = tqdm(desc=description, unit=" rows", disable=None, leave=False)

    def update(count: int) -> None:
        bar.update(count - bar.n)

    return bar, update


def report_lines(report: IngestReport, show: int = 20) -> list[str]:
    """An ingest's summary, then its first ``show`` skipped rows and warnings, a line each."""
    lines = [report.summary()]
    for label, messages in (("skipped", report.skipped), ("warning", report.warnings)):
        lines += [f"  {label}: {message}" for message in messages[:show]]
        if len(messages) > show:
            lines.append(f"  ... and {len(messages) - show} more {label} lines")
    return lines


def _print_report(report: IngestReport, show_skipped: int = 20) -> None:
    print("\n".join(report_lines(report, show_skipped)))


CREATING_COMMANDS = "ingest-kb, ingest-corpus, ingest-dict, add-schemas, quickstart, fetch-pubmed or fetch-kb"


def _open(args: argparse.Namespace, create: bool = False, read_only: bool = False):
    """The store at ``--db``. Only a command that puts data in it (``create``) may create it, and the folders
    above it: anything else given a mistyped path would leave an empty store there and report on it.
    A command that writes nothing opens it ``read_only``: DuckDB lets any number of such processes share the
    file (a ``search`` and an ``annotate`` at once), where a read-write one needs it alone.

    Raises:
        CurationError: there is no store at ``--db`` and the command does not create one.
    """
    if not create and str(args.db) != ":memory:" and not args.db.exists():
        raise CurationError(f"{args.db}: no store here (check --db or CURATION_DB); a store is created by "
                            f"{CREATING_COMMANDS}")
    con = open_store(args.db, read_only=read_only)
    if not read_only:
        _apply_schema_file(con)
    return con


def _apply_schema_file(con) -> None:
    """Save ``CURATION_SCHEMAS``'s schemas into a store opened for writing (:mod:`curation.workflows.schemas`)."""
    from curation.config import load_settings
    from curation.workflows.schemas import apply_schema_file

    path = load_settings().schema_file
    if path is not None:
        try:
            apply_schema_file(con, path)
        except Exception:
            con.close()
            raise


def _open_for(args: argparse.Namespace, action: Action, create: bool = False):
    """The store, for a command that writes to it without a workflow function: the same role check (the shell
    holds every role, see :func:`operator`)."""
    con = _open(args, create=create)
    access.require(con, operator(), action)
    return con


def operator() -> Identity:
    """Who a command acts as: the machine account running it (every role; see curation.access.identity)."""
    return local_operator()
