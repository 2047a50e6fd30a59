"""``python -m curation <command>``: ingest, fetch, inspect.

Every command takes ``--db PATH`` (default: the ``CURATION_DB`` setting). Errors meant for a
person (bad input, a locked store, no network) print one message and exit with status 2.

May import: curation.workflows (each command's work, as the pages' is) and the shared vocabulary only; a handler
parses its arguments, calls the facade and prints (an import contract in pyproject.toml).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from curation.cli import bench, data, entities, export, maintenance, models, screen, search, sources, suggest, team
from curation.config import load_settings
from curation.errors import USER_ERRORS, StoreLockedError

__all__ = ["APP_PAGES", "COMMAND_MODULES", "build_parser", "main"]

#: Where in the running app each command's work is done (named when the app holds the store).
APP_PAGES = {
    **dict.fromkeys(("ingest-kb", "ingest-corpus", "add-schemas", "quickstart", "stats", "fetch-pubmed", "fetch-kb",
                     "ingest-dict"), "Knowledge base"),
    **dict.fromkeys(("search", "normalise", "suggest", "withdraw", "screen"), "Curate"),
    "roles": "Team",
    **dict.fromkeys(("activate-recogniser", "activate-linker", "train", "train-recogniser", "retrain",
                     "train-relations", "rescore"),
                    "Train & evaluate"),
}


#: The command modules, in the order ``--help`` lists their commands; each adds its own parsers (``register``).
COMMAND_MODULES = (data, search, screen, suggest, sources, entities, models, export, maintenance, team, bench)


def build_parser() -> argparse.ArgumentParser:
    """The command line: the ``--db`` option every store command shares, then each module's commands."""
    settings = load_settings()
    parser = argparse.ArgumentParser(prog="python -m curation", description=__doc__.splitlines()[0])
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", type=Path, default=settings.db_path, help=f"store file (default {settings.db_path})")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMAND_MODULES:
        module.register(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except StoreLockedError as exc:  # most often the running app: say where in the app this command's work is done
        page = APP_PAGES.get(args.command or "")
        print(f"error: {exc}" + (f" If it is the app, do this on its {page} page instead." if page else ""),
              file=sys.stderr)
        return 2
    except USER_ERRORS as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a path given on the command line that cannot be read or written: one line naming it
        print(f"error: {exc.filename}: {exc.strerror}" if exc.filename else f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; nothing from the unfinished file was written", file=sys.stderr)
        return 130
