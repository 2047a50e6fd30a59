"""Commands that bring outside sources into the store: PubMed abstracts, the CIViC download, synonym dictionaries."""

from __future__ import annotations

import argparse
from pathlib import Path

from curation.access import Action
from curation.cli.common import _open, _open_for, _print_report, operator
from curation.config import load_settings
from curation.store.corpus import get_documents
from curation.store.kb import list_kb_records
from curation.workflows.ingestion import ingest_corpus, ingest_kb


def cmd_fetch_pubmed(args: argparse.Namespace) -> int:
    from curation.ingest import fetch

    settings = load_settings()
    con = _open(args, create=True)
    if args.pmids_from_kb:
        pmids = sorted({r.pmid for r in list_kb_records(con) if r.pmid})
    else:
        pmids = fetch.search_pubmed(args.query, retmax=args.retmax, email=settings.ncbi_email,
                                    api_key=settings.ncbi_api_key)
    have = {d.pmid for d in get_documents(con, pmids)}
    missing = [p for p in pmids if p not in have]
    print(f"{len(pmids)} PMIDs, {len(missing)} not yet in the store")
    files = fetch.fetch_pubmed(missing, settings.cache_dir / "pubmed", email=settings.ncbi_email,
                               api_key=settings.ncbi_api_key)
    for path in files:
        _print_report(ingest_corpus(con, "pubmed-xml", path, lenient=True, who=operator()))
    return 0


def cmd_fetch_kb(args: argparse.Namespace) -> int:
    from curation.ingest import fetch

    settings = load_settings()
    path = fetch.fetch_civic(settings.cache_dir / "civic")
    print(f"downloaded {path}")
    con = _open(args, create=True)
    _print_report(ingest_kb(con, "civic", path, lenient=True, who=operator()))
    return 0


def cmd_ingest_dict(args: argparse.Namespace) -> int:
    from curation.entities.dictionaries import MINED_FORMATS, ingest_dictionary

    con = _open_for(args, Action.IMPORT, create=True)
    for path in args.paths or [None]:  # no path: an installed vocabulary's own data
        read, added = ingest_dictionary(con, args.format, path)
        where = path or ("(mined from the store's text)" if args.format in MINED_FORMATS else "(installed package)")
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

    from curation.entities.dictionaries import DICTIONARY_FORMATS, FILE_FORMATS

    p = sub.add_parser("ingest-dict", parents=[common],
                       help="add a synonym dictionary: a file (DrugBank, HGNC) or an installed vocabulary")
    p.add_argument("format", choices=DICTIONARY_FORMATS)
    p.add_argument("paths", nargs="*", type=Path,
                   help=f"the file(s); needed for {', '.join(FILE_FORMATS)}, optional for installed vocabularies")
    p.set_defaults(func=cmd_ingest_dict)
