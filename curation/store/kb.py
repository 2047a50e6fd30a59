"""Knowledge-base records."""

from __future__ import annotations

import json
from collections.abc import Sequence

import duckdb
import pyarrow as pa

from curation.records import KBRecord
from curation.store.base import list_schemas

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
SQL_KB_CITING = """
SELECT schema_name, entities, pmid, source, source_id, attributes FROM kb_records
WHERE schema_name = ? AND pmid IN (SELECT unnest(?)) ORDER BY pmid, source, source_id
"""
SQL_KB_VALUES = """
SELECT e.value, count(*) AS n FROM kb_entities e JOIN kb_records r USING (record_id)
WHERE r.schema_name = ? AND e.entity_type = ? AND e.value <> ''
GROUP BY 1 ORDER BY n DESC, 1
"""
SQL_KB_SLOT_VALUES = """
SELECT e.value, count(*) AS n FROM kb_entities e WHERE e.entity_type = ? AND e.value <> ''
GROUP BY 1 ORDER BY n DESC, 1
"""

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


def kb_records_citing(con: duckdb.DuckDBPyConnection, schema: str, pmids: list[str]) -> dict[str, list[KBRecord]]:
    """PMID → the schema's KB records that cite it (CIViC evidence, curators' answers, ...), for the given PMIDs."""
    out: dict[str, list[KBRecord]] = {}
    for schema_name, entities, pmid, source, source_id, attributes in con.execute(
            SQL_KB_CITING, [schema, list(pmids)]).fetchall():
        out.setdefault(pmid, []).append(KBRecord(schema_name, tuple(json.loads(entities).items()), pmid, source,
                                                 source_id, tuple(json.loads(attributes).items())))
    return out


def list_entity_values(con: duckdb.DuckDBPyConnection, schema: str, entity_type: str) -> list[tuple[str, int]]:
    """Distinct values of one entity slot in the KB, most frequent first (for suggestions)."""
    return [(v, n) for v, n in con.execute(SQL_KB_VALUES, [schema, entity_type]).fetchall()]


def list_slot_values(con: duckdb.DuckDBPyConnection, entity_type: str) -> list[tuple[str, int]]:
    """Distinct values of one slot name in the KB's records of every schema, most frequent first."""
    return [(v, n) for v, n in con.execute(SQL_KB_SLOT_VALUES, [entity_type]).fetchall()]


def list_kb_answers(con: duckdb.DuckDBPyConnection, schema: str, answer_slot: str,
                    slot_names: dict[str, list[str]]) -> list[tuple[str, str | None]]:
    """(answer value, PMID) of the schema's KB records whose every given slot holds one of its names (compared
    case-insensitively), in one query; records without an answer are left out."""
    clause = ("record_id IN (SELECT record_id FROM kb_entities WHERE entity_type = ? "
              "AND lower(value) IN (SELECT unnest(?)))")
    sql = ("SELECT e.value, r.pmid FROM kb_records r JOIN kb_entities e USING (record_id) "
           "WHERE r.schema_name = ? AND e.entity_type = ? AND e.value <> ''")
    params: list[object] = [schema, answer_slot]
    for slot, names in slot_names.items():
        sql += " AND r." + clause
        params += [slot, sorted({n.casefold() for n in names})]
    return [(value, pmid) for value, pmid in con.execute(sql + " ORDER BY r.pmid, e.value", params).fetchall()]
