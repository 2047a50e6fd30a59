"""Commands that fill and inspect the store: ingest a KB or a corpus, add schemas, quickstart, stats."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from curation.cli.common import _open, _print_report, _progress_bar, operator, report_lines
from curation.config import load_settings
from curation.errors import USER_ERRORS
from curation.workflows.ingestion import (
    BATCH_DOCUMENTS,
    CORPUS_FORMATS,
    KB_FORMATS,
    ingest_corpus_files,
    ingest_kb,
)
from curation.workflows.schemas import add_schemas
from curation.workflows.session import store_counts


def cmd_ingest_kb(args: argparse.Namespace) -> int:
    con = _open(args, create=True)
    reports = []
    for path in args.paths:
        bar, update = _progress_bar(f"reading {Path(path).name}")
        try:
            reports.append(ingest_kb(con, args.format, path, schema=args.schema, lenient=args.lenient, progress=update,
                                     who=operator()))
        finally:
            bar.close()
        _print_report(reports[-1])
    return 0


def cmd_ingest_corpus(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    con = _open(args, create=True)
    files = tqdm(desc="files", unit=" files", disable=None, position=0)
    records = tqdm(desc="records", unit=" records", disable=None, position=1)
    current: dict[str, object] = {"path": None, "base": 0}
    committed: list[Path] = []  # files in the store (read now, or before), for a run stopped at a later file

    def on_file(path: Path, position: int, total: int, done_before: bool) -> None:
        files.total = total
        files.update(position - 1 - files.n)
        files.set_postfix_str(path.name)
        current.update(path=path, base=records.n)
        if done_before:
            committed.append(path)
            tqdm.write(f"{args.format} {path}: already ingested whole and not modified since; skipped "
                       "(--again reads it again)")

    def update(count: int) -> None:
        records.update(int(current["base"]) + count - records.n)

    def on_report(report) -> None:
        committed.append(Path(report.path))
        records.update(int(current["base"]) + report.added + report.unchanged - records.n)
        for line in report_lines(report):
            tqdm.write(line)

    try:
        run = ingest_corpus_files(con, args.format, args.paths, lenient=args.lenient, again=args.again, who=operator(),
                                  progress=update, on_file=on_file, on_report=on_report,
                                  on_empty=lambda exc: tqdm.write(f"warning: {exc}"))
        files.update((files.total or 0) - files.n)
    except USER_ERRORS as exc:
        if not committed:
            raise
        files.close()
        records.close()
        print(f"error: {exc}", file=sys.stderr)
        names = ", ".join(p.name for p in committed)
        those, their = (f"the {len(committed)} files before it are", "their") if len(committed) > 1 else \
            ("the file before it is", "its")
        print(f"{those} ingested ({names}) and kept; annotating {their} documents now", file=sys.stderr)
        annotated = _annotate_stale(con) == 0
        print(("annotated" if annotated else "some documents could not be annotated (above); run `python -m "
               "curation reannotate`") + ". Fix the file and run the same command again: the files before it are "
              "skipped", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        kept = "the batches committed from it are kept" if args.lenient else "nothing from it was written"
        tqdm.write(f"interrupted in {current['path']}: {kept}, and the files before it are ingested. Run the same "
                   "command again: finished files are skipped, this one is read again and merged by PMID "
                   "(no duplicates)", file=sys.stderr)
        return 130
    finally:
        files.close()
        records.close()
    if len(run.reports) + len(run.done) > 1:
        print(run.summary())
    status = _annotate_stale(con)
    counts = store_counts(con)
    print(f"store now holds {counts['documents']} documents, {counts['mentions']} gold mentions, "
          f"{counts['annotations']} annotations")
    return status


def _annotate_stale(con) -> int:
    """Annotate the documents the current annotator has not annotated (once, after every file is in)."""
    from curation.cli.entities import _bar
    from curation.workflows.entities import current_annotator, dictionary_matcher, reannotate

    chosen = current_annotator(con, load_settings(), dictionary_matcher(con))
    if chosen.message:
        print(f"note: {chosen.message}")
    bar, update = _bar("annotating")
    try:
        report = reannotate(con, chosen.annotator, stale_only=True, progress=update, who=operator())
    finally:
        bar.close()
    print(report.summary())
    return 1 if report.failed else 0


def cmd_add_schemas(args: argparse.Namespace) -> int:
    schemas = add_schemas(_open(args, create=True), operator(), args.path)
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
    con = _open(args, create=True)
    from curation.workflows.background_load import index_state

    if left := index_state(con, settings).message():  # a load stopped before its end: this run finishes it
        print(f"{left} Finishing it now.", flush=True)

    def on_file(sample, position: int, total: int) -> None:
        print(f"[{position}/{total}] {sample.label} ({sample.fmt})", flush=True)

    from curation.workflows.entities import current_annotator
    from curation.workflows.first_models import load_start_note

    built = {}

    def annotator():
        # The matcher the first search needs, built once the files are in, annotates the documents too.
        built["matcher"] = build_matcher(con, cache_dir=settings.cache_dir / "lexicon")  # kept for the app
        chosen = current_annotator(con, settings, built["matcher"])
        note = chosen.message if args.no_train else load_start_note(settings, chosen.message)
        if note:
            print(f"note: {note}", flush=True)
        return chosen.annotator

    report = load_sample(con, settings, on_file=on_file, annotator=annotator, who=operator(), train=not args.no_train)
    for outcome in report.outcomes:
        state = (f"failed: {outcome.error}" if outcome.error
                 else f"{outcome.added} added, {outcome.unchanged} already present")
        print(f"  {outcome.file.label}: {state}")
        for label, messages in (("skipped", outcome.skipped), ("warning", outcome.warnings)):
            print("".join(f"    {label}: {m}\n" for m in messages[:5]), end="")
            if len(messages) > 5:
                print(f"    ... and {len(messages) - 5} more {label} lines")
    print(report.summary())
    # What the first search builds (the app builds the same when its first search runs): the text matcher
    # and the ranking of what serves (BM25 alone until a model version is trained).
    started = time.time()
    matcher = built.get("matcher") or build_matcher(con, cache_dir=settings.cache_dir / "lexicon")
    retriever = open_served(con, settings.models_dir, serving_key(con, "PO"))
    mode = "hybrid" if retriever.dense is not None else "bm25"
    hits = retriever.search_text("BRAF V600E", mode=mode, k=10).hits
    print(f"first search checked in {time.time() - started:.1f} s: 'BRAF V600E' ranks {len(hits)} abstracts with "
          f"{retriever.version}; {len(matcher.lexicon)} names in the dictionaries")
    from curation.workflows.first_models import train_pending

    # The learned parts (relation scorer, base encoder version, the shipped recogniser), unless --no-train: each a
    # step of the load, so a run stopped here finishes them next time.
    if trained := train_pending(con, settings, lambda step, done, total: print(step, flush=True), background=False):
        print(trained)
    counts = store_counts(con)
    print(f"store {args.db}: {counts['kb_records']} KB records, {counts['documents']} abstracts, "
          f"{counts['synonyms']} synonyms")
    print("start the app: .venv/bin/streamlit run app.py   (then open http://127.0.0.1:8501)")
    return 1 if report.failed else 0


def cmd_stats(args: argparse.Namespace) -> int:
    con = _open(args, read_only=True)
    counts = store_counts(con)
    if args.json:
        print(json.dumps(counts, indent=2, default=str))
    else:
        for key, value in counts.items():
            print(f"{key:>26}: {value}")
    return 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add ingest-kb, ingest-corpus, add-schemas, quickstart and stats to ``sub`` (``common`` holds ``--db``)."""
    settings = load_settings()
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
    p.add_argument("--no-train", action="store_true",
                   help="load only: do not train the relation scorer nor build the base encoder version after it")
    p.set_defaults(func=cmd_quickstart)

    p = sub.add_parser("stats", parents=[common], help="counts of what the store holds")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_stats)
