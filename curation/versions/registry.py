"""The model registry: one immutable folder per model version under ``models/``.

``models/<version>/`` holds ``model/`` (sentence-transformers weights), ``dense/`` (its FAISS
index over the corpus), ``lexical/`` (the BM25 index of the same corpus) and
``manifest.json`` (base model, schema, configs, data snapshot digest, training time, device,
metrics: :class:`~curation.versions.manifest.Manifest`). A version is built under
``<version>.tmp/`` and renamed into place when complete, so a crash never leaves a
half-written version where a reader looks; an existing version is never overwritten.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from curation.versions.manifest import Manifest, RegistryError, read_manifest, write_manifest

MANIFEST = "manifest.json"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,80}")


@dataclass(frozen=True)
class ModelVersion:
    version: str
    path: Path
    manifest: Manifest

    @property
    def model_dir(self) -> Path:
        return self.path / "model"

    @property
    def dense_dir(self) -> Path:
        return self.path / "dense"

    @property
    def lexical_dir(self) -> Path:
        return self.path / "lexical"

    @property
    def metrics(self) -> dict[str, float]:
        return dict(self.manifest.metrics)


def timestamped_name(prefix: str) -> str:
    """A model folder's name no earlier build used: ``prefix`` and the time in UTC (``biomed-20250101-120000``)."""
    return f"{prefix}-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}"


def new_version_name(schema: str, kind: str = "edel") -> str:
    return timestamped_name(f"{schema.lower()}-{kind}")


def check_name(version: str) -> str:
    if not _NAME.fullmatch(version) or version.endswith(".tmp"):
        raise RegistryError(f"'{version}' is not a valid version name (letters, digits, '.', '_', '-')")
    return version


def staging(models_dir: str | Path, version: str) -> Path:
    """A fresh ``<version>.tmp`` folder to build a version in.

    Raises:
        RegistryError: the version already exists (versions are immutable).
    """
    models_dir = Path(models_dir)
    final = models_dir / check_name(version)
    if final.exists():
        raise RegistryError(f"model version {version} already exists in {models_dir}; versions are immutable")
    tmp = models_dir / f"{version}.tmp"
    if tmp.exists():
        shutil.rmtree(tmp)  # the remains of an interrupted build
    tmp.mkdir(parents=True)
    return tmp


def publish(models_dir: str | Path, version: str, manifest: Manifest) -> ModelVersion:
    """Write the manifest (with the version's name and publication time) into the staged folder, then rename it."""
    models_dir = Path(models_dir)
    tmp = models_dir / f"{version}.tmp"
    for part in ("model", "dense", "lexical"):
        if not (tmp / part).is_dir():
            raise RegistryError(f"cannot publish {version}: {part}/ is missing from {tmp}")
    manifest = replace(manifest, version=version, published_at=datetime.now(UTC).isoformat(timespec="seconds"))
    write_manifest(tmp / MANIFEST, manifest)
    final = models_dir / version
    if final.exists():
        raise RegistryError(f"model version {version} already exists; versions are immutable")
    tmp.rename(final)
    return ModelVersion(version, final, manifest)


def read_version(path: str | Path) -> ModelVersion:
    """A published version's manifest, checked for completeness.

    Raises:
        RegistryError: the folder is missing parts, or its manifest is unreadable or not a manifest
            (a missing, unknown or mistyped field; the message names the file and the field).
    """
    path = Path(path)
    if not (path / MANIFEST).is_file():
        raise RegistryError(f"{path} is not a model version (no {MANIFEST})")
    manifest = read_manifest(path / MANIFEST)
    for part in ("model", "dense", "lexical"):
        if not (path / part).is_dir():
            raise RegistryError(f"model version {path.name} is incomplete: {part}/ is missing")
    return ModelVersion(path.name, path, manifest)


# The models folder's other tenants, never versions: trained recognisers, linkers and relation scorers
# (curation.learning.recogniser.learner.RECOGNISERS, the linker's folder, curation.relations.scorer_folder.SCORERS).
OWN_FOLDERS = frozenset({"recognisers", "linkers", "relations"})


def list_versions(models_dir: str | Path) -> tuple[list[ModelVersion], list[str]]:
    """Published versions, newest first, and messages for folders that are not usable versions."""
    models_dir = Path(models_dir)
    versions, problems = [], []
    if not models_dir.is_dir():
        return versions, problems
    for path in sorted(models_dir.iterdir()):
        if (not path.is_dir() or path.name.endswith(".tmp") or path.name.startswith(".")  # .cache: the build cache
                or path.name in OWN_FOLDERS):
            continue
        try:
            versions.append(read_version(path))
        except RegistryError as exc:
            problems.append(str(exc))
    versions.sort(key=lambda v: v.manifest.published_at, reverse=True)
    return versions, problems
