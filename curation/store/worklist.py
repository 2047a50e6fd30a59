"""The worklist: partial relations waiting for curation (from the KB's relations without an answer, or saved),
with status and assignee."""

from __future__ import annotations

import json
from collections.abc import Mapping

import duckdb

from curation.errors import CurationError
from curation.schemas import RelationSchema
from curation.store.base import transaction
from curation.store.decisions import relation_key, relation_values

STATUSES = ("open", "in_progress", "done", "no_evidence")

SQL_ADD_ITEM = """
INSERT INTO worklist (schema_name, query_entities, entity_key, origin, status) VALUES (?, ?, ?, ?, 'open')
ON CONFLICT (schema_name, entity_key) DO NOTHING RETURNING item_id
"""
SQL_LIST_ITEMS = """
SELECT w.item_id, w.schema_name, w.query_entities, w.origin, w.status, w.assignee,
       (SELECT count(*) FROM decisions d
        WHERE d.schema_name = w.schema_name AND d.entity_key = w.entity_key AND d.superseded_by IS NULL) AS judged
FROM worklist w WHERE w.schema_name = ? AND (? IS NULL OR w.status = ?) ORDER BY w.item_id
"""
SQL_SET_STATUS = "UPDATE worklist SET status = ?, assignee = ?, updated_at = now() WHERE item_id = ?"


def add_worklist_item(
    con: duckdb.DuckDBPyConnection, schema: RelationSchema, values: Mapping[str, str], origin: str = "saved"
) -> bool:
    """Add a partial relation to the worklist; False when it is already there."""
    query_values = relation_values(schema, values)
    if not query_values:
        raise CurationError(f"fill in at least one of {list(schema.query_types)} to save a relation")
    inserted = con.execute(
        SQL_ADD_ITEM,
        [schema.name, json.dumps(query_values, sort_keys=True), relation_key(schema, query_values), origin],
    ).fetchall()
    return bool(inserted)


def fill_worklist_from_kb(con: duckdb.DuckDBPyConnection, schema: RelationSchema) -> int:
    """Add every relation the KB has only without an answer (for CIViC: gene–variant pairs with
    evidence but no therapy). Returns how many were new."""
    with_answer, without = set(), {}
    for entities_json, answer in con.execute(
        "SELECT entities, answer FROM kb_records WHERE schema_name = ?", [schema.name]
    ).fetchall():
        values = json.loads(entities_json)
        key = relation_key(schema, values)
        if answer:
            with_answer.add(key)
        else:
            without.setdefault(key, values)
    added = 0
    with transaction(con):
        for key, values in without.items():
            if key not in with_answer and add_worklist_item(con, schema, values, origin="kb"):
                added += 1
    return added


def list_worklist(
    con: duckdb.DuckDBPyConnection, schema: RelationSchema, status: str | None = None
) -> list[dict[str, object]]:
    """Worklist items with status, assignee and how many documents have been judged."""
    rows = con.execute(SQL_LIST_ITEMS, [schema.name, status, status]).fetchall()
    return [
        {"item_id": i, "schema": s, "values": json.loads(v), "origin": o, "status": st, "assignee": a, "judged": n}
        for i, s, v, o, st, a, n in rows
    ]


def set_worklist_status(con: duckdb.DuckDBPyConnection, item_id: int, status: str, assignee: str = "") -> None:
    if status not in STATUSES:
        raise CurationError(f"status must be one of {STATUSES}, got '{status}'")
    con.execute(SQL_SET_STATUS, [status, " ".join(assignee.split()), item_id])
