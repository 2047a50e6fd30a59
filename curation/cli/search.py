"""``python -m curation search``: the Curate page's search from a script, one relation or a file of them.

The ranking is the page's (:class:`curation.workflows.search.Searcher`: the same served retriever, query
linker and concept index as the Curate page's). It prints each slot as linked and each hit with its provenance
(group, every stage's score and rank, the concepts it mentions and how): a table, or JSON with ``--json``; a
file of relations (``--queries``, JSON lines) gives one JSON line per relation, in order, from one process.

Every input is checked before anything is loaded or printed: a bad flag or line stops the command with
a message naming it (exit status 2) and nothing is written. The store is opened read-only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from curation.cli.search_requests import parse_pairs, read_queries
from curation.config import load_settings
from curation.errors import USER_ERRORS, CurationError
from curation.files import write_atomic
from curation.workflows.schemas import known_schemas
from curation.workflows.search import (
    DEFAULT_TOP,
    MAX_TOP,
    Searcher,
    SearchRequest,
    Where,
    check_applied,
    open_for_search,
    resolve,
)

TITLE_CHARS = 60  # of a title in the table


# --- the command -------------------------------------------------------------------------------


def cmd_search(args: argparse.Namespace) -> int:
    """Search one relation (``--entity``) or a file of them (``--queries``); see the module docstring."""
    if bool(args.entity) == bool(args.queries):
        raise CurationError("give the relation with --entity SLOT=NAME (repeatable) or a file with --queries FILE")
    if args.queries:
        if args.apply:
            raise CurationError('--apply is for one relation; in a --queries file write "apply": {"Slot": "id"}')
        requests = read_queries(args.queries, args.schema, args.top)
        places = [Where(args.queries, r.line) for r in requests]
    else:
        if not args.schema:
            raise CurationError("--schema: give the relation's schema, e.g. --schema PO")
        requests = [SearchRequest(args.schema, parse_pairs(args.entity, "--entity"), args.top,
                                  parse_pairs(args.apply or [], "--apply"))]
        places = [Where()]
    con = open_for_search(Path(args.db))
    try:
        schemas = {s.name: s for s in known_schemas(con, load_settings().schema_file)}
        resolved = [resolve(r, schemas, w) for r, w in zip(requests, places, strict=True)]
        searcher = Searcher(con)
        for (schema, request), where in zip(resolved, places, strict=True):
            check_applied(request, schema, searcher.matcher.lexicon, where)
        records = []
        for (schema, request), where in zip(resolved, places, strict=True):
            try:
                records.append(searcher.search(schema, request, args.mode, args.rm3))
            except USER_ERRORS as exc:
                raise where.error(None, str(exc)) from None
    finally:
        con.close()
    emit(args, records, render_table)
    return 0 if args.queries or records[0]["hits"] else 1


def emit(args: argparse.Namespace, records: Sequence[Mapping[str, Any]],
         render: Callable[[Mapping[str, Any]], str]) -> None:
    """Print (or write to ``--out``, whole or not at all) one JSON line per relation of a ``--queries`` file, the
    one relation as JSON (``--json``), or its table."""
    if args.queries:
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    elif args.json:
        text = json.dumps(records[0], ensure_ascii=False, indent=2) + "\n"
    else:
        text = render(records[0])
    if args.out is None:
        sys.stdout.write(text)
    else:
        write_atomic(args.out, text)
        print(f"wrote {len(records)} result{'s' if len(records) != 1 else ''} to {args.out}", file=sys.stderr)


# --- the table -------------------------------------------------------------------------------


def render_table(record: Mapping[str, Any]) -> str:
    """One searched relation as text: the concepts as linked, the counts, the hits with their provenance."""
    lines = [f"{record['schema']}: " + ", ".join(f"{k}={v}" for k, v in record["entities"].items())
             + f"   ({record['mode']}, served by {record['version']})",
             f"query: {record['query']}", "", "concepts"]
    rows = [("slot", "typed", "status", "canonical", "ids", "conf", "how", "alternatives")]
    for c in record["concepts"]:
        ids = ", ".join(c["ids"][:3]) + (f" +{len(c['ids']) - 3}" if len(c["ids"]) > 3 else "")
        alternatives = "; ".join(f"{a['canonical']} ({a['id']}, {a['score']:.2f})" for a in c["alternatives"][:3])
        rows.append((c["slot"], c["typed"], c["status"], c["canonical"], ids or "-", f"{c['confidence']:.2f}",
                     c["how"] or "-", alternatives or "-"))
    lines += _columns(rows)
    lines += [f"  note: {c['note']}" for c in record["concepts"] if c["note"]]
    groups, per = record["groups"], record["per_concept"]
    lines += ["", f"{len(record['hits'])} hits shown; documents mentioning every concept: {groups.get('all', 0)}, "
                  f"some: {groups.get('some', 0)} (" + ", ".join(f"{k}: {v}" for k, v in per.items()) + ")"]
    if record["hits"]:
        rows = [("rank", "pmid", "group", "score", "stages (score/rank)", "concepts (how)", "title")]
        for h in record["hits"]:
            stages = " ".join(f"{s['stage']} {s['score']:.3g}" + (f"/{s['rank']}" if s["rank"] is not None else "")
                              for s in h["stages"])
            concepts = "; ".join(_match(m) for m in h["concepts"])
            title = h["title"] if len(h["title"]) <= TITLE_CHARS else h["title"][: TITLE_CHARS - 3] + "..."
            rows.append((str(h["rank"]), h["pmid"], h["group"], f"{h['score']:.4f}", stages, concepts, title))
        lines += [""] + _columns(rows)
    for text in [*record["problems"], record["message"], *record["notes"]]:
        if text:
            lines.append(f"note: {text}")
    return "\n".join(lines) + "\n"


def _match(m: Mapping[str, Any]) -> str:
    written = f" as {', '.join(m['forms'][:3])}" if m["forms"] else ""
    count = f" x{m['mentions']}" if m["mentions"] else ""
    return f"{m['slot']} {m['concept']} ({m['how']}{count}{written})"


def _columns(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add search to ``sub`` (``common`` holds ``--db``)."""
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
