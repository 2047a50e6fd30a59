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
        identity: who the app's user is (``CURATION_IDENTITY``): ``personal`` (the default: no sign-in, a typed
            name), ``oidc`` (team mode, Streamlit's OpenID Connect login; the provider in the ``[auth]`` section of
            ``.streamlit/secrets.toml``) or ``proxy`` (team mode, a trusted reverse proxy's header).
        proxy_header: the header a proxy puts the signed-in person's email in (``CURATION_PROXY_HEADER``; default
            oauth2-proxy's ``X-Forwarded-Email``); read only in ``proxy`` mode.
        proxy_secret: a secret the proxy sends in the ``X-Curation-Proxy-Secret`` header
            (``CURATION_PROXY_SECRET``; required in ``proxy`` mode): a connection without it is not the proxy's.
        roles_claim: an OIDC claim whose values name roles (``CURATION_ROLES_CLAIM``, e.g. ``roles`` or
            ``groups``); empty: roles come from the store only.
        sign_in_hours: how long a sign-in lasts before the app asks for it again (``CURATION_SIGN_IN_HOURS``).
        team_first_maintainer: the one person (email) who becomes maintainer by signing in first to a store
            with no roles (``CURATION_TEAM_FIRST_MAINTAINER``); empty: whoever the provider lets in first.
        team_domains: the email domains admitted to sign in at all (``CURATION_TEAM_DOMAINS``, comma-separated,
            e.g. ``example.org,lab.example.net``); empty: everyone the provider or proxy lets through.
        oidc_email_verified: whether an OIDC sign-in needs ``email_verified: true`` (``CURATION_OIDC_EMAIL_VERIFIED``):
            ``required`` (the default), or ``if-sent`` for a provider that never sends the claim (one that sends
            it as anything but true is still refused).
        vocabularies: the installed packages' vocabularies "Load the sample" loads (``CURATION_VOCABULARIES``):
            unset or ``all``: every one installed; ``none``: none; else comma-separated kinds (``mesh,drug-ner``).
        train_after_load: whether the app's "Load the sample" ends by making the learned parts active (the
            relation scorer, a base encoder version; ``CURATION_TRAIN_AFTER_LOAD``: ``1``, the default, or ``0``;
            ``quickstart --no-train`` is the command line's opt-out).
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
    identity: str = field(default_factory=lambda: _env("IDENTITY", "personal"))
    proxy_header: str = field(default_factory=lambda: _env("PROXY_HEADER", "X-Forwarded-Email"))
    proxy_secret: str = field(default_factory=lambda: _env("PROXY_SECRET", ""))
    roles_claim: str = field(default_factory=lambda: _env("ROLES_CLAIM", ""))
    sign_in_hours: float = field(default_factory=lambda: float(_env("SIGN_IN_HOURS", "12")))
    team_first_maintainer: str = field(default_factory=lambda: _env("TEAM_FIRST_MAINTAINER", "").strip().lower())
    team_domains: tuple[str, ...] = field(default_factory=lambda: tuple(
        d.strip().lower() for d in _env("TEAM_DOMAINS", "").split(",") if d.strip()))
    oidc_email_verified: str = field(default_factory=lambda: _env("OIDC_EMAIL_VERIFIED", "required"))
    vocabularies: tuple[str, ...] | None = field(default_factory=lambda: _vocabularies(_env("VOCABULARIES", "all")))
    train_after_load: bool = field(default_factory=lambda: _env("TRAIN_AFTER_LOAD", "1").strip() != "0")

    def __post_init__(self) -> None:
        if self.index_backend not in INDEX_BACKENDS:
            raise CurationError(f"CURATION_INDEX_BACKEND is '{self.index_backend}'; "
                                f"use one of {', '.join(INDEX_BACKENDS)}")
        if self.index_kind not in INDEX_KINDS:
            raise CurationError(f"CURATION_INDEX_KIND is '{self.index_kind}'; use one of {', '.join(INDEX_KINDS)}")
        if self.identity not in IDENTITY_MODES:
            raise CurationError(f"CURATION_IDENTITY is '{self.identity}'; use one of {', '.join(IDENTITY_MODES)} "
                                "(docs/SECURITY.md, Team mode)")
        if self.sign_in_hours <= 0:
            raise CurationError(f"CURATION_SIGN_IN_HOURS is {self.sign_in_hours}; give a number of hours above 0")
        for domain in self.team_domains:
            if "@" in domain or any(c.isspace() for c in domain):
                raise CurationError(f"CURATION_TEAM_DOMAINS names '{domain}'; give bare domains separated by commas "
                                    "(example.org,lab.example.net)")
        if self.oidc_email_verified not in EMAIL_VERIFIED_MODES:
            raise CurationError(f"CURATION_OIDC_EMAIL_VERIFIED is '{self.oidc_email_verified}'; use "
                                f"{' or '.join(EMAIL_VERIFIED_MODES)} (docs/SECURITY.md, Team mode)")

    @property
    def team(self) -> bool:
        """Team mode: the curator is a signed-in person, and roles are enforced."""
        return self.identity != "personal"


INDEX_BACKENDS = ("faiss", "milvus")
INDEX_KINDS = ("auto", "flat", "hnsw", "ivfpq")
IDENTITY_MODES = ("personal", "oidc", "proxy")
EMAIL_VERIFIED_MODES = ("required", "if-sent")


def _vocabularies(value: str) -> tuple[str, ...] | None:
    value = value.strip().lower()
    if value in ("", "all"):
        return None
    return () if value == "none" else tuple(v.strip() for v in value.split(",") if v.strip())


def load_settings() -> Settings:
    """Current settings (read from the environment each call, so tests can change them)."""
    return Settings()
