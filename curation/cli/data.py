"""Commands that fill and inspect the store: ingest, quickstart, fetch, dictionaries, stats, normalise."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from curation import store
from curation.access import Action
from curation.cli.common import _open, _open_for, _print_report, _progress_bar, operator
from curation.config import load_settings
from curation.schemas import load_schemas
from curation.workflows.ingestion import ingest_corpus, ingest_corpus_files, ingest_kb


def cmd_ingest_kb(args: argparse.Namespace) -> int:
    con = _open(args)
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

    con = _open(args)
    files = tqdm(desc="files", unit=" files", disable=None, position=0)
    records = tqdm(desc="records", unit=" records", disable=None, position=1)
    current: dict[str, object] = {"path": None, "base": 0}

    def on_file(path: Path, position: int, total: int, done_before: bool) -> None:
        files.total = total
        files.update(position - 1 - files.n)
        files.set_postfix_str(path.name)
        current.update(path=path, base=records.n)
        if done_before:
            tqdm.write(f"{args.format} {path}: already ingested whole and not modified since; skipped "
                       "(--again reads it again)")

    def update(count: int) -> None:
        records.update(int(current["base"]) + count - records.n)

    def on_report(report) -> None:
        records.update(int(current["base"]) + report.added + report.unchanged - records.n)
        tqdm.write(report.summary())
        for message in report.skipped[:20]:
            tqdm.write(f"  skipped: {message}")
        if len(report.skipped) > 20:
            tqdm.write(f"  ... and {len(report.skipped) - 20} more skipped rows")

    try:
        run = ingest_corpus_files(con, args.format, args.paths, lenient=args.lenient, again=args.again, who=operator(),
                                  progress=update, on_file=on_file, on_report=on_report)
        files.update((files.total or 0) - files.n)
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
    counts = store.stats(con)
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
    con = _open_for(args, Action.IMPORT)
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

    from curation.workflows.entities import current_annotator

    built = {}

    def annotator():
        # The matcher the first search needs, built once the files are in, annotates the documents too.
        built["matcher"] = build_matcher(con)
        chosen = current_annotator(con, settings, built["matcher"])
        if chosen.message:
            print(f"note: {chosen.message}", flush=True)
        return chosen.annotator

    report = load_sample(con, settings, on_file=on_file, annotator=annotator, who=operator())
    for outcome in report.outcomes:
        state = (f"failed: {outcome.error}" if outcome.error
                 else f"{outcome.added} added, {outcome.unchanged} already present")
        print(f"  {outcome.file.label}: {state}")
    print(report.summary())
    # What the first search builds (the app builds the same when its first search runs): the text matcher
    # and the ranking of what serves (BM25 alone until a model version is trained).
    started = time.time()
    matcher = built.get("matcher") or build_matcher(con)
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
        _print_report(ingest_corpus(con, "pubmed-xml", path, lenient=True, who=operator()))
    return 0


def cmd_fetch_kb(args: argparse.Namespace) -> int:
    from curation.ingest import fetch

    settings = load_settings()
    path = fetch.fetch_civic(settings.cache_dir / "civic")
    print(f"downloaded {path}")
    con = _open(args)
    _print_report(ingest_kb(con, "civic", path, lenient=True, who=operator()))
    return 0


def cmd_ingest_dict(args: argparse.Namespace) -> int:
    from curation.entities.dictionaries import ingest_dictionary

    con = _open_for(args, Action.IMPORT)
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


def cmd_export(args: argparse.Namespace) -> int:
    """Write curators' work: decisions, the KB records they made, or CIViC source suggestions."""
    from curation.errors import CurationError
    from curation.files import write_atomic
    from curation.schemas import resolve_schema
    from curation.workflows import export

    con = store.open_store(args.db, read_only=True)
    try:
        if args.what == "civic-suggestions":
            made = export.civic_suggestions(con, curator=args.curator, who=operator())
        elif args.format not in export.FORMATS:
            raise CurationError(f"--format must be one of {export.FORMATS} for {args.what}")
        elif args.what == "decisions":
            made = export.decisions_file(con, args.format, curator=args.curator, active_only=args.active_only,
                                            who=operator())
        else:
            schema = resolve_schema(args.schema, store.list_schemas(con))
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
