"""``python -m curation <command>``: ingest, fetch, inspect.

Every command takes ``--db PATH`` (default: the ``CURATION_DB`` setting). Errors meant for a
person (bad input, a locked store, no network) print one message and exit with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from tqdm import tqdm

from curation import store
from curation.config import load_settings
from curation.errors import USER_ERRORS, CurationError
from curation.records import IngestReport
from curation.schemas import load_schemas
from curation.workflows.ingestion import CORPUS_FORMATS, KB_FORMATS, ingest_corpus, ingest_kb


def _progress_bar(description: str) -> tuple[tqdm, Callable[[int], None]]:
    bar = tqdm(desc=description, unit=" rows", disable=None, leave=False)

    def update(count: int) -> None:
        bar.update(count - bar.n)

    return bar, update


def _print_report(report: IngestReport, show_skipped: int = 20) -> None:
    print(report.summary())
    for message in report.skipped[:show_skipped]:
        print(f"  skipped: {message}")
    if len(report.skipped) > show_skipped:
        print(f"  ... and {len(report.skipped) - show_skipped} more skipped rows")


def _open(args: argparse.Namespace):
    return store.open_store(args.db)


def cmd_ingest_kb(args: argparse.Namespace) -> int:
    con = _open(args)
    reports = []
    for path in args.paths:
        bar, update = _progress_bar(f"reading {Path(path).name}")
        try:
            reports.append(ingest_kb(con, args.format, path, schema=args.schema, lenient=args.lenient, progress=update))
        finally:
            bar.close()
        _print_report(reports[-1])
    return 0


def cmd_ingest_corpus(args: argparse.Namespace) -> int:
    con = _open(args)
    for path in args.paths:
        bar, update = _progress_bar(f"reading {Path(path).name}")
        try:
            report = ingest_corpus(con, args.format, path, lenient=args.lenient, progress=update)
        finally:
            bar.close()
        _print_report(report)
    counts = store.stats(con)
    print(f"store now holds {counts['documents']} documents, {counts['mentions']} gold mentions")
    return 0


def cmd_add_schemas(args: argparse.Namespace) -> int:
    con = _open(args)
    schemas = load_schemas(args.path)
    with store.transaction(con):
        for schema in schemas:
            store.add_schema(con, schema)
    print(f"added {len(schemas)} schema(s): {', '.join(s.name for s in schemas)}")
    return 0


def cmd_quickstart(args: argparse.Namespace) -> int:
    """Load the sample (data directory, else fetched online), check a first search, say how to start the app."""
    import dataclasses
    import time

    from curation.workflows.quickstart import load_sample
    from curation.workflows.serving import build_matcher, open_served, serving_key

    settings = load_settings()
    if args.data_dir is not None:
        settings = dataclasses.replace(settings, data_dir=args.data_dir)
    con = _open(args)

    def on_file(sample, position: int, total: int) -> None:
        print(f"[{position}/{total}] {sample.label} ({sample.fmt})", flush=True)

    report = load_sample(con, settings, on_file=on_file)
    for outcome in report.outcomes:
        state = (f"failed: {outcome.error}" if outcome.error
                 else f"{outcome.added} added, {outcome.unchanged} already present")
        print(f"  {outcome.file.label}: {state}")
    print(report.summary())
    # What the first search builds (the app builds the same when its first search runs): the text matcher
    # and the ranking of what serves (BM25 alone until a model version is trained).
    started = time.time()
    matcher = build_matcher(con)
    retriever = open_served(con, settings.models_dir, serving_key(con, "PO"))
    mode = "hybrid" if retriever.dense is not None else "bm25"
    hits = retriever.search_text("BRAF V600E", mode=mode, k=10).hits
    print(f"first search checked in {time.time() - started:.1f} s: 'BRAF V600E' ranks {len(hits)} abstracts with "
          f"{retriever.version}; {len(matcher.lexicon)} names in the dictionaries")
    counts = store.stats(con)
    print(f"store {args.db}: {counts['kb_records']} KB records, {counts['documents']} abstracts, "
          f"{counts['synonyms']} synonyms")
    print("start the app: .venv/bin/streamlit run app.py   (then open http://127.0.0.1:8501)")
    return 1 if report.failed else 0


def cmd_stats(args: argparse.Namespace) -> int:
    con = _open(args)
    counts = store.stats(con)
    if args.json:
        print(json.dumps(counts, indent=2, default=str))
    else:
        for key, value in counts.items():
            print(f"{key:>26}: {value}")
    return 0


def cmd_fetch_pubmed(args: argparse.Namespace) -> int:
    from curation.ingest import fetch

    settings = load_settings()
    con = _open(args)
    if args.pmids_from_kb:
        pmids = sorted({r.pmid for r in store.list_kb_records(con) if r.pmid})
    else:
        pmids = fetch.search_pubmed(args.query, retmax=args.retmax, email=settings.ncbi_email,
                                    api_key=settings.ncbi_api_key)
    have = {d.pmid for d in store.get_documents(con, pmids)}
    missing = [p for p in pmids if p not in have]
    print(f"{len(pmids)} PMIDs, {len(missing)} not yet in the store")
    files = fetch.fetch_pubmed(missing, settings.cache_dir / "pubmed", email=settings.ncbi_email,
                               api_key=settings.ncbi_api_key)
    for path in files:
        _print_report(ingest_corpus(con, "pubmed-xml", path, lenient=True))
    return 0


def cmd_fetch_kb(args: argparse.Namespace) -> int:
    from curation.ingest import fetch

    settings = load_settings()
    path = fetch.fetch_civic(settings.cache_dir / "civic")
    print(f"downloaded {path}")
    con = _open(args)
    _print_report(ingest_kb(con, "civic", path, lenient=True))
    return 0


def cmd_ingest_dict(args: argparse.Namespace) -> int:
    from curation.entities.dictionaries import ingest_dictionary

    con = _open(args)
    for path in args.paths:
        read, added = ingest_dictionary(con, args.format, path)
        print(f"{args.format} {path}: {read} names read, {added} new")
    return 0


def cmd_normalise(args: argparse.Namespace) -> int:
    from curation.entities.dictionaries import build_lexicon
    from curation.entities.normalise import Normaliser

    con = _open(args)
    normaliser = Normaliser(build_lexicon(con))
    candidates = normaliser.normalise(args.text, kind=args.kind, k=args.k)
    if args.json:
        print(json.dumps([c.__dict__ if hasattr(c, "__dict__") else c._asdict() for c in candidates], indent=2))
        return 0
    if not candidates:
        print(f"no concept found for '{args.text}'")
        return 1
    for c in candidates:
        print(f"{c.score:6.3f}  {c.kind:<9} {c.canonical:<30} (matched '{c.matched}' by {c.how}; {c.concept_id})")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    import tempfile

    from curation.learning.build import BuildRequest
    from curation.learning.chain import build_from_snapshot
    from curation.learning.sampling import Ablation, SamplingConfig
    from curation.learning.snapshot import export_snapshot, load_snapshot
    from curation.learning.training import TrainConfig
    from curation.schemas import resolve_schema

    con = _open(args)
    schema = resolve_schema(args.schema, store.list_schemas(con))
    with tempfile.TemporaryDirectory(prefix="curation-snapshot-") as folder:
        export_snapshot(con, Path(folder) / "snapshot")
        snapshot = load_snapshot(Path(folder) / "snapshot")
    con.close()
    print(f"snapshot {snapshot.digest[:12]}: {len(snapshot.records)} KB records, {len(snapshot.documents)} abstracts")
    request = BuildRequest(
        schema=schema, base_model=args.base, version=args.out.name, train=not args.zero_shot,
        train_config=TrainConfig(epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.lr,
                                 max_seq_length=args.max_seq_length, max_steps=args.max_steps, device=args.device,
                                 seed=args.seed),
        sampling=SamplingConfig(per_class=args.per_class, ablation=Ablation(args.ablation), seed=args.seed),
    )
    built = build_from_snapshot(snapshot, request, args.out.parent, seed=args.seed, progress_file=args.progress_file)
    version = built.version
    print(f"published {version.path} in {version.manifest.total_seconds} s on {version.manifest.device}")
    for name, value in version.metrics.items():
        print(f"  dev {name}: {value:.4f}")
    return 0


def cmd_retrain(args: argparse.Namespace) -> int:
    """Start a background retraining job (KB + decisions) and follow it until it finishes."""
    from curation.jobs import retraining
    from curation.learning.feedback import FeedbackConfig

    settings = load_settings()
    con = _open(args)
    recovered = retraining.recover_jobs(con)
    for job in recovered:
        print(f"job {job.job_id}: {job.state} {job.message}".rstrip())
    if args.status:
        for job in store.list_jobs(con, limit=10):
            print(f"job {job.job_id}  {job.state:<9}  {job.created_at[:19]}  {job.message}")
        return 0
    if args.cancel:
        running = store.active_jobs(con)
        if not running:
            print("no job is running")
            return 1
        job = retraining.cancel_job(con, running[0])
        print(f"job {job.job_id}: {job.state}; {job.message}")
        if not args.no_wait:
            job = retraining.wait_for(con, job)
            print(f"job {job.job_id}: {job.state}; {job.message}")
        return 0
    request = retraining.RetrainRequest(
        schema=args.schema, base_model=args.base, use_kb=not args.decisions_only,
        use_decisions=not args.kb_only, epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.lr,
        max_seq_length=args.max_seq_length, max_steps=args.max_steps, device=args.device,
        tolerance=args.tolerance, seed=args.seed,
        feedback=FeedbackConfig(conflicts=args.conflicts, repeat=args.decision_repeat),
    )
    job = retraining.start_retrain(con, request, settings)
    print(f"job {job.job_id} started: worker pid {job.pid}, folder {job.job_dir}")
    if args.no_wait:
        print("the app (or `retrain --status`) finishes it: registers the version and activates it if good enough")
        return 0
    last = [""]

    def report(job: store.Job, progress: retraining.Progress | None) -> None:
        if progress is None:
            return
        line = f"  {progress.stage}"
        if progress.step is not None and progress.total:
            line += f" {progress.step}/{progress.total}"
        if progress.loss is not None:
            line += f" loss {progress.loss:.4f}"
        if progress.eta_s:
            line += f" eta {progress.eta_s:.0f} s"
        if line != last[0]:
            print(line, flush=True)
            last[0] = line

    job = retraining.wait_for(con, job, report=report)
    print(f"job {job.job_id}: {job.state}; {job.message}")
    return 0 if job.state == "succeeded" else 1


def cmd_backup(args: argparse.Namespace) -> int:
    from curation.ops.backup import backup_store, backups_dir_for

    folder = args.dir or backups_dir_for(load_settings().backups_dir, args.db)
    made = backup_store(_open(args), folder, keep=args.keep)
    counts = made.counts
    print(f"backed up {args.db} to {made.folder} in {made.manifest['seconds']} s "
          f"({made.manifest['bytes']:,} bytes): {counts.get('decisions', 0)} decision rows, "
          f"{counts.get('kb_records', 0)} KB records, {counts.get('documents', 0)} documents")
    return 0


def cmd_recover(args: argparse.Namespace) -> int:
    from curation.ops.backup import backups_dir_for
    from curation.ops.recovery import recover_store

    folder = args.dir or backups_dir_for(load_settings().backups_dir, args.db)
    report = recover_store(args.db, folder)
    print(json.dumps(report.to_dict(), indent=2) if args.json else "\n".join(report.lines()))
    return 0


# The scripts `python -m curation bench NAME` runs (bench/NAME.py; each writes bench/results/NAME.json).
BENCHMARKS = ("app", "backup", "edel", "feedback", "first_run", "load", "matching", "report", "reproduce", "retrieval",
              "scale")


def cmd_bench(args: argparse.Namespace) -> int:
    """Run ``bench/<name>.py`` as its own process with the arguments after the name.

    The package never imports bench/: a benchmark is a script over the package, started like any other.
    """
    import subprocess

    from curation.config import PROJECT_ROOT

    path = PROJECT_ROOT / "bench" / f"{args.name}.py"
    if not args.name.replace("_", "").isalnum() or args.name.startswith("_") or not path.is_file():
        raise CurationError(f"benchmark script {path} is missing (see bench/ for the names)")
    return subprocess.run([sys.executable, str(path), *args.args], cwd=PROJECT_ROOT).returncode


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

    p = sub.add_parser("ingest-corpus", parents=[common], help="ingest abstracts (and gold annotations)")
    p.add_argument("format", choices=CORPUS_FORMATS)
    p.add_argument("paths", nargs="+", type=Path)
    p.add_argument("--lenient", action="store_true", help="skip bad rows (and list them) instead of stopping")
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
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("retrain", parents=[common],
                       help="retrain in the background on the KB and curators' decisions; activate if not worse")
    p.add_argument("--schema", default="PO")
    p.add_argument("--base", default="", help="base encoder: a sentence-transformers name or folder (default MiniLM)")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=0, help="0: 32 on CUDA, 16 on a CPU")
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
    p.add_argument("--no-wait", action="store_true", help="start the job and return")
    p.add_argument("--status", action="store_true", help="list recent jobs (and finish any whose worker ended)")
    p.add_argument("--cancel", action="store_true", help="cancel the running job")
    p.set_defaults(func=cmd_retrain)

    p = sub.add_parser("backup", parents=[common], help="write a consistent backup of the store (the app does too)")
    p.add_argument("--dir", type=Path, help="this store's backup folder (default: CURATION_BACKUPS_DIR/<store name>)")
    p.add_argument("--keep", type=int, default=10, help="how many backups to keep")
    p.set_defaults(func=cmd_backup)

    p = sub.add_parser("recover", parents=[common],
                       help="when the store will not open: set the damaged files aside, put back the newest good state")
    p.add_argument("--dir", type=Path, help="this store's backup folder (default: CURATION_BACKUPS_DIR/<store name>)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_recover)

    p = sub.add_parser("bench", help="run a benchmark and write its JSON under bench/results/")
    p.add_argument("name", choices=BENCHMARKS)
    p.add_argument("args", nargs=argparse.REMAINDER, help="passed on to the benchmark (try: bench retrieval --help)")
    p.set_defaults(func=cmd_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except USER_ERRORS as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; nothing from the unfinished file was written", file=sys.stderr)
        return 130
