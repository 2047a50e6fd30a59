"""Settings, read in one place.

Every setting comes from an environment variable with the ``CURATION_`` prefix (or its
default); nothing else in the code reads the environment.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from curation.errors import CurationError

PROJECT_ROOT = Path(__file__).resolve().parent.parent
ENV_PREFIX = "CURATION_"


def _env(name: str, default: str) -> str:
    return os.environ.get(ENV_PREFIX + name, default)


def _db_path() -> Path:
    return Path(_env("DB", str(PROJECT_ROOT / "data" / "curation.duckdb")))


@dataclass(frozen=True)
class Settings:
    """Typed settings.

    Attributes:
        db_path: the DuckDB store (``CURATION_DB``).
        data_dir: the shared real data (``CURATION_DATA_DIR``), used by benchmarks and tests.
        models_dir: model registry root (``CURATION_MODELS_DIR``).
        jobs_dir: background jobs' folders: snapshot, progress, result, log (``CURATION_JOBS_DIR``).
        cache_dir: where fetched PubMed/CIViC responses are kept (``CURATION_CACHE_DIR``).
        schema_file: optional TOML file of user-defined schemas (``CURATION_SCHEMAS``).
        ncbi_email, ncbi_api_key: NCBI E-utilities identity (``CURATION_NCBI_EMAIL``, ``CURATION_NCBI_API_KEY``).
        hgnc_file: optional HGNC complete-set TSV for gene synonyms (``CURATION_HGNC_FILE``).
        backups_dir: where store backups go (``CURATION_BACKUPS_DIR``; default ``backups/`` beside the
            store, so ``data/backups`` for the default store), one folder per store.
        backup_interval_min: the app backs the store up when its newest backup is older than this
            (``CURATION_BACKUP_INTERVAL_MIN``; 0 turns automatic backups off).
        timing_log: when set (``CURATION_TIMING_LOG``), the app appends one JSON line per recorded
            decision to this file: the server's own time for it (bench/load.py reads it); unset: nothing written.
        index_backend: where new model versions keep their dense vectors (``CURATION_INDEX_BACKEND``): ``faiss``
            (files in the version folder; the default) or ``milvus``.
        index_kind: the dense index new versions build (``CURATION_INDEX_KIND``): ``auto`` (chosen from the
            corpus size and this machine's memory, :func:`index.dense.choose_config`), ``flat``, ``hnsw``, ``ivfpq``.
        milvus_uri: the Milvus server (``CURATION_MILVUS_URI``, e.g. ``http://milvus:19530``); empty: Milvus
            Lite, an embedded file inside each version's folder.
        milvus_token: the server's token (``CURATION_MILVUS_TOKEN``, ``user:password`` or an API key).
    """

    db_path: Path = field(default_factory=_db_path)
    data_dir: Path = field(default_factory=lambda: Path(_env("DATA_DIR", str(PROJECT_ROOT.parent / "shared" / "data"))))
    models_dir: Path = field(default_factory=lambda: Path(_env("MODELS_DIR", str(PROJECT_ROOT / "models"))))
    jobs_dir: Path = field(default_factory=lambda: Path(_env("JOBS_DIR", str(PROJECT_ROOT / "data" / "jobs"))))
    cache_dir: Path = field(default_factory=lambda: Path(_env("CACHE_DIR", str(PROJECT_ROOT / "data" / "cache"))))
    schema_file: Path | None = field(
        default_factory=lambda: Path(_env("SCHEMAS", "")) if _env("SCHEMAS", "") else None
    )
    ncbi_email: str = field(default_factory=lambda: _env("NCBI_EMAIL", ""))
    ncbi_api_key: str = field(default_factory=lambda: _env("NCBI_API_KEY", ""))
    hgnc_file: Path | None = field(
        default_factory=lambda: Path(_env("HGNC_FILE", "")) if _env("HGNC_FILE", "") else None
    )
    backups_dir: Path = field(default_factory=lambda: Path(_env("BACKUPS_DIR", str(_db_path().parent / "backups"))))
    backup_interval_min: float = field(default_factory=lambda: float(_env("BACKUP_INTERVAL_MIN", "30")))
    timing_log: Path | None = field(
        default_factory=lambda: Path(_env("TIMING_LOG", "")) if _env("TIMING_LOG", "") else None
    )
    index_backend: str = field(default_factory=lambda: _env("INDEX_BACKEND", "faiss"))
    index_kind: str = field(default_factory=lambda: _env("INDEX_KIND", "auto"))
    milvus_uri: str = field(default_factory=lambda: _env("MILVUS_URI", ""))
    milvus_token: str = field(default_factory=lambda: _env("MILVUS_TOKEN", ""))

    def __post_init__(self) -> None:
        if self.index_backend not in INDEX_BACKENDS:
            raise CurationError(f"CURATION_INDEX_BACKEND is '{self.index_backend}'; "
                                f"use one of {', '.join(INDEX_BACKENDS)}")
        if self.index_kind not in INDEX_KINDS:
            raise CurationError(f"CURATION_INDEX_KIND is '{self.index_kind}'; use one of {', '.join(INDEX_KINDS)}")


INDEX_BACKENDS = ("faiss", "milvus")
INDEX_KINDS = ("auto", "flat", "hnsw", "ivfpq")


def load_settings() -> Settings:
    """Current settings (read from the environment each call, so tests can change them)."""
    return Settings()
