"""``python -m curation screen``: check the screening learner on your own past work before trusting it.

A topic file holds one JSON object per line::

    {"id": "braf-v600e", "schema": "PO", "entities": {"Gene": "BRAF", "Variant": "V600E"},
     "gold": {"12068308": "complete", "15035987": "partial", "19001320": "not_relevant"}}

For each topic the served search gives the candidates (as the Curate page's "Screen this topic" does: up to 2,000,
static order); the screening is simulated twice with the gold as the curator's grades (a candidate the gold does not
list counts as not relevant): the static order read top-down, and the learner refitted after every grade from the
static order's first relevant and first irrelevant candidate. It prints per topic WSS@95, recall after 10% / 20%
read, ATD and Loss of both; ``--json FILE`` also writes both reading orders (PMIDs). Every line is checked before
anything is loaded; a bad one stops the command with its line and field (exit status 2). The store is opened
read-only.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curation.config import load_settings
from curation.errors import USER_ERRORS, CurationError
from curation.files import write_atomic
from curation.grades import Grade
from curation.workflows.schemas import known_schemas
from curation.workflows.screen_simulation import GAINS
from curation.workflows.search import Searcher, SearchRequest, Where, open_for_search, resolve

TOPIC_FIELDS = ("id", "schema", "entities", "gold")


@dataclass(frozen=True)
class TopicRequest:
    """One topic of the file: the relation to search and the curator's past grades (pmid → gain)."""

    request: SearchRequest
    gold: Mapping[str, int]
    where: Where


def read_topics(path: Path) -> list[TopicRequest]:
    """Every topic of ``path``, checked (see the module docstring).

    Raises:
        CurationError: a line that is not a JSON object, an unknown field, no relation, no gold or a bad grade
            (the message names the file, line and field).
    """
    topics = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = Where(path, number)
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise where.error(None, f"not JSON ({exc.msg})") from None
            if not isinstance(item, dict):
                raise where.error(None, "each line is one JSON object with schema, entities and gold")
            unknown = sorted(set(item) - set(TOPIC_FIELDS))
            if unknown:
                raise where.error(unknown[0], f"unknown field; a topic has {', '.join(TOPIC_FIELDS)}")
            schema, entities, gold = item.get("schema"), item.get("entities"), item.get("gold")
            if not isinstance(schema, str) or not schema.strip():
                raise where.error("schema", "give the topic's schema, e.g. \"PO\"")
            if not isinstance(entities, dict) or not entities or not all(
                    isinstance(k, str) and isinstance(v, str) for k, v in entities.items()):
                raise where.error("entities", "give the partial relation as {\"Slot\": \"name\", ...}")
            if not isinstance(gold, dict) or not gold:
                raise where.error("gold", "give the graded abstracts as {\"PMID\": \"complete\" | \"partial\" | "
                                  "\"not_relevant\"}")
            gains = {}
            for pmid, grade in gold.items():
                gain = GAINS.get(str(grade).strip().casefold())
                if gain is None:
                    raise where.error("gold", f"PMID {str(pmid)[:20]}: grade '{str(grade)[:30]}' is not one of "
                                      f"{', '.join(g.value for g in Grade)} (or 2 / 1 / 0)", str(pmid))
                gains[str(pmid).strip()] = gain
            if not any(g > 0 for g in gains.values()):
                raise where.error("gold", "no relevant abstract (complete or partial): nothing to find")
            topic_id = item.get("id", number)
            topics.append(TopicRequest(SearchRequest(schema, dict(entities), id=topic_id, line=number), gains, where))
    if not topics:
        raise CurationError(f"{path}: no topic in the file")
    return topics


def render(records: Sequence[Mapping[str, Any]]) -> str:
    """A table: per topic, the static order's and the learner's figures."""
    lines = [f"{'topic':<24} {'cand':>5} {'rel':>4}  {'order':<8} {'WSS@95':>7} {'R@10%':>6} {'R@20%':>6} "
             f"{'ATD':>6} {'Loss':>6}"]
    for r in records:
        name = str(r["id"])[:24]
        if "static" not in r:
            lines.append(f"{name:<24} {r['candidates']:>5} {0:>4}  {r['message']}")
            continue
        for which in ("static", "learner"):
            f = r[which]
            cells = " ".join(f"{f[k]:>{w}.3f}" if f[k] is not None else f"{'-':>{w}}"
                             for k, w in (("wss@95", 7), ("recall@10%", 6), ("recall@20%", 6), ("atd", 6),
                                          ("loss", 6)))
            lines.append(f"{name if which == 'static' else '':<24} {r['candidates'] if which == 'static' else '':>5} "
                         f"{r['relevant_in_candidates'] if which == 'static' else '':>4}  {which:<8} {cells}")
        if r["relevant_not_found"]:
            lines.append(f"{'':<24} {len(r['relevant_not_found'])} relevant abstract(s) of the gold are not among "
                         "the candidates (not found by the search, or not in the store)")
    return "\n".join(lines) + "\n"


def cmd_screen(args: argparse.Namespace) -> int:
    """Simulate screening for every topic of ``args.topics`` (see the module docstring)."""
    from curation.workflows.screen_simulation import screen_topic

    topics = read_topics(args.topics)
    con = open_for_search(Path(args.db))
    try:
        schemas = {s.name: s for s in known_schemas(con, load_settings().schema_file)}
        resolved = [resolve(t.request, schemas, t.where) for t in topics]
        searcher = Searcher(con)
        records = []
        for (schema, request), topic in zip(resolved, topics, strict=True):
            try:
                records.append(screen_topic(searcher, schema, request, topic.gold, args.mode))
            except USER_ERRORS as exc:
                raise topic.where.error(None, str(exc)) from None
    finally:
        con.close()
    print(render(records), end="")
    if args.json is not None:
        write_atomic(args.json, json.dumps(records, ensure_ascii=False, indent=1) + "\n")
    return 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add screen to ``sub`` (``common`` holds ``--db``)."""
    p = sub.add_parser("screen", parents=[common], help="simulate screening topics with the learner against the "
                       "static order, from your own graded topics",
                       description=__doc__.splitlines()[0])
    p.add_argument("topics", type=Path, metavar="TOPICS.jsonl",
                   help="one topic per line: {\"schema\", \"entities\", \"gold\": {PMID: grade}}, optional \"id\"")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write per topic the reading orders and figures")
    p.add_argument("--mode", choices=("hybrid", "bm25"), default="hybrid", help="the served search's mode")
    p.set_defaults(func=cmd_screen)
