"""``python -m curation suggest`` / ``train-relations`` / ``rescore``: suggestions for the missing slot from a
script, and the relation scorer behind them.

``suggest`` prints what the Curate page's "Suggested <slot>" panel shows (the same
:func:`curation.workflows.suggest.suggest` over the same served search): one relation from ``--entity`` flags,
or a JSON lines file of them (``--queries``, the ``search`` command's format). ``--new-only`` keeps the
suggestions the KB lacks; ``--export FILE.csv|FILE.jsonl`` writes the review list (one row per supporting paper).
Every input is checked before anything is loaded; the store is opened read-only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from curation.cli.common import _open, operator
from curation.cli.search import emit
from curation.cli.search_requests import parse_pairs, read_queries
from curation.config import load_settings
from curation.errors import USER_ERRORS, CurationError
from curation.files import write_atomic
from curation.workflows.schemas import known_schemas
from curation.workflows.search import Searcher, SearchRequest, Where, check_applied, open_for_suggest, resolve


def cmd_suggest(args: argparse.Namespace) -> int:
    """Suggestions for one partial relation (``--entity``) or a file of them (``--queries``)."""
    from curation.workflows.suggest import DEFAULT_TOP_DOCS, result_record, review_civic, review_file, suggest

    if args.top_docs is None:
        args.top_docs = DEFAULT_TOP_DOCS
    if bool(args.entity) == bool(args.queries):
        raise CurationError("give the relation with --entity SLOT=NAME (repeatable) or a file with --queries FILE")
    if not 1 <= args.top_docs <= 500:
        raise CurationError(f"--top-docs {args.top_docs}: read 1 to 500 documents")
    export_format = None
    if args.export is not None:
        export_format = args.export_format or {".csv": "csv", ".jsonl": "jsonl"}.get(args.export.suffix.lower())
        if export_format is None:
            raise CurationError(f"--export {args.export}: name a .csv or .jsonl file, or give --export-format")
    elif args.export_format:
        raise CurationError("--export-format: give the file to write with --export FILE")
    if args.queries:
        requests = read_queries(args.queries, args.schema, args.top_docs)
        places = [Where(args.queries, r.line) for r in requests]
    else:
        if not args.schema:
            raise CurationError("--schema: give the relation's schema, e.g. --schema PO")
        requests = [SearchRequest(args.schema, parse_pairs(args.entity, "--entity"), args.top_docs,
                                  parse_pairs(args.apply or [], "--apply"))]
        places = [Where()]
    con = open_for_suggest(Path(args.db))
    try:
        schemas = {s.name: s for s in known_schemas(con, load_settings().schema_file)}
        resolved = [resolve(r, schemas, w) for r, w in zip(requests, places, strict=True)]
        searcher = Searcher(con)
        for (schema, request), where in zip(resolved, places, strict=True):
            check_applied(request, schema, searcher.matcher.lexicon, where)
        results = []
        failed: dict[int, str] = {}  # index of a batch query -> why it has no result
        for i, ((schema, request), where) in enumerate(zip(resolved, places, strict=True)):
            engine, problem = searcher.engine(schema)
            try:
                result = suggest(con, engine, searcher.linker, searcher.matcher, schema, request.values,
                                 top_docs=request.top, mode=args.mode, applied=request.applied)
            except USER_ERRORS as exc:
                if not args.queries:
                    raise where.error(None, str(exc)) from None
                failed[i] = str(where.error(None, str(exc)))
                continue
            except Exception as exc:  # noqa: BLE001  (one query's fault must not cost the batch the others)
                if not args.queries:
                    raise
                failed[i] = f"{args.queries}, line {request.line}: {type(exc).__name__}: {exc}"
                continue
            if problem:
                result = type(result)(**{**result.__dict__, "notes": (*result.notes, problem)})
            results.append((request, result))
        exported = None
        if export_format == "civic-suggestions":
            exported = review_civic(con, [r for _, r in results], new_only=args.new_only)
        elif export_format is not None:
            exported = review_file([r for _, r in results], export_format, new_only=args.new_only)
    finally:
        con.close()
    records = []
    done = iter(results)
    for i, (_, request) in enumerate(resolved):
        if i in failed:
            print(f"error: {failed[i]}", file=sys.stderr)
            records.append({**({"id": request.id} if request.id is not None else {}), "line": request.line,
                            "entities": dict(request.values), "error": failed[i], "suggestions": []})
            continue
        request, result = next(done)
        record = result_record(result, args.new_only)
        if request.line is not None:
            record = {"line": request.line, **record}
        if request.id is not None:
            record = {"id": request.id, **record}
        records.append(record)
    if exported is not None:
        write_atomic(args.export, exported)
        rows = sum(len(s["papers"]) for r in records for s in r["suggestions"])
        print(f"wrote {rows} supporting papers of {sum(len(r['suggestions']) for r in records)} suggestions to "
              f"{args.export}", file=sys.stderr)
    emit(args, records, render_table)
    if args.queries:
        return 1 if failed else 0
    return 0 if records[0]["suggestions"] else 1


def render_table(record: dict) -> str:
    """One relation's suggestions as text: a line per suggestion, its best supporting sentence under it."""
    query = ", ".join(f"{k}={v}" for k, v in record["entities"].items())
    lines = [f"{record['schema']}: {query} → {record['slot']}?   ({record['documents']} of the top "
             f"{record['top_docs']} abstracts read; relation scorer: {record['scorer']})"]
    lines += [f"note: {n}" for n in record["notes"]]
    if not record["suggestions"]:
        lines.append(record["message"] or "no suggestion")
        return "\n".join(lines) + "\n"
    lines.append("")
    for s in record["suggestions"]:
        kb = ("in the KB (" + ", ".join(s["kb_pmids"][:5]) + (" …" if len(s["kb_pmids"]) > 5 else "") + ")"
              if s["in_kb"] else "NEW to the KB")
        pmids = ", ".join(p["pmid"] for p in s["papers"][:6]) + (" …" if len(s["papers"]) > 6 else "")
        lines.append(f"{s['rank']:>3}. {s['name']}  score {s['score']:.3f}  {s['supporting']} supporting of "
                     f"{s['co_mentions']} co-mentioning  {kb}  PMIDs {pmids}")
        best = s["papers"][0]
        sentence = " ".join(best["sentence"].split())
        lines.append(f"       {best['pmid']} (p {best['probability']:.2f}): {sentence[:220]}")
    if record["weak"]:
        lines.append(f"\n{record['weak']} more {record['slot'].lower()} names are co-mentioned without a stated "
                     "relation")
    return "\n".join(lines) + "\n"


def cmd_train_relations(args: argparse.Namespace) -> int:
    """Train a relation scorer (corpora + the store's decisions), activate it and re-score the documents."""
    from curation.workflows.relation_scoring import (
        activate_scorer,
        describe_training,
        judge,
        rescore,
        train_relation_scorer,
    )

    settings = load_settings()
    con = _open(args)
    try:
        folder, manifest = train_relation_scorer(con, settings, args.data_dir, args.name,
                                                 decisions=not args.no_decisions, who=operator())
        print(f"trained {manifest['name']} in {manifest['seconds']} s on {manifest['corpus_pairs']:,} corpus pairs "
              f"({manifest['corpus_positives']:,} related) and {manifest['decision_pairs']} pairs from curator "
              f"decisions; threshold {manifest['threshold']:.3f}; {describe_training(manifest)}; wrote {folder}")
        if args.no_activate:
            return 0
        activate, why = judge(con, manifest)
        print(why)
        if activate or args.force:
            active = activate_scorer(con, folder, who=operator())
            print(rescore(con, active, who=operator()).summary())
    finally:
        con.close()
    return 0


def cmd_rescore(args: argparse.Namespace) -> int:
    """Score the documents the active relation scorer has not scored (or activate a scorer folder first)."""
    from curation.workflows.relation_scoring import activate_scorer, active_scorer, rescore

    con = _open(args)
    try:
        active = activate_scorer(con, args.scorer, who=operator()) if args.scorer else active_scorer(con)
        if active.message:
            print(f"note: {active.message}")
        print(rescore(con, active, who=operator()).summary())
    finally:
        con.close()
    return 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add suggest, train-relations and rescore to ``sub`` (``common`` holds ``--db``)."""
    p = sub.add_parser("suggest", parents=[common],
                       help="suggest the missing slot of a partial relation: candidates the top abstracts relate "
                            "to it, marked new to the KB",
                       description="What the Curate page's 'Suggested <slot>' panel shows: candidates for the missing "
                                   "slot, ranked from the relation scores of the served top N abstracts, each with "
                                   "its supporting papers and sentences and whether the KB holds it. Exit status: "
                                   "0; 1 when the one relation asked has no suggestion, or when a query of a --queries "
                                   "file failed (its line says why, the others are answered); 2 for bad input. The "
                                   "store is opened read-only.")
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
