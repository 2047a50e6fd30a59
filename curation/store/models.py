"""Model versions known to the store, and which one is active per relation schema: the SQL.

The registry (``models/<version>/``) holds the versions themselves; the ``model_versions``
table records which have been seen (with a copy of each manifest, as a JSON object) and which
one the app serves for each schema. These functions take and return plain values
(:class:`VersionRow`); :mod:`curation.versions.catalog` reads the manifests, checks the
folders and keeps at most one version per schema active.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import duckdb

SQL_REGISTER_VERSION = """
INSERT INTO model_versions (version, schema_name, path, manifest) VALUES (?, ?, ?, ?)
ON CONFLICT (version) DO UPDATE SET path = excluded.path
"""
SQL_VERSION_COLUMNS = "version, schema_name, path, manifest, active, CAST(created_at AS VARCHAR)"
SQL_LIST_VERSIONS = f"""
SELECT {SQL_VERSION_COLUMNS} FROM model_versions
WHERE (? IS NULL OR schema_name = ?)
ORDER BY json_extract_string(manifest, '$.published_at') DESC NULLS LAST, created_at DESC, version
"""
SQL_GET_VERSION = f"SELECT {SQL_VERSION_COLUMNS} FROM model_versions WHERE version = ?"
SQL_ACTIVE_VERSION = f"SELECT {SQL_VERSION_COLUMNS} FROM model_versions WHERE schema_name = ? AND active"
SQL_ACTIVATE = "UPDATE model_versions SET active = (version = ?) WHERE schema_name = ? AND active <> (version = ?)"
SQL_DEACTIVATE = "UPDATE model_versions SET active = false WHERE schema_name = ? AND active"


@dataclass(frozen=True)
class VersionRow:
    """One row of ``model_versions``.

    Attributes:
        version: the registry name (``models/<version>/``).
        schema: the relation schema it was built for.
        path: its folder, as registered.
        manifest: its manifest as registered (the JSON object; typed by ``curation.versions.catalog``).
        active: whether the app serves it for its schema.
        registered_at: when the store first saw it.
    """

    version: str
    schema: str
    path: str
    manifest: dict
    active: bool
    registered_at: str


def _row(row: tuple) -> VersionRow:
    version, schema, path, manifest, active, created = row
    return VersionRow(version, schema, path, json.loads(manifest), bool(active), created)


def insert_version_row(con: duckdb.DuckDBPyConnection, version: str, schema: str, path: str,
                       manifest: Mapping[str, object]) -> bool:
    """Record a version; False when the store already knows it (then only its path is updated)."""
    before = get_version_row(con, version)
    con.execute(SQL_REGISTER_VERSION, [version, schema, path, json.dumps(manifest, default=str)])
    return before is None


def get_version_row(con: duckdb.DuckDBPyConnection, version: str) -> VersionRow | None:
    rows = con.execute(SQL_GET_VERSION, [version]).fetchall()
    return _row(rows[0]) if rows else None


def list_version_rows(con: duckdb.DuckDBPyConnection, schema: str | None = None) -> list[VersionRow]:
    """Recorded versions, newest published first, optionally of one schema."""
    return [_row(row) for row in con.execute(SQL_LIST_VERSIONS, [schema, schema]).fetchall()]


def get_active_version_row(con: duckdb.DuckDBPyConnection, schema: str) -> VersionRow | None:
    """The version marked active for ``schema``, or None."""
    rows = con.execute(SQL_ACTIVE_VERSION, [schema]).fetchall()
    return _row(rows[0]) if rows else None


def set_active_version(con: duckdb.DuckDBPyConnection, version: str, schema: str) -> None:
    """Mark ``version`` active and every other version of ``schema`` inactive (one statement)."""
    con.execute(SQL_ACTIVATE, [version, schema, version])


def clear_active_version(con: duckdb.DuckDBPyConnection, schema: str) -> None:
    """Mark no version of ``schema`` active."""
    con.execute(SQL_DEACTIVATE, [schema])
