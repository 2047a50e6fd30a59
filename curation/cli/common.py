"""What every command shares: opening the store, progress bars, ingest reports."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from tqdm import tqdm

from curation.errors import CurationError
from curation.records import IngestReport
from curation.workflows.shell import open_command_store, operator

__all__ = ["CREATING_COMMANDS", "_open", "_print_report", "_progress_bar", "operator", "report_lines"]


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
    return open_command_store(args.db, read_only=read_only)
