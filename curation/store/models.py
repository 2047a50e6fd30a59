"""Model versions known to the store, and which one is active per relation schema.

The registry (``models/<version>/``) holds the versions themselves; the ``model_versions``
table records which have been seen and which one the app serves for each schema. At most
one version per schema is active: :func:`activate_version` switches it in one transaction.
A folder that has gone missing or is corrupted is reported, never loaded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import duckdb

from curation.errors import USER_ERRORS, CurationError
from curation.store.base import transaction
from curation.versions import registry

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
class RegisteredVersion:
    """A model version as the store records it.

    Attributes:
        version: the registry name (``models/<version>/``).
        schema: the relation schema it was built for.
        path: its folder.
        manifest: its manifest.json as published (metrics, loss curve, device, ...).
        active: whether the app serves it for its schema.
        registered_at: when the store first saw it.
    """

    version: str
    schema: str
    path: Path
    manifest: dict
    active: bool
    registered_at: str

    @property
    def metrics(self) -> dict[str, float]:
        """Dev metrics of the dense retriever (empty when it was built without a dev set)."""
        return dict(self.manifest.get("metrics", {}))

    @property
    def metrics_hybrid(self) -> dict[str, float]:
        """Dev metrics of the dense retriever fused with BM25."""
        return dict(self.manifest.get("metrics_hybrid", {}))

    @property
    def loss_curve(self) -> list[float]:
        return [float(x) for x in self.manifest.get("loss_curve", [])]


def _registered(row: tuple) -> RegisteredVersion:
    version, schema, path, manifest, active, created = row
    return RegisteredVersion(version, schema, Path(path), json.loads(manifest), bool(active), created)


def register_version(con: duckdb.DuckDBPyConnection, version: registry.ModelVersion) -> bool:
    """Record a published version; False when the store already knows it.

    Versions are immutable, so a known one keeps its manifest; only its path is updated (the
    models folder may have moved).

    Raises:
        CurationError: the manifest names no schema.
    """
    schema = version.manifest.get("schema")
    if not schema:
        raise CurationError(f"model version {version.version}: its {registry.MANIFEST} names no schema")
    before = get_version(con, version.version)
    con.execute(
        SQL_REGISTER_VERSION,
        [version.version, schema, str(version.path), json.dumps(version.manifest, default=str)],
    )
    return before is None


def get_version(con: duckdb.DuckDBPyConnection, version: str) -> RegisteredVersion | None:
    rows = con.execute(SQL_GET_VERSION, [version]).fetchall()
    return _registered(rows[0]) if rows else None


def list_model_versions(con: duckdb.DuckDBPyConnection, schema: str | None = None) -> list[RegisteredVersion]:
    """Registered versions, newest first, optionally of one schema (folders are not checked)."""
    return [_registered(row) for row in con.execute(SQL_LIST_VERSIONS, [schema, schema]).fetchall()]


def check_version(version: RegisteredVersion) -> str:
    """Why a registered version cannot be used ("" when its folder is complete and readable)."""
    try:
        registry.read_version(version.path)
    except registry.RegistryError as exc:
        return f"{exc} (registered as {version.version}; build it again or activate another version)"
    return ""


def sync_model_versions(
    con: duckdb.DuckDBPyConnection, models_dir: str | Path
) -> tuple[list[RegisteredVersion], list[str]]:
    """Register every version published under ``models_dir``; list the usable ones.

    Returns:
        The registered versions whose folders are complete (newest first), and one message per
        registry folder or registered version that is missing, incomplete or corrupted.
    """
    published, problems = registry.list_versions(models_dir)
    known = {v.version: v.path for v in list_model_versions(con)}
    # Pages call this on every run: write only what is new (or has moved).
    fresh = [v for v in published if known.get(v.version) != v.path]
    if fresh:
        with transaction(con):
            for version in fresh:
                try:
                    register_version(con, version)
                except USER_ERRORS as exc:
                    problems.append(str(exc))
    usable = []
    for version in list_model_versions(con):
        problem = check_version(version)
        if problem:
            problems.append(problem)
        else:
            usable.append(version)
    return usable, problems


def activate_version(con: duckdb.DuckDBPyConnection, version: str) -> RegisteredVersion:
    """Make ``version`` the one active version of its schema (the others of it are deactivated).

    Raises:
        CurationError: the version is not registered, or its folder is missing or corrupted.
    """
    with transaction(con):
        found = get_version(con, version)
        if found is None:
            raise CurationError(
                f"model version {version} is not registered; open the Train & evaluate page "
                f"to register the versions under the models folder"
            )
        problem = check_version(found)
        if problem:
            raise CurationError(f"cannot activate {version}: {problem}")
        con.execute(SQL_ACTIVATE, [version, found.schema, version])
    return RegisteredVersion(found.version, found.schema, found.path, found.manifest, True, found.registered_at)


def deactivate_versions(con: duckdb.DuckDBPyConnection, schema: str) -> None:
    """No active version for ``schema``: the app serves the newest version that fits the corpus."""
    con.execute(SQL_DEACTIVATE, [schema])


def active_version(con: duckdb.DuckDBPyConnection, schema: str) -> RegisteredVersion | None:
    """The version the app serves for ``schema``, or None when none was activated."""
    rows = con.execute(SQL_ACTIVE_VERSION, [schema]).fetchall()
    return _registered(rows[0]) if rows else None
