"""Connection, migrations, transactions, relation schemas and counts."""

from __future__ import annotations

import glob
import json
import re
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from curation.schemas import BUILTIN, STARTER, RelationSchema, schema_from_dict
from curation.store.migrations import MIGRATIONS

SQL_CREATE_VERSION_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, description VARCHAR, "
    "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
)
SQL_CURRENT_VERSION = "SELECT coalesce(max(version), 0) FROM schema_version"
SQL_RECORD_VERSION = "INSERT INTO schema_version (version, description) VALUES (?, ?)"

SQL_RECORD_INGEST = "INSERT INTO ingests (kind, path, added, unchanged, skipped) VALUES (?, ?, ?, ?, ?)"
SQL_INGEST_TIMES = "SELECT path, epoch(max(ingested_at)) FROM ingests WHERE kind = ? GROUP BY path"
SQL_UPSERT_SCHEMA = "INSERT OR REPLACE INTO relation_schemas (name, definition, builtin) VALUES (?, ?, ?)"
SQL_LIST_SCHEMAS = "SELECT definition, builtin FROM relation_schemas ORDER BY builtin DESC, name"
SQL_ADD_SCHEMA_IF_ABSENT = ("INSERT INTO relation_schemas (name, definition, builtin) VALUES (?, ?, ?) "
                            "ON CONFLICT DO NOTHING")
SQL_REMOVE_SCHEMA = "DELETE FROM relation_schemas WHERE name = ? AND NOT builtin"
SQL_SCHEMA_USE = {
    "KB records": "SELECT count(*) FROM kb_records WHERE schema_name = ?",
    "decisions": "SELECT count(*) FROM decisions WHERE schema_name = ?",
    "screening topics": "SELECT count(*) FROM screening_topics WHERE schema_name = ?",
}

SQL_COUNT = {
    "kb_records": "SELECT count(*) FROM kb_records",
    "documents": "SELECT count(*) FROM documents",
    "mentions": "SELECT count(*) FROM mentions",
    "relations": "SELECT count(*) FROM relations",
    "synonyms": "SELECT count(*) FROM synonyms",
    "decisions": "SELECT count(*) FROM decisions WHERE superseded_by IS NULL",
    "annotations": "SELECT count(*) FROM annotations",
    "annotated_documents": "SELECT count(*) FROM annotated_documents",
}
SQL_KB_BY_SCHEMA = "SELECT schema_name, count(*) FROM kb_records GROUP BY 1 ORDER BY 1"
SQL_KB_WITH_PMID_IN_CORPUS = (
    "SELECT count(*) FROM kb_records k WHERE k.pmid IS NOT NULL AND k.pmid IN (SELECT pmid FROM documents)"
)


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


LOCK_ERROR = re.compile(r"could not set lock|conflicting lock|lock on file", re.IGNORECASE)
WAL_COPIES = 3  # raw copies of a leftover write-ahead log kept beside the store


def _keep_wal_copy(path: Path) -> None:
    """Copy a write-ahead log left by a process that stopped without a checkpoint, before DuckDB replays it.

    DuckDB drops a truncated or header-damaged WAL without an error (docs/RELIABILITY.md); the
    raw copy keeps what it held for ``python -m curation recover`` or a person. The newest
    :data:`WAL_COPIES` are kept.
    """
    wal = path.with_name(path.name + ".wal")
    try:
        if not wal.exists() or wal.stat().st_size == 0:
            return
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        shutil.copy2(wal, wal.with_name(f"{wal.name}.at-open-{stamp}"))
        copies = sorted(wal.parent.glob(f"{glob.escape(wal.name)}.at-open-*"))
        for old in copies[:-WAL_COPIES]:
            old.unlink(missing_ok=True)
    except OSError:
        pass  # a copy that cannot be made (read-only folder, full disk) must not stop the store opening


# DuckDB never downloads an extension at run time here. Replaying a write-ahead log that holds schema
# changes binds functions from `core_functions`, which the Python wheel links statically; DuckDB's default
# is to try to install it first, which fails offline and left a store killed after an ingest unreadable
# until `recover` (found by tests/curation/workflows/test_quickstart.py). Without auto-install it is loaded as linked.
CONNECT_CONFIG = {"autoinstall_known_extensions": False}


def connect(path: str | Path, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A plain DuckDB connection with this project's settings (no migrations: see :func:`open_store`)."""
    return duckdb.connect(str(path), read_only=read_only, config=dict(CONNECT_CONFIG))


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
            if version == 16:
                for schema in STARTER:
                    con.execute(SQL_ADD_SCHEMA_IF_ABSENT, [schema.name, json.dumps(schema.to_dict()), False])
        current = version
    return current


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    return _scalar(con, SQL_CURRENT_VERSION)


# --- relation schemas ---------------------------------------------------------------------


def add_schema(con: duckdb.DuckDBPyConnection, schema: RelationSchema) -> None:
    """Save a user-defined schema (replacing one of the same name)."""
    con.execute(SQL_UPSERT_SCHEMA, [schema.name, json.dumps(schema.to_dict()), schema.builtin])


def remove_schema(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    """Delete a user-defined schema (never a built-in one); whether one was deleted. Its use is the caller's check
    (:func:`schema_use`)."""
    return bool(con.execute(SQL_REMOVE_SCHEMA + " RETURNING name", [name]).fetchall())


def schema_use(con: duckdb.DuckDBPyConnection, name: str) -> dict[str, int]:
    """What the store holds of schema ``name``: KB records, decisions, screening topics (only those it has)."""
    counts = {what: _scalar_with(con, sql, name) for what, sql in SQL_SCHEMA_USE.items()}
    return {what: n for what, n in counts.items() if n}


def _scalar_with(con: duckdb.DuckDBPyConnection, sql: str, value: str) -> int:
    return int(con.execute(sql, [value]).fetchone()[0])


def list_schemas(con: duckdb.DuckDBPyConnection) -> list[RelationSchema]:
    """Built-in schemas first, then the user-defined ones saved in this store."""
    schemas = []
    for definition, builtin in con.execute(SQL_LIST_SCHEMAS).fetchall():
        if builtin and json.loads(definition)["name"] in BUILTIN:
            schemas.append(BUILTIN[json.loads(definition)["name"]])
        else:
            schemas.append(schema_from_dict(json.loads(definition), where="stored schema"))
    return schemas


# --- bookkeeping --------------------------------------------------------------------------


def record_ingest(
    con: duckdb.DuckDBPyConnection, kind: str, path: str, added: int, unchanged: int, skipped: int
) -> None:
    con.execute(SQL_RECORD_INGEST, [kind, path, added, unchanged, skipped])


def ingest_times(con: duckdb.DuckDBPyConnection, kind: str) -> dict[str, float]:
    """When each path of ``kind`` was last logged as ingested whole (seconds since the epoch), by path."""
    return {path: float(when) for path, when in con.execute(SQL_INGEST_TIMES, [kind]).fetchall()}


SQL_CONTENT_COUNTS = (
    "SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM kb_records WHERE source <> 'curator'), "
    "(SELECT count(*) FROM synonyms)"
)


def content_counts(con: duckdb.DuckDBPyConnection) -> tuple[int, int, int]:
    """(documents, imported KB records, synonyms) in one query: what cached resources are built from.

    Records curators make with their answers are left out: a decision must not make the app
    rebuild its dictionaries and indexes (seconds) on the next click.
    """
    documents, records, synonyms = con.execute(SQL_CONTENT_COUNTS).fetchall()[0]
    return int(documents), int(records), int(synonyms)


def stats(con: duckdb.DuckDBPyConnection) -> dict[str, object]:
    """Counts for the CLI, the sidebar and health checks."""
    out: dict[str, object] = {name: _scalar(con, sql) for name, sql in SQL_COUNT.items()}
    out["kb_records_by_schema"] = dict(con.execute(SQL_KB_BY_SCHEMA).fetchall())
    out["kb_records_with_abstract"] = _scalar(con, SQL_KB_WITH_PMID_IN_CORPUS)
    out["schemas"] = [s.name for s in list_schemas(con)]
    out["schema_version"] = schema_version(con)
    return out
