"""The DuckDB store: the one module that talks SQL.

Verb-first functions with the connection first; SQL in named constants; values always bound
as ``?`` parameters. The schema is versioned: :data:`MIGRATIONS` are applied in order by
:func:`migrate`, each in its own transaction, and ``schema_version`` records which ran.

Process model: one process opens the file read-write (the app, or a CLI run when the app is
not using the file). A second opener gets :class:`StoreLockedError` with the holder's PID.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pyarrow as pa

from curation.errors import StoreLockedError
from curation.migrations import MIGRATIONS
from curation.records import Document, KBRecord, Mention, Relation, Synonym
from curation.schemas import BUILTIN, RelationSchema, schema_from_dict

GRADES = ("complete", "partial", "not_relevant")
SQL_CREATE_VERSION_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, description VARCHAR, "
    "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
)
SQL_CURRENT_VERSION = "SELECT coalesce(max(version), 0) FROM schema_version"
SQL_RECORD_VERSION = "INSERT INTO schema_version (version, description) VALUES (?, ?)"

SQL_UPSERT_SCHEMA = "INSERT OR REPLACE INTO relation_schemas (name, definition, builtin) VALUES (?, ?, ?)"
SQL_LIST_SCHEMAS = "SELECT definition, builtin FROM relation_schemas ORDER BY builtin DESC, name"

SQL_COUNT = {
    "kb_records": "SELECT count(*) FROM kb_records",
    "documents": "SELECT count(*) FROM documents",
    "mentions": "SELECT count(*) FROM mentions",
    "relations": "SELECT count(*) FROM relations",
    "synonyms": "SELECT count(*) FROM synonyms",
    "decisions": "SELECT count(*) FROM decisions WHERE superseded_by IS NULL",
}
SQL_KB_BY_SCHEMA = "SELECT schema_name, count(*) FROM kb_records GROUP BY 1 ORDER BY 1"
SQL_KB_WITH_PMID_IN_CORPUS = (
    "SELECT count(*) FROM kb_records k WHERE k.pmid IS NOT NULL AND k.pmid IN (SELECT pmid FROM documents)"
)

SQL_INSERT_KB = """
INSERT OR REPLACE INTO kb_records
    (record_id, schema_name, source, source_id, pmid, answer, entities, attributes, origin)
SELECT record_id, schema_name, source, source_id, pmid, answer, entities, attributes, origin FROM incoming
"""
SQL_DELETE_KB_ENTITIES = "DELETE FROM kb_entities WHERE record_id IN (SELECT record_id FROM incoming)"
SQL_INSERT_KB_ENTITIES = "INSERT INTO kb_entities SELECT record_id, position, entity_type, value FROM incoming_entities"
SQL_EXISTING_KB = (
    "SELECT record_id, pmid, entities, attributes FROM kb_records "
    "WHERE record_id IN (SELECT record_id FROM incoming_ids)"
)
SQL_SELECT_KB = """
SELECT schema_name, entities, pmid, source, source_id, attributes FROM kb_records
WHERE (? IS NULL OR schema_name = ?) ORDER BY source, source_id
"""
SQL_KB_VALUES = """
SELECT e.value, count(*) AS n FROM kb_entities e JOIN kb_records r USING (record_id)
WHERE r.schema_name = ? AND e.entity_type = ? AND e.value <> ''
GROUP BY 1 ORDER BY n DESC, 1
"""

SQL_MERGE_DOCUMENTS = """
INSERT INTO documents (pmid, title, abstract, journal, year, sources)
SELECT pmid, title, abstract, journal, year, [source] FROM incoming
ON CONFLICT (pmid) DO UPDATE SET
    title = CASE WHEN documents.title = '' THEN excluded.title ELSE documents.title END,
    abstract = CASE WHEN documents.abstract = '' THEN excluded.abstract ELSE documents.abstract END,
    journal = CASE WHEN documents.journal = '' THEN excluded.journal ELSE documents.journal END,
    year = coalesce(documents.year, excluded.year),
    sources = list_distinct(list_concat(documents.sources, excluded.sources))
"""
SQL_EXISTING_DOCS = "SELECT count(*) FROM documents WHERE pmid IN (SELECT pmid FROM incoming)"
SQL_INSERT_MENTIONS = "INSERT OR IGNORE INTO mentions SELECT * FROM incoming_mentions"
SQL_INSERT_RELATIONS = "INSERT OR IGNORE INTO relations SELECT * FROM incoming_relations"
SQL_GET_DOCUMENTS = (
    "SELECT pmid, title, abstract, journal, year, sources FROM documents WHERE pmid IN (SELECT unnest(?))"
)
SQL_ALL_DOCUMENTS = "SELECT pmid, title, abstract, journal, year, sources FROM documents ORDER BY pmid"
SQL_MENTIONS_FOR = """
SELECT pmid, start_offset, end_offset, text, mention_type, concept_id, source FROM mentions
WHERE pmid IN (SELECT unnest(?)) ORDER BY pmid, start_offset, end_offset
"""
SQL_ALL_MENTIONS = (
    "SELECT pmid, start_offset, end_offset, text, mention_type, concept_id, source FROM mentions "
    "ORDER BY pmid, start_offset"
)
SQL_ALL_RELATIONS = (
    "SELECT pmid, relation_type, concept1, concept2, novelty, source FROM relations ORDER BY pmid, relation_type"
)

SQL_INSERT_SYNONYMS = "INSERT OR IGNORE INTO synonyms SELECT kind, concept_id, name, source, canonical FROM incoming"
SQL_LIST_SYNONYMS = (
    "SELECT concept_id, kind, name, source, canonical FROM synonyms WHERE (? IS NULL OR kind = ?) "
    "ORDER BY kind, concept_id, name"
)

SQL_RECORD_INGEST = "INSERT INTO ingests (kind, path, added, unchanged, skipped) VALUES (?, ?, ?, ?, ?)"


def _scalar(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[object] | None = None) -> object:
    """First column of the first row. Fetches everything so the connection has no open result."""
    rows = con.execute(sql, params).fetchall() if params is not None else con.execute(sql).fetchall()
    return rows[0][0] if rows else None


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """Run a block in one transaction: all of it is committed, or none of it."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def open_store(path: str | Path, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open (creating if needed) the store and bring its schema up to date.

    Raises:
        StoreLockedError: another process holds the file; the message names it and says what to do.
    """
    path = Path(path)
    if str(path) != ":memory:":
        if read_only and not path.exists():
            raise FileNotFoundError(f"{path}: no store here yet; ingest a knowledge base or corpus first")
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        con = duckdb.connect(str(path), read_only=read_only)
    except duckdb.IOException as exc:
        message = str(exc)
        if "lock" in message.lower():
            holder = re.search(r"PID (\d+)", message)
            who = f"process {holder.group(1)}" if holder else "another process"
            raise StoreLockedError(
                f"{path} is in use by {who} (probably the running app). Stop it, or point this command "
                f"at another store with --db, or use the app's Knowledge base page instead."
            ) from None
        raise
    if not read_only:
        migrate(con)
    return con


def migrate(con: duckdb.DuckDBPyConnection) -> int:
    """Apply pending migrations; returns the schema version now in force."""
    con.execute(SQL_CREATE_VERSION_TABLE)
    current = _scalar(con, SQL_CURRENT_VERSION)
    for version, description, ddl in MIGRATIONS:
        if version <= current:
            continue
        with transaction(con):
            for statement in ddl.split(";"):
                if statement.strip():
                    con.execute(statement)
            con.execute(SQL_RECORD_VERSION, [version, description])
            if version == 1:
                for schema in BUILTIN.values():
                    con.execute(SQL_UPSERT_SCHEMA, [schema.name, json.dumps(schema.to_dict()), True])
        current = version
    return current


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    return _scalar(con, SQL_CURRENT_VERSION)


# --- relation schemas ---------------------------------------------------------------------


def add_schema(con: duckdb.DuckDBPyConnection, schema: RelationSchema) -> None:
    """Save a user-defined schema (replacing one of the same name)."""
    con.execute(SQL_UPSERT_SCHEMA, [schema.name, json.dumps(schema.to_dict()), schema.builtin])


def list_schemas(con: duckdb.DuckDBPyConnection) -> list[RelationSchema]:
    """Built-in schemas first, then the user-defined ones saved in this store."""
    schemas = []
    for definition, builtin in con.execute(SQL_LIST_SCHEMAS).fetchall():
        if builtin and json.loads(definition)["name"] in BUILTIN:
            schemas.append(BUILTIN[json.loads(definition)["name"]])
        else:
            schemas.append(schema_from_dict(json.loads(definition), where="stored schema"))
    return schemas


# --- knowledge base -----------------------------------------------------------------------


def record_id(record: KBRecord) -> str:
    """Stable id of a KB record: its source and id in that source."""
    return f"{record.source}:{record.source_id}"


def add_kb_records(
    con: duckdb.DuckDBPyConnection, records: Sequence[KBRecord], origin: str
) -> tuple[int, int, int]:
    """Insert KB records, updating stored ones. Call inside :func:`transaction`.

    A record already stored (same source and id) is replaced only when the incoming one
    differs and is at least as recent (its ``updated`` attribute, e.g. CIViC's
    last_review_date, compares >= the stored one's): ingesting an older export after a newer
    one does not roll records back.

    Returns:
        (added, updated, unchanged) counts; re-ingesting the same file adds and updates nothing.
    """
    schemas = {s.name: s for s in list_schemas(con)}
    unknown = sorted({r.schema for r in records} - set(schemas))
    if unknown:
        raise ValueError(f"KB records name schemas this store does not know: {unknown}; add them first")
    rows = {
        record_id(r): (
            record_id(r),
            r.schema,
            r.source,
            r.source_id,
            r.pmid,
            r.get(schemas[r.schema].answer),
            json.dumps(dict(r.entities)),
            json.dumps(dict(r.attributes)),
            origin,
        )
        for r in records
    }
    if not rows:
        return 0, 0, 0
    con.register("incoming_ids", pa.table({"record_id": list(rows)}))
    try:
        existing = {
            rid: (pmid, entities, attributes)
            for rid, pmid, entities, attributes in con.execute(SQL_EXISTING_KB).fetchall()
        }
    finally:
        con.unregister("incoming_ids")
    write, added, updated = [], 0, 0
    for rid, row in rows.items():
        old = existing.get(rid)
        if old is None:
            added += 1
        elif (old[0], json.loads(old[1]), json.loads(old[2])) == (row[4], json.loads(row[6]), json.loads(row[7])):
            continue
        elif json.loads(row[7]).get("updated", "") >= json.loads(old[2]).get("updated", ""):
            updated += 1
        else:
            continue
        write.append(row)
    if write:
        _write_kb_rows(con, write)
    return added, updated, len(rows) - added - updated


def _write_kb_rows(con: duckdb.DuckDBPyConnection, write: list[tuple]) -> None:
    columns = ["record_id", "schema_name", "source", "source_id", "pmid", "answer", "entities", "attributes", "origin"]
    incoming = pa.table({c: [row[i] for row in write] for i, c in enumerate(columns)})
    entity_rows = [
        (row[0], position, entity_type, value)
        for row in write
        for position, (entity_type, value) in enumerate(json.loads(row[6]).items())
    ]
    incoming_entities = pa.table(
        {
            "record_id": [r[0] for r in entity_rows],
            "position": pa.array([r[1] for r in entity_rows], pa.int32()),
            "entity_type": [r[2] for r in entity_rows],
            "value": [r[3] for r in entity_rows],
        }
    )
    con.register("incoming", incoming)
    con.register("incoming_entities", incoming_entities)
    try:
        con.execute(SQL_INSERT_KB)
        con.execute(SQL_DELETE_KB_ENTITIES)
        con.execute(SQL_INSERT_KB_ENTITIES)
    finally:
        con.unregister("incoming")
        con.unregister("incoming_entities")


def list_kb_records(con: duckdb.DuckDBPyConnection, schema: str | None = None) -> list[KBRecord]:
    """KB records, optionally of one schema."""
    out = []
    rows = con.execute(SQL_SELECT_KB, [schema, schema]).fetchall()
    for schema_name, entities, pmid, source, source_id, attributes in rows:
        out.append(
            KBRecord(
                schema=schema_name,
                entities=tuple(json.loads(entities).items()),
                pmid=pmid,
                source=source,
                source_id=source_id,
                attributes=tuple(json.loads(attributes).items()),
            )
        )
    return out


def list_entity_values(con: duckdb.DuckDBPyConnection, schema: str, entity_type: str) -> list[tuple[str, int]]:
    """Distinct values of one entity slot in the KB, most frequent first (for suggestions)."""
    return [(v, n) for v, n in con.execute(SQL_KB_VALUES, [schema, entity_type]).fetchall()]


# --- corpus -------------------------------------------------------------------------------


def add_documents(con: duckdb.DuckDBPyConnection, documents: Sequence[Document]) -> tuple[int, int]:
    """Merge documents by PMID with their gold mentions and relations. Call inside :func:`transaction`.

    A PMID already present keeps its text (filled in only where it was empty), gains the new
    source, and gains any mentions and relations it did not have: the same abstract from two
    corpora becomes one document with both corpora's annotations.

    Returns:
        (added, already present) document counts.
    """
    merged: dict[str, Document] = {}
    for doc in documents:
        merged.setdefault(doc.pmid, doc)
    if not merged:
        return 0, 0
    docs = list(merged.values())
    incoming = pa.table(
        {
            "pmid": [d.pmid for d in docs],
            "title": [d.title for d in docs],
            "abstract": [d.abstract for d in docs],
            "journal": [d.journal for d in docs],
            "year": pa.array([d.year for d in docs], pa.int32()),
            "source": [d.source for d in docs],
        }
    )
    mentions = [m for d in documents for m in d.mentions]
    relations = [r for d in documents for r in d.relations]
    incoming_mentions = pa.table(
        {
            "pmid": [m.pmid for m in mentions],
            "start_offset": pa.array([m.start for m in mentions], pa.int32()),
            "end_offset": pa.array([m.end for m in mentions], pa.int32()),
            "text": [m.text for m in mentions],
            "mention_type": [m.type for m in mentions],
            "concept_id": [m.concept_id for m in mentions],
            "source": [m.source for m in mentions],
        }
    )
    incoming_relations = pa.table(
        {
            "pmid": [r.pmid for r in relations],
            "relation_type": [r.type for r in relations],
            "concept1": [r.concept1 for r in relations],
            "concept2": [r.concept2 for r in relations],
            "novelty": [r.novelty for r in relations],
            "source": [r.source for r in relations],
        }
    )
    con.register("incoming", incoming)
    con.register("incoming_mentions", incoming_mentions)
    con.register("incoming_relations", incoming_relations)
    try:
        existing = _scalar(con, SQL_EXISTING_DOCS)
        con.execute(SQL_MERGE_DOCUMENTS)
        con.execute(SQL_INSERT_MENTIONS)
        con.execute(SQL_INSERT_RELATIONS)
    finally:
        for name in ("incoming", "incoming_mentions", "incoming_relations"):
            con.unregister(name)
    return len(docs) - existing, existing


def _document(row: tuple, mentions: Iterable[Mention] = ()) -> Document:
    pmid, title, abstract, journal, year, sources = row
    return Document(
        pmid=pmid,
        title=title,
        abstract=abstract,
        source=",".join(sources),
        mentions=tuple(mentions),
        journal=journal,
        year=year,
    )


def get_documents(
    con: duckdb.DuckDBPyConnection, pmids: Sequence[str], with_mentions: bool = False
) -> list[Document]:
    """Documents for the given PMIDs, in the order asked (unknown PMIDs are left out)."""
    pmids = list(pmids)
    rows = {row[0]: row for row in con.execute(SQL_GET_DOCUMENTS, [pmids]).fetchall()}
    mentions: dict[str, list[Mention]] = {}
    if with_mentions and rows:
        for m in con.execute(SQL_MENTIONS_FOR, [list(rows)]).fetchall():
            mentions.setdefault(m[0], []).append(Mention(*m))
    return [_document(rows[p], mentions.get(p, ())) for p in pmids if p in rows]


def iter_documents(con: duckdb.DuckDBPyConnection, batch: int = 2000) -> Iterator[Document]:
    """Every document, by PMID (without mentions)."""
    cursor = con.cursor()
    cursor.execute(SQL_ALL_DOCUMENTS)
    while rows := cursor.fetchmany(batch):
        yield from (_document(row) for row in rows)


def list_mentions(con: duckdb.DuckDBPyConnection) -> list[Mention]:
    """Every gold mention in the store."""
    return [Mention(*row) for row in con.execute(SQL_ALL_MENTIONS).fetchall()]


def list_relations(con: duckdb.DuckDBPyConnection) -> list[Relation]:
    """Every gold document-level relation in the store."""
    return [Relation(*row) for row in con.execute(SQL_ALL_RELATIONS).fetchall()]


# --- synonyms -----------------------------------------------------------------------------


def add_synonyms(con: duckdb.DuckDBPyConnection, synonyms: Iterable[Synonym]) -> int:
    """Add dictionary entries (existing ones are kept); returns how many were new."""
    rows = {(s.entity_type, s.concept_id, s.name): s for s in synonyms}
    if not rows:
        return 0
    values = list(rows.values())
    incoming = pa.table(
        {
            "kind": [s.entity_type for s in values],
            "concept_id": [s.concept_id for s in values],
            "name": [s.name for s in values],
            "source": [s.source for s in values],
            "canonical": [s.canonical for s in values],
        }
    )
    before = _scalar(con, SQL_COUNT["synonyms"])
    con.register("incoming", incoming)
    try:
        con.execute(SQL_INSERT_SYNONYMS)
    finally:
        con.unregister("incoming")
    return _scalar(con, SQL_COUNT["synonyms"]) - before


def list_synonyms(con: duckdb.DuckDBPyConnection, kind: str | None = None) -> list[Synonym]:
    return [
        Synonym(concept_id=c, entity_type=k, name=n, source=s, canonical=canon)
        for c, k, n, s, canon in con.execute(SQL_LIST_SYNONYMS, [kind, kind]).fetchall()
    ]


# --- bookkeeping --------------------------------------------------------------------------


def record_ingest(
    con: duckdb.DuckDBPyConnection, kind: str, path: str, added: int, unchanged: int, skipped: int
) -> None:
    con.execute(SQL_RECORD_INGEST, [kind, path, added, unchanged, skipped])


def stats(con: duckdb.DuckDBPyConnection) -> dict[str, object]:
    """Counts for the CLI, the sidebar and health checks."""
    out: dict[str, object] = {name: _scalar(con, sql) for name, sql in SQL_COUNT.items()}
    out["kb_records_by_schema"] = dict(con.execute(SQL_KB_BY_SCHEMA).fetchall())
    out["kb_records_with_abstract"] = _scalar(con, SQL_KB_WITH_PMID_IN_CORPUS)
    out["schemas"] = [s.name for s in list_schemas(con)]
    out["schema_version"] = schema_version(con)
    return out
