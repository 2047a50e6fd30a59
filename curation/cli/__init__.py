"""``python -m curation <command>``: ingest, fetch, inspect.

Every command takes ``--db PATH`` (default: the ``CURATION_DB`` setting). Errors meant for a
person (bad input, a locked store, no network) print one message and exit with status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from curation.cli.data import (
    cmd_add_schemas,
    cmd_export,
    cmd_fetch_kb,
    cmd_fetch_pubmed,
    cmd_ingest_corpus,
    cmd_ingest_dict,
    cmd_ingest_kb,
    cmd_normalise,
    cmd_quickstart,
    cmd_stats,
)
from curation.cli.entities import cmd_activate_linker, cmd_activate_recogniser, cmd_annotate, cmd_reannotate
from curation.cli.models import (
    BENCHMARKS,
    cmd_backup,
    cmd_bench,
    cmd_recover,
    cmd_retrain,
    cmd_train,
    cmd_train_linker,
    cmd_train_recogniser,
)
from curation.cli.search import DEFAULT_TOP, MAX_TOP, cmd_search
from curation.cli.suggest import cmd_rescore, cmd_suggest, cmd_train_relations
from curation.cli.team import cmd_roles, cmd_withdraw
from curation.config import load_settings
from curation.errors import USER_ERRORS, StoreLockedError
from curation.workflows.ingestion import BATCH_DOCUMENTS, CORPUS_FORMATS, KB_FORMATS

__all__ = ["APP_PAGES", "BENCHMARKS", "build_parser", "main"]

#: Where in the running app each command's work is done (named when the app holds the store).
APP_PAGES = {
    **dict.fromkeys(("ingest-kb", "ingest-corpus", "add-schemas", "quickstart", "stats", "fetch-pubmed", "fetch-kb",
                     "ingest-dict"), "Knowledge base"),
    **dict.fromkeys(("search", "normalise", "suggest", "withdraw"), "Curate"),
    "roles": "Team",
    **dict.fromkeys(("activate-recogniser", "activate-linker", "train", "train-recogniser", "retrain",
                     "train-relations", "rescore"),
                    "Train & evaluate"),
}


def _index_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--index-kind", choices=("auto", "flat", "hnsw", "ivfpq"), default="",
                   help="the dense index (default CURATION_INDEX_KIND, else auto: flat up to 200k abstracts, then "
                        "HNSW while it fits in half the memory, then IVF-PQ with 8-bit re-ranking)")
    p.add_argument("--backend", choices=("faiss", "milvus"), default="",
                   help="where the vectors live (default CURATION_INDEX_BACKEND, else faiss; milvus: "
                        "CURATION_MILVUS_URI, or a Milvus Lite file in the version folder)")


def build_parser() -> argparse.ArgumentParser:
    settings = load_settings()
    parser = argparse.ArgumentParser(prog="python -m curation", description=__doc__.splitlines()[0])
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", type=Path, default=settings.db_path, help=f"store file (default {settings.db_path})")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("ingest-kb", parents=[common], help="ingest a knowledge base file")
    p.add_argument("format", choices=KB_FORMATS)
    p.add_argument("paths", nargs="+", type=Path)
    p.add_argument("--schema", help="schema of a generic TSV (PO, PTM, or one added with add-schemas)")
    p.add_argument("--lenient", action="store_true", help="skip bad rows (and list them) instead of stopping")
    p.set_defaults(func=cmd_ingest_kb)

    p = sub.add_parser("ingest-corpus", parents=[common], help="ingest abstracts (and gold annotations)",
                       description="Ingest corpus files or folders of them (a PubMed baseline folder), file by file. "
                                   "A file already ingested whole and not modified since is skipped, so a killed run "
                                   "goes on where it stopped; the file it stopped in is read again and merged by PMID.")
    p.add_argument("format", choices=CORPUS_FORMATS)
    p.add_argument("paths", nargs="+", type=Path, help="files, or folders whose files of the format are read by name")
    p.add_argument("--lenient", action="store_true",
                   help=f"skip bad rows (and list them) instead of stopping, and commit every {BATCH_DOCUMENTS:,} "
                        "documents (PubMed baseline files need it: many articles have no abstract)")
    p.add_argument("--again", action="store_true", help="read files already ingested whole again")
    p.set_defaults(func=cmd_ingest_corpus)

    p = sub.add_parser("add-schemas", parents=[common], help="add user-defined relation schemas from a TOML file")
    p.add_argument("path", type=Path)
    p.set_defaults(func=cmd_add_schemas)

    p = sub.add_parser("quickstart", parents=[common],
                       help="load the sample (CURATION_DATA_DIR, else fetched online) and check a first search")
    p.add_argument("--data-dir", type=Path, default=None, help=f"folder of sample files (default {settings.data_dir})")
    p.set_defaults(func=cmd_quickstart)
    p = sub.add_parser("stats", parents=[common], help="counts of what the store holds")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("search", parents=[common],
                       help="search a partial relation as the Curate page does: linked concepts, ranked abstracts",
                       description="Search as the Curate page does (same linker, concept index and served version), "
                                   "with each hit's provenance. Exit status: 0; 1 when the one relation searched has "
                                   "no hits; 2 for bad input (nothing is written). The store is opened read-only.")
    p.add_argument("--schema", help="the relation's schema (PO, PTM, or one added with add-schemas); in a --queries "
                                    "file, the schema of lines that name none")
    p.add_argument("--entity", action="append", metavar="SLOT=NAME",
                   help="a typed slot, e.g. --entity Gene=BRAF --entity Variant=V600E (repeat per slot)")
    p.add_argument("--queries", type=Path, metavar="FILE.jsonl",
                   help='relations, one JSON object a line: {"schema": "PO", "entities": {"Gene": "BRAF"}, '
                        '"top": 20, "id": "q1", "apply": {"Gene": "673"}}; prints one JSON line per relation')
    p.add_argument("--top", type=int, default=DEFAULT_TOP, help=f"hits per relation (1 to {MAX_TOP})")
    p.add_argument("--mode", choices=("hybrid", "bm25"), default="hybrid",
                   help="hybrid: the active version's dense model re-scores (when one serves); bm25: lexical only")
    p.add_argument("--rm3", action="store_true", help="RM3 pseudo-relevance feedback on the lexical stage")
    p.add_argument("--apply", action="append", metavar="SLOT=ID",
                   help="apply a suggested concept to a slot the search did not link (an id it lists as alternative)")
    p.add_argument("--json", action="store_true", help="JSON instead of a table")
    p.add_argument("--out", type=Path, help="write the output here, whole or not at all (default: standard output)")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("suggest", parents=[common],
                       help="suggest the missing slot of a partial relation: candidates the top abstracts relate "
                            "to it, marked new to the KB",
                       description="What the Curate page's 'Suggested <slot>' panel shows: candidates for the missing "
                                   "slot, ranked from the relation scores of the served top N abstracts, each with "
                                   "its supporting papers and sentences and whether the KB holds it. Exit status: "
                                   "0; 1 when the one relation asked has no suggestion; 2 for bad input. The store "
                                   "is opened read-only.")
    p.add_argument("--schema", help="the relation's schema (PO, PTM, ...); in a --queries file, the default")
    p.add_argument("--entity", action="append", metavar="SLOT=NAME",
                   help="a typed slot, e.g. --entity Gene=BRAF --entity Variant=V600E (repeat per slot)")
    p.add_argument("--queries", type=Path, metavar="FILE.jsonl",
                   help='partial relations, one JSON object a line: {"schema": "PO", "entities": {"Gene": "BRAF"}, '
                        '"top": 20, "id": "q1"} ("top": documents read); prints one JSON line per relation')
    p.add_argument("--top-docs", type=int, default=None,
                   help="documents of the served ranking read (1 to 500; default: the number chosen on dev)")
    p.add_argument("--mode", choices=("hybrid", "bm25"), default="hybrid",
                   help="the served search's mode (hybrid: the active version's dense model re-scores)")
    p.add_argument("--apply", action="append", metavar="SLOT=ID", help="apply a suggested concept to a slot")
    p.add_argument("--new-only", action="store_true", help="only the suggestions the KB lacks")
    p.add_argument("--json", action="store_true", help="JSON instead of a table")
    p.add_argument("--export", type=Path, metavar="FILE.csv|FILE.jsonl",
                   help="also write the review list: one row per supporting paper (CSV) or suggestion (JSONL)")
    p.add_argument("--export-format", choices=("csv", "jsonl", "civic-suggestions"), default=None,
                   help="the review list's format (default: from the file's extension); civic-suggestions: CIViC's "
                        "source-suggestion CSV (PO relations), which ingest-kb civic-suggestions reads back")
    p.add_argument("--out", type=Path, help="write the output here, whole or not at all (default: standard output)")
    p.set_defaults(func=cmd_suggest)

    p = sub.add_parser("train-relations", parents=[common],
                       help="train the relation scorer on BioRED + BC5CDR Train and curators' decisions; activate "
                            "it when it is not worse on Dev than the active one, and re-score the documents")
    p.add_argument("--data-dir", type=Path, default=None, help="the corpora (default CURATION_DATA_DIR)")
    p.add_argument("--name", default=None, help="the scorer's name (default relations-<date>)")
    p.add_argument("--no-decisions", action="store_true", help="train on the corpora alone")
    p.add_argument("--no-activate", action="store_true", help="only write the folder")
    p.add_argument("--force", action="store_true", help="activate even when it is worse on Dev than the active one")
    p.set_defaults(func=cmd_train_relations)

    p = sub.add_parser("rescore", parents=[common],
                       help="store relation scores for the documents the active scorer has not scored")
    p.add_argument("--scorer", type=Path, default=None, help="a folder train-relations wrote: activate it first")
    p.set_defaults(func=cmd_rescore)

    p = sub.add_parser("fetch-pubmed", parents=[common], help="fetch abstracts from PubMed (needs internet)")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--pmids-from-kb", action="store_true", help="the KB's cited PMIDs missing from the store")
    which.add_argument("--query", help="a PubMed search; its results are added to the corpus")
    p.add_argument("--retmax", type=int, default=200, help="how many search results to fetch")
    p.set_defaults(func=cmd_fetch_pubmed)

    p = sub.add_parser("fetch-kb", parents=[common], help="download and ingest a knowledge base (needs internet)")
    p.add_argument("source", choices=("civic",))
    p.set_defaults(func=cmd_fetch_kb)

    p = sub.add_parser("ingest-dict", parents=[common], help="add a synonym dictionary (DrugBank, HGNC)")
    p.add_argument("format", choices=("drugbank", "hgnc"))
    p.add_argument("paths", nargs="+", type=Path)
    p.set_defaults(func=cmd_ingest_dict)

    p = sub.add_parser("normalise", parents=[common], help="find the concepts a typed name may mean")
    p.add_argument("text")
    p.add_argument("--kind", choices=("gene", "variant", "chemical", "disease", "ptm", "residue"))
    p.add_argument("-k", type=int, default=5, help="how many candidates")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_normalise)

    p = sub.add_parser("annotate", parents=[common],
                       help="write every recognised mention of text / JSONL / PubTator files as PubTator or JSONL")
    p.add_argument("inputs", nargs="+", type=Path)
    p.add_argument("--format", choices=("text", "jsonl", "pubtator"), default=None,
                   help="input format (default: from each file's name: .jsonl, *pubtator*, else text with documents "
                        "separated by blank lines)")
    p.add_argument("--out", type=Path, help="output file, written whole or not at all (default: standard output)")
    p.add_argument("--output-format", choices=("pubtator", "jsonl"), default="pubtator")
    p.add_argument("--recogniser", type=Path, help="a recogniser folder (default: the store's active one, if any)")
    p.set_defaults(func=cmd_annotate)

    for kind, does, off, func in (
        ("recogniser", "re-annotate the documents", "use no recogniser (dictionaries only)", cmd_activate_recogniser),
        ("linker", "re-annotate with the active recogniser", "use no linker (exact dictionary names only)",
         cmd_activate_linker),
    ):
        p = sub.add_parser(f"activate-{kind}", parents=[common],
                           help=f"check a trained {kind} folder, make it the app's, {does}")
        p.add_argument("path", type=Path, nargs="?")
        p.add_argument("--off", action="store_true", help=off)
        p.add_argument("--no-reannotate", action="store_true", help="only activate; `reannotate` later")
        p.set_defaults(func=func)

    p = sub.add_parser("reannotate", parents=[common],
                       help="annotate the store's documents not yet annotated by the current annotator")
    p.add_argument("--all", action="store_true", help="every document, stale or not")
    p.set_defaults(func=cmd_reannotate)

    p = sub.add_parser("train", parents=[common], help="train an EDEL retriever on the KB and publish a model version")
    p.add_argument("--schema", required=True)
    p.add_argument("--base", default="", help="base encoder: a sentence-transformers name or folder (default MiniLM)")
    p.add_argument("--out", type=Path, required=True, help="models/<version> (must not exist)")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--max-seq-length", type=int, default=256)
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: no limit)")
    p.add_argument("--per-class", type=int, default=2, help="negatives per class per positive")
    p.add_argument("--ablation", default="edel", choices=("edel", "no_multimargin", "no_noisy_pos", "no_hard_neg"))
    p.add_argument("--zero-shot", action="store_true", help="index with the base model, no training")
    p.add_argument("--device", default="", help="cuda or cpu (default: CUDA when present)")
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--progress-file", type=Path, help="JSON progress (step, total, loss, eta) for other programs")
    _index_options(p)
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("train-recogniser",
                       help="train the entity recogniser on BioRED + BC5CDR Train (selected on BioRED Dev)")
    p.add_argument("--data-dir", type=Path, default=None, help=f"annotated corpora (default {settings.data_dir})")
    p.add_argument("--out", type=Path, default=None,
                   help=f"recogniser folder (default {settings.models_dir}/recognisers/biomed)")
    p.add_argument("--epochs", type=int, default=25, help="at most this many epochs (best dev checkpoint kept)")
    p.add_argument("--width", type=int, default=128, help="token vector width")
    p.add_argument("--gpu", type=int, default=-1, help="GPU id (default: CPU)")
    p.set_defaults(func=cmd_train_recogniser)

    p = sub.add_parser("train-linker", help="fine-tune the entity linker's name encoder on synonym sets")
    p.add_argument("--data-dir", type=Path, default=None, help=f"shared data folder (default {settings.data_dir})")
    p.add_argument("--out", type=Path, default=None,
                   help=f"linker folder (default {settings.models_dir / 'linkers' / 'names-minilm'})")
    p.add_argument("--steps", type=int, default=600, help="optimisation steps (about 12 min on one CPU core)")
    p.add_argument("--device", default="", help="cuda or cpu (default: CUDA when present)")
    p.add_argument("--seed", type=int, default=13)
    p.set_defaults(func=cmd_train_linker)

    p = sub.add_parser("retrain", parents=[common],
                       help="retrain in the background on the KB and curators' decisions; activate if not worse")
    p.add_argument("--schema", default="PO")
    p.add_argument("--base", default="", help="base encoder: a sentence-transformers name or folder (default MiniLM)")
    p.add_argument("--epochs", type=int, default=0, help="0: 10 on CUDA (best dev epoch kept), 1 on a CPU")
    p.add_argument("--batch-size", type=int, default=0, help="0: 32 on CUDA, 16 on a CPU")
    p.add_argument("--cross-encoder", choices=("auto", "on", "off"), default="auto",
                   help="also train the cross-encoder re-ranker (auto: on a GPU only); served if it helps on dev")
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--max-seq-length", type=int, default=0, help="0: 256 tokens on CUDA, 128 on a CPU")
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: no limit)")
    p.add_argument("--device", default="", help="cuda or cpu (default: CUDA when present)")
    p.add_argument("--tolerance", type=float, default=0.01, help="activate when dev nDCG@10 >= active's minus this")
    p.add_argument("--conflicts", choices=("exclude", "latest"), default="exclude",
                   help="items curators disagree on, without adjudication: leave out, or take the latest")
    p.add_argument("--decision-repeat", type=int, default=1, help="how many times each decision pair is used")
    p.add_argument("--seed", type=int, default=13)
    only = p.add_mutually_exclusive_group()
    only.add_argument("--kb-only", action="store_true", help="train on the KB alone")
    only.add_argument("--decisions-only", action="store_true", help="train on the decisions alone")
    _index_options(p)
    p.add_argument("--no-wait", action="store_true", help="start the job and return")
    p.add_argument("--status", action="store_true", help="list recent jobs (and finish any whose worker ended)")
    p.add_argument("--cancel", action="store_true", help="cancel the running job")
    p.set_defaults(func=cmd_retrain)

    p = sub.add_parser("export", parents=[common],
                       help="write curators' work: decisions, the KB records they made, or CIViC source suggestions")
    p.add_argument("what", choices=("decisions", "records", "civic-suggestions"))
    p.add_argument("--format", default="tsv", help="tsv or jsonl (decisions, records); civic-suggestions is CSV")
    p.add_argument("--schema", default="PO", help="records: the schema whose records to write")
    p.add_argument("--curator", help="only this curator's decisions (default: everyone's)")
    p.add_argument("--active-only", action="store_true", help="decisions: leave out superseded and undone ones")
    p.add_argument("--out", type=Path, help="file to write (default: standard output; the summary goes to stderr)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("backup", parents=[common], help="write a consistent backup of the store (the app does too)")
    p.add_argument("--dir", type=Path, help="this store's backup folder (default: CURATION_BACKUPS_DIR/<store name>)")
    p.add_argument("--keep", type=int, default=10, help="how many backups to keep")
    p.set_defaults(func=cmd_backup)

    p = sub.add_parser("recover", parents=[common],
                       help="when the store will not open: set the damaged files aside, put back the newest good state")
    p.add_argument("--dir", type=Path, help="this store's backup folder (default: CURATION_BACKUPS_DIR/<store name>)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_recover)

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

    p = sub.add_parser("bench", help="run a benchmark and write its JSON under bench/results/")
    p.add_argument("name", choices=BENCHMARKS)
    p.add_argument("args", nargs=argparse.REMAINDER, help="passed on to the benchmark (try: bench retrieval --help)")
    p.set_defaults(func=cmd_bench)
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
    except KeyboardInterrupt:
        print("interrupted; nothing from the unfinished file was written", file=sys.stderr)
        return 130
