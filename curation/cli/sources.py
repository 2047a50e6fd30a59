"""Commands that bring outside sources into the store: PubMed abstracts, the CIViC download, synonym dictionaries."""

from __future__ import annotations

import argparse
from pathlib import Path

from curation.cli.common import _open, _print_report, operator
from curation.config import load_settings
from curation.workflows import sources
from curation.workflows.ingestion import ingest_corpus, ingest_kb


def cmd_fetch_pubmed(args: argparse.Namespace) -> int:
    settings = load_settings()
    con = _open(args, create=True)
    if args.pmids_from_kb:
        pmids = sources.cited_pmids(con)
    else:
        pmids = sources.search_pubmed(settings, args.query, args.retmax)
    missing = sources.missing_pmids(con, pmids)
    print(f"{len(pmids)} PMIDs, {len(missing)} not yet in the store")
    for path in sources.fetch_pubmed(settings, missing):
        _print_report(ingest_corpus(con, "pubmed-xml", path, lenient=True, who=operator()))
    return 0


def cmd_fetch_kb(args: argparse.Namespace) -> int:
    path = sources.fetch_civic(load_settings())
    print(f"downloaded {path}")
    con = _open(args, create=True)
    _print_report(ingest_kb(con, "civic", path, lenient=True, who=operator()))
    return 0


def cmd_ingest_dict(args: argparse.Namespace) -> int:
    con = _open(args, create=True)
    for path in args.paths or [None]:  # no path: an installed vocabulary's own data
        read, added = sources.add_dictionary(con, operator(), args.format, path)
        where = path or ("(mined from the store's text)" if args.format in sources.MINED_FORMATS
                         else "(installed package)")
        print(f"{args.format} {where}: {read} names read, {added} new")
    return 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add fetch-pubmed, fetch-kb and ingest-dict to ``sub`` (``common`` holds ``--db``)."""
    p = sub.add_parser("fetch-pubmed", parents=[common], help="fetch abstracts from PubMed (needs internet)")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--pmids-from-kb", action="store_true", help="the KB's cited PMIDs missing from the store")
    which.add_argument("--query", help="a PubMed search; its results are added to the corpus")
    p.add_argument("--retmax", type=int, default=200, help="how many search results to fetch")
    p.set_defaults(func=cmd_fetch_pubmed)

    p = sub.add_parser("fetch-kb", parents=[common], help="download and ingest a knowledge base (needs internet)")
    p.add_argument("source", choices=("civic",))
    p.set_defaults(func=cmd_fetch_kb)

    p = sub.add_parser("ingest-dict", parents=[common],
                       help="add a synonym dictionary: a file (DrugBank, HGNC) or an installed vocabulary")
    p.add_argument("format", choices=sources.DICTIONARY_FORMATS)
    p.add_argument("paths", nargs="*", type=Path,
                   help=f"the file(s); needed for {', '.join(sources.FILE_FORMATS)}, optional for installed "
                        "vocabularies")
    p.set_defaults(func=cmd_ingest_dict)
