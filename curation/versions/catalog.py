"""Model versions known to the store, and which one is active per relation schema.

The registry (``models/<version>/``) holds the versions themselves; the store's
``model_versions`` table (:mod:`curation.store.models`) records which have been seen, with a
copy of each manifest, and which one the app serves for each schema. At most one version per
schema is active: :func:`activate_version` switches it in one transaction. A folder that has
gone missing or is corrupted is reported, never loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import duckdb

from curation.errors import USER_ERRORS, CurationError
from curation.store.base import transaction
from curation.store.models import (
    VersionRow,
    clear_active_version,
    get_active_version_row,
    get_version_row,
    insert_version_row,
    list_version_rows,
    set_active_version,
)
from curation.versions import registry
from curation.versions.manifest import Manifest, manifest_json, parse_manifest


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
    manifest: Manifest
    active: bool
    registered_at: str

    @property
    def metrics(self) -> dict[str, float]:
        """Dev metrics of the dense retriever (empty when it was built without a dev set)."""
        return dict(self.manifest.metrics)

    @property
    def metrics_hybrid(self) -> dict[str, float]:
        """Dev metrics of the dense retriever fused with BM25."""
        return dict(self.manifest.metrics_hybrid)

    @property
    def loss_curve(self) -> list[float]:
        return list(self.manifest.loss_curve)


def _registered(row: VersionRow) -> RegisteredVersion:
    manifest = parse_manifest(row.manifest, f"the store's copy of {row.version}/{registry.MANIFEST}")
    return RegisteredVersion(row.version, row.schema, Path(row.path), manifest, row.active, row.registered_at)


def register_version(con: duckdb.DuckDBPyConnection, version: registry.ModelVersion) -> bool:
    """Record a published version; False when the store already knows it.

    Versions are immutable, so a known one keeps its manifest; only its path is updated (the
    models folder may have moved).

    Raises:
        CurationError: the manifest names no schema.
    """
    if not version.manifest.schema:
        raise CurationError(f"model version {version.version}: its {registry.MANIFEST} names no schema")
    return insert_version_row(con, version.version, version.manifest.schema, str(version.path),
                              manifest_json(version.manifest))


def get_version(con: duckdb.DuckDBPyConnection, version: str) -> RegisteredVersion | None:
    row = get_version_row(con, version)
    return _registered(row) if row else None


def list_model_versions(con: duckdb.DuckDBPyConnection, schema: str | None = None) -> list[RegisteredVersion]:
    """Registered versions, newest first, optionally of one schema (folders are not checked)."""
    return [_registered(row) for row in list_version_rows(con, schema)]


def check_version(version: RegisteredVersion) -> str:
    """Why a registered version cannot be used ("" when its folder is complete and readable)."""
    try:
        registry.read_version(version.path)
    except registry.RegistryError as exc:
        return f"{exc} (registered as {version.version}; build it again or activate another version)"
    return ""


def sync_model_versions(
    con: duckdb.DuckDBPyConnection, models_dir: str | Path, register: bool = True
) -> tuple[list[RegisteredVersion], list[str]]:
    """Register every version published under ``models_dir``; list the usable ones.

    ``register=False`` writes nothing: the versions already registered are listed (for someone who may not
    write to the store).

    Returns:
        The registered versions whose folders are complete (newest first), and one message per
        registry folder or registered version that is missing, incomplete or corrupted.
    """
    published, problems = registry.list_versions(models_dir) if register else ([], [])
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
        set_active_version(con, version, found.schema)
    return replace(found, active=True)


def deactivate_versions(con: duckdb.DuckDBPyConnection, schema: str) -> None:
    """No active version for ``schema``: the app serves the newest version that fits the corpus."""
    clear_active_version(con, schema)


def active_version(con: duckdb.DuckDBPyConnection, schema: str) -> RegisteredVersion | None:
    """The version the app serves for ``schema``, or None when none was activated."""
    row = get_active_version_row(con, schema)
    return _registered(row) if row else None
