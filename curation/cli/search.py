"""``python -m curation search``: the Curate page's search from a script, one relation or a file of them.

The ranking is the page's: the same :func:`curation.retrieval.relation_search.search_relation`, the same served
retriever (the schema's active version, by :mod:`curation.versions.serving`), the same query linker (the
store's normaliser and the active annotator's linker) and the same concept index. It prints each slot as
linked and each hit with its provenance (group, every stage's score and rank, the concepts it mentions
and how): a table, or JSON with ``--json``; a file of relations (``--queries``, JSON lines) gives one
JSON line per relation, in order, from one process.

Every input is checked before anything is loaded or printed: a bad flag or line stops the command with
a message naming it (exit status 2) and nothing is written. The store is opened read-only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from curation import store
from curation.config import load_settings
from curation.entities.query import MAX_TYPED_CHARS, RULE_KINDS, QueryConcept, QueryError, check_typed
from curation.entities.variants import variant_keys
from curation.errors import USER_ERRORS, CurationError, InputError
from curation.files import write_atomic
from curation.schemas import RelationSchema
from curation.workflows.provenance import hit_provenance

if TYPE_CHECKING:  # the search stack loads when a search runs, not when the CLI starts
    from curation.retrieval.relation_search import RelationSearch

MAX_TOP = 1000  # hits per relation
CONCEPT_INDEX_MIGRATION = 4  # the store's schema version that added the concept index (annotations)
DEFAULT_TOP = 20
QUERY_FIELDS = ("schema", "entities", "top", "id", "apply")
TITLE_CHARS = 60  # of a title in the table
NO_HITS = ("no abstract mentions any of the concepts, so nothing is ranked "
           "(a document that mentions none is never shown)")


@dataclass(frozen=True)
class SearchRequest:
    """One relation to search, as given (checked against the store's schemas by :func:`resolve`).

    Attributes:
        schema: the schema name.
        values: slot → typed name.
        top: how many hits.
        applied: slot → concept id chosen among the suggestions.
        id: the caller's id (JSON lines), or None.
        line: the line of the ``--queries`` file (None for ``--entity``).
    """

    schema: str
    values: Mapping[str, str]
    top: int = DEFAULT_TOP
    applied: Mapping[str, str] = field(default_factory=dict)
    id: str | int | None = None
    line: int | None = None


FLAGS = {"schema": "--schema", "entities": "--entity", "apply": "--apply", "top": "--top"}  # field -> its flag


class _Where:
    """Names the place of a problem: a flag of the command line, or a field of a line of the file."""

    def __init__(self, path: Path | None = None, line: int | None = None) -> None:
        self.path, self.line = path, line

    def name(self, field_name: str, slot: str = "") -> str:
        """How a person knows the field: ``entities.Gene`` in a file, ``--entity`` on the command line."""
        if self.path is None:
            return FLAGS.get(field_name, field_name)
        return f"{field_name}.{slot[:60]}" if slot else field_name

    def error(self, field_name: str | None, problem: str, slot: str = "") -> CurationError:
        where = self.name(field_name, slot) if field_name else None
        if self.path is None:
            return CurationError(f"{where}: {problem}" if where else problem)
        return InputError(str(self.path), self.line, where, problem)


# --- reading the requests -----------------------------------------------------------------------


def parse_pairs(pairs: Sequence[str], flag: str) -> dict[str, str]:
    """``["Gene=BRAF", ...]`` → {"Gene": "BRAF"}; a pair without '=', an empty side or a slot given twice stops."""
    out: dict[str, str] = {}
    for pair in pairs:
        slot, sep, value = pair.partition("=")
        slot, value = slot.strip(), value.strip()
        shown = pair if len(pair) <= 60 else pair[:57] + "..."
        if not sep:
            raise CurationError(f"{flag} '{shown}': write SLOT=NAME, e.g. {flag} Gene=BRAF")
        if not slot:
            raise CurationError(f"{flag} '{shown}': no slot before '='; write SLOT=NAME, e.g. {flag} Gene=BRAF")
        if not value:
            raise CurationError(f"{flag} {slot}: the value is empty; write {slot}=NAME")
        if slot in out:
            raise CurationError(f"{flag} {slot} is given twice; give one name per slot")
        out[slot] = value
    return out


def read_queries(path: Path, default_schema: str | None, default_top: int) -> list[SearchRequest]:
    """The relations of a JSON lines file, one object per line (blank lines skipped).

    Raises:
        InputError: the file is missing or unreadable, or a line is not a relation; names the line and field.
    """
    requests = []
    number = 0
    try:
        with open(path, encoding="utf-8") as handle:
            for number, text in enumerate(handle, start=1):
                if text.strip():
                    requests.append(_request(text, default_schema, default_top, _Where(path, number)))
    except FileNotFoundError:
        raise InputError(str(path), None, None, "no such file; give a JSON lines file of relations") from None
    except IsADirectoryError:
        raise InputError(str(path), None, None, "is a folder; give a JSON lines file of relations") from None
    except UnicodeDecodeError as exc:
        raise InputError(str(path), number + 1, None, f"not UTF-8 text ({exc.reason})") from None
    if not requests:
        raise InputError(str(path), None, None, 'no relations; write one JSON object a line, e.g. '
                         '{"schema": "PO", "entities": {"Gene": "BRAF", "Variant": "V600E"}}')
    return requests


def _request(text: str, default_schema: str | None, default_top: int, where: _Where) -> SearchRequest:
    try:
        row = json.loads(text.strip())
    except json.JSONDecodeError as exc:
        raise where.error(None, f"not JSON ({exc.msg}, column {exc.colno})") from None
    if not isinstance(row, dict):
        raise where.error(None, 'not a JSON object; write e.g. {"schema": "PO", "entities": {"Gene": "BRAF"}}')
    unknown = [k for k in row if k not in QUERY_FIELDS]
    if unknown:
        raise where.error(str(unknown[0])[:60], f"unknown field; a relation has {', '.join(QUERY_FIELDS)}")
    schema = row.get("schema", default_schema)
    if schema is None:
        raise where.error("schema", 'missing; add "schema": "PO" to the line or pass --schema')
    if not isinstance(schema, str) or not schema.strip():
        raise where.error("schema", "must be a schema name such as \"PO\"")
    if "entities" not in row:
        raise where.error("entities", 'missing; write e.g. "entities": {"Gene": "BRAF", "Variant": "V600E"}')
    values = _names(row["entities"], "entities", where)
    if not values:
        raise where.error("entities", "empty; give at least one slot and name")
    top = row.get("top", default_top)
    if isinstance(top, bool) or not isinstance(top, int):
        raise where.error("top", f"must be a whole number of hits (1 to {MAX_TOP})")
    ident = row.get("id")
    if ident is not None and (isinstance(ident, bool) or not isinstance(ident, str | int)):
        raise where.error("id", "must be a string or a whole number")
    applied = _names(row.get("apply", {}), "apply", where)
    return SearchRequest(schema.strip(), values, top, applied, ident, where.line)


def _names(value: Any, name: str, where: _Where) -> dict[str, str]:
    if not isinstance(value, dict):
        raise where.error(name, 'must be an object of slot → name, e.g. {"Gene": "BRAF"}')
    for slot, typed in value.items():
        if not isinstance(typed, str):
            raise where.error(name, "must be a string", slot)
        if not typed.strip():
            raise where.error(name, "is empty; give a name or leave the slot out", slot)
    return {slot.strip(): typed for slot, typed in value.items()}


# --- checking them against the store ------------------------------------------------------------


def resolve(request: SearchRequest, schemas: Mapping[str, RelationSchema], where: _Where
            ) -> tuple[RelationSchema, SearchRequest]:
    """The request's schema, and the request with its slots spelt as the schema spells them.

    Raises:
        CurationError: an unknown schema or slot, the answer slot given, a name too long, a top out of range.
    """
    found = {name.casefold(): s for name, s in schemas.items()}.get(request.schema.casefold())
    if found is None:
        raise where.error("schema", f"unknown schema '{request.schema[:60]}'; this store knows {', '.join(schemas)} "
                          "(add one with `python -m curation add-schemas`)")
    if not 1 <= request.top <= MAX_TOP:
        raise where.error("top", f"{request.top} hits asked; ask for 1 to {MAX_TOP}")
    values = {}
    for slot, typed in request.values.items():
        spelt = _slot(found, slot, "entities", where)
        if spelt in values:
            raise where.error("entities", f"{spelt} is given twice; give one name per slot", spelt)
        try:
            values[spelt] = check_typed(spelt, typed)
        except QueryError as exc:
            raise where.error("entities", str(exc), spelt) from None
    applied = {}
    for slot, concept in request.applied.items():
        spelt = _slot(found, slot, "apply", where)
        if spelt in applied:
            raise where.error("apply", f"{spelt} is applied twice; apply one concept per slot", spelt)
        if spelt not in values:
            raise where.error("apply", f"{spelt} is applied but not typed; give its name too "
                                       f"({where.name('entities', spelt)})", spelt)
        if len(concept) > MAX_TYPED_CHARS:
            raise where.error("apply", f"a concept id has at most {MAX_TYPED_CHARS} characters", spelt)
        applied[spelt] = concept.strip()
    return found, SearchRequest(found.name, values, request.top, applied, request.id, request.line)


def _slot(schema: RelationSchema, slot: str, field_name: str, where: _Where) -> str:
    for name in schema.query_types:
        if name.casefold() == slot.casefold():
            return name
    if slot.casefold() == schema.answer.casefold():
        raise where.error(field_name, f"{schema.answer} is what a {schema.name} search looks for, not a slot to "
                                      f"fill; fill {', '.join(schema.query_types)}", slot)
    raise where.error(field_name, f"'{slot[:60]}' is not a slot of {schema.name}; its slots are "
                                  f"{', '.join(schema.query_types)}", slot)


def check_applied(request: SearchRequest, schema: RelationSchema, lexicon, where: _Where) -> None:
    """An applied concept id the dictionaries (or, for a variant, the notation rules) do not know stops."""
    for slot, concept in request.applied.items():
        kind = schema.kind(slot)
        known = bool(variant_keys(concept)) if kind == "variant" else (
            kind in RULE_KINDS or kind == "generic" or bool(lexicon.canonical(kind, concept)))
        if not known:
            raise where.error("apply", f"no {kind} concept has the id '{concept[:60]}'; apply one of the ids the "
                                       f"search lists as alternatives for {slot}", slot)


# --- searching ---------------------------------------------------------------------------------------


class Searcher:
    """What the Curate page keeps alive, loaded once for every relation searched."""

    def __init__(self, con) -> None:
        from curation.entities.postings import StorePostings
        from curation.workflows.entities import NO_RECOGNISER, current_annotator, dictionary_matcher
        from curation.workflows.results import default_linker
        from curation.workflows.serving import build_normaliser

        self.con = con
        self.settings = load_settings()
        self.matcher = dictionary_matcher(con)  # the app's, without analysing the corpus ahead (same matches)
        chosen = current_annotator(con, self.settings, self.matcher)
        self.notes = [chosen.message] if chosen.message and chosen.message != NO_RECOGNISER else []
        self.linker = default_linker(con, self.matcher, build_normaliser(self.matcher), chosen.annotator.linker)
        self.source = StorePostings(con)
        self._engines: dict[object, tuple[object, str]] = {}

    def engine(self, schema: RelationSchema):
        """The served retriever of ``schema`` and why its active version is not serving ("" when it is)."""
        from curation.workflows.serving import open_served, serving_key, serving_problem

        key = serving_key(self.con, schema.name)
        if key not in self._engines:
            engine = open_served(self.con, self.settings.models_dir, key)
            self._engines[key] = (engine, serving_problem(self.con, schema.name, engine.version))
        return self._engines[key]

    def documents(self, pmids: Sequence[str]) -> dict:
        return {d.pmid: d for d in store.get_documents(self.con, list(pmids))}

    def search(self, schema: RelationSchema, request: SearchRequest, mode: str, rm3: bool) -> dict[str, Any]:
        from curation.retrieval.relation_search import SearchOptions, search_relation

        engine, problem = self.engine(schema)
        options = SearchOptions(mode=mode, k=request.top, rm3=rm3, applied=dict(request.applied))
        result = search_relation(engine, self.linker, self.matcher, self.source, self.documents, schema,
                                 request.values, options)
        titles = {pmid: d.title for pmid, d in self.documents([h.pmid for h in result.hits]).items()}
        return result_record(request, result, titles, [*self.notes, *([problem] if problem else [])])


def result_record(request: SearchRequest, result: RelationSearch, titles: Mapping[str, str],
                  notes: Sequence[str] = ()) -> dict[str, Any]:
    """One searched relation as JSON-ready data: the linked concepts and the hits with their provenance."""
    record: dict[str, Any] = {}
    if request.line is not None:
        record["line"] = request.line
    if request.id is not None:
        record["id"] = request.id
    record.update({
        "schema": request.schema, "entities": dict(request.values), "query": result.query,
        "mode": result.mode, "version": result.version,
        "concepts": [_concept(c) for c in result.concepts],
        "groups": dict(result.groups),
        "per_concept": {c.slot: n for c, n in zip(result.concepts, result.per_concept, strict=False)},
        "hits": [{"rank": h.rank, "pmid": h.pmid, "title": titles.get(h.pmid, ""), "score": float(h.score),
                  "bm25": _number(h.bm25), "dense": _number(h.dense), **hit_provenance(h)} for h in result.hits],
        "problems": list(result.problems),
        "notes": list(notes),
        "message": "" if result.hits else NO_HITS,
    })
    return record


def _number(value: float | None) -> float | None:
    return None if value is None else float(value)


def _concept(c: QueryConcept) -> dict[str, Any]:
    return {
        "slot": c.slot, "typed": c.typed, "kind": c.kind, "status": c.status, "canonical": c.canonical,
        "ids": list(c.concept_ids), "confidence": round(float(c.confidence), 4), "how": c.how, "note": c.note,
        "forms": list(c.forms),
        "alternatives": [{"id": a.concept_id, "canonical": a.canonical, "score": round(float(a.score), 4),
                          "how": a.how} for a in c.alternatives],
    }


# --- the command -------------------------------------------------------------------------------


def cmd_search(args: argparse.Namespace) -> int:
    """Search one relation (``--entity``) or a file of them (``--queries``); see the module docstring."""
    if bool(args.entity) == bool(args.queries):
        raise CurationError("give the relation with --entity SLOT=NAME (repeatable) or a file with --queries FILE")
    if args.queries:
        if args.apply:
            raise CurationError('--apply is for one relation; in a --queries file write "apply": {"Slot": "id"}')
        requests = read_queries(args.queries, args.schema, args.top)
        places = [_Where(args.queries, r.line) for r in requests]
    else:
        if not args.schema:
            raise CurationError("--schema: give the relation's schema, e.g. --schema PO")
        requests = [SearchRequest(args.schema, parse_pairs(args.entity, "--entity"), args.top,
                                  parse_pairs(args.apply or [], "--apply"))]
        places = [_Where()]
    db = Path(args.db)
    if str(db) != ":memory:" and not db.exists():
        raise CurationError(f"{db}: no store here; ingest a knowledge base and a corpus first, or pass --db")
    con = store.open_store(db, read_only=True)
    try:
        try:
            version = store.schema_version(con)
        except duckdb.Error:  # a DuckDB file that is not a store
            version = -1
        if version < 0:
            raise CurationError(f"{db} is not a curation store (no schema version); check --db")
        if version < CONCEPT_INDEX_MIGRATION:  # read-only: it is not migrated here
            raise CurationError(f"{db} predates the concept index; run any writing command on it once (e.g. "
                                f"`python -m curation reannotate --db {db}`) or open it in the app, then search")
        schemas = {s.name: s for s in store.list_schemas(con)}
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
