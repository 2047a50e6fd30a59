"""The serving policy: which model version ranks a schema's searches, and why another one does not.

A schema's active version serves while its index covers the corpus; an unusable folder is not loaded,
and the newest complete version of that schema (of any schema, when none is named) that covers the corpus
serves instead; without one, the newest untrained (zero-shot) version of any schema, whose encoder learned
nothing from a schema's records; without that, BM25 alone. A version serves a schema it was not built for
without its learned ranker: that schema's own ranker (kept beside the versions) ranks instead, if one exists.
Each version ranks with the fusion chosen on its dev split, which :func:`index.loading.open_retriever` reads
back from its manifest.

Everything a served retriever depends on is in its :class:`ServingKey`, so an app can cache retrievers
by key: activating a version changes the key, and the next search loads (or finds preloaded) the new one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import duckdb

from curation.errors import USER_ERRORS
from curation.ranking.history import ranker_home
from curation.store.base import content_counts
from curation.versions import catalog
from curation.versions.kept_bm25 import bm25_alone
from curation.versions.registry import ModelVersion, list_versions
from index.search import Retriever

T = TypeVar("T")
BM25_ONLY = "bm25-only"  # the version name of the fallback that ranks with BM25 alone
NEWEST = "newest:"  # a key's mark for "no active version: the newest registered one that fits" (never a name)


@dataclass(frozen=True)
class ServingKey:
    """What the served retriever of a schema depends on.

    Attributes:
        documents: the corpus size a version's index must cover.
        active: the active version names considered (one schema's, or every schema's when ``schema`` is ""); with a
            schema and none active, ``newest:<name>`` of the newest registered version that fits, so that a version
            registered while the app runs is served without a restart.
        schema: the schema whose versions may serve ("" for any).
    """

    documents: int
    active: tuple[str, ...]
    schema: str = ""


def open_version(path: Path) -> Retriever:
    """Load a version folder as a Retriever, on its backend (a Milvus-built version: ``CURATION_MILVUS_URI``).

    Raises:
        RetrievalError: a part is missing or corrupted, or its Milvus engine is unreachable.
    """
    from curation.config import load_settings
    from index.loading import open_retriever

    settings = load_settings()
    return open_retriever(path, milvus_uri=settings.milvus_uri, milvus_token=settings.milvus_token)


def engine_problem(path: Path) -> str:
    """Why the engine behind a version's vectors cannot serve it ("" when it can, or the vectors are files).

    Only a Milvus-backed version is opened here (a connection and its collection, not the model): FAISS
    files are checked by :func:`curation.versions.catalog.check_version`.
    """
    from curation.config import load_settings
    from index.dense import MANIFEST_FILE, read_manifest
    from index.loading import load_dense
    from index.milvus import BACKEND

    dense = Path(path) / "dense"
    if not (dense / MANIFEST_FILE).is_file():  # FAISS parts, or none: the registry's check says what is wrong
        return ""
    try:
        if read_manifest(dense).get("backend") != BACKEND:
            return ""
        settings = load_settings()
        load_dense(dense, settings.milvus_uri, settings.milvus_token).close()
    except USER_ERRORS as exc:
        return str(exc)
    return ""


def serving_key(con: duckdb.DuckDBPyConnection, schema: str = "") -> ServingKey:
    """The key of what serves ``schema`` now (without ``schema``: any schema's active versions)."""
    documents = content_counts(con)[0]
    if schema:
        active = catalog.active_version(con, schema)
        names: tuple[str, ...] = (active.version,) if active else ()
        if not names:  # the newest registered version that fits serves: a new one changes the key (no restart)
            fitting = _serving_order([v for v in catalog.list_model_versions(con) if v.manifest.documents == documents],
                                     schema, lambda v: v.schema, lambda v: v.manifest.trained)
            names = (f"{NEWEST}{fitting[0].version}",) if fitting else ()
    else:
        names = tuple(sorted(v.version for v in catalog.list_model_versions(con) if v.active))
    return ServingKey(documents, names, schema)


def key_once_active(con: duckdb.DuckDBPyConnection, version: str) -> ServingKey | None:
    """The key a registered version will serve under once it is active (to load it before the flag flips)."""
    registered = catalog.get_version(con, version)
    if registered is None:
        return None
    return ServingKey(content_counts(con)[0], (registered.version,), registered.schema)


def open_served(con: duckdb.DuckDBPyConnection, models_dir: Path, key: ServingKey,
                open_version: Callable[[Path], Retriever] | None = None, cache_dir: Path | None = None) -> Retriever:
    """Load the retriever that serves ``key``: its active version, else the newest that fits, else BM25 alone.

    Args:
        con: the store (registered versions, and the documents BM25 indexes when no version fits).
        models_dir: the registry folder.
        key: what to serve (:func:`serving_key`).
        open_version: loads a version folder (default :func:`index.loading.open_retriever`).
        cache_dir: where BM25 alone is kept between processes (:mod:`curation.versions.kept_bm25`); None: built.
    """
    if open_version is None:
        open_version = globals()["open_version"]
    for version in catalog.list_model_versions(con):
        if version.version in key.active and version.manifest.documents == key.documents \
                and not catalog.check_version(version):
            try:
                return with_ranker(open_version(version.path), version.path, con, key)
            except USER_ERRORS:
                break  # corrupted weights, index or ranker: fall through to the newest version that loads
    for version in _fallbacks(models_dir, key):
        own = not key.schema or version.manifest.schema == key.schema
        try:
            return with_ranker(open_version(version.path),
                               version.path if own else ranker_home(models_dir, None, key.schema), con, key)
        except USER_ERRORS:
            continue  # a corrupted version is skipped; the Train & evaluate page reports it
    bm25 = Retriever(lexical=bm25_alone(con, cache_dir), version=BM25_ONLY)
    # BM25 alone can serve a learned ranker too (updated before any version was built): kept beside the versions
    try:
        return with_ranker(bm25, ranker_home(models_dir, None, key.schema), con, key) if key.schema else bm25
    except USER_ERRORS:
        return bm25  # a damaged ranker: the concept search alone serves; the Train & evaluate page names the file


def with_ranker(engine: Retriever, path: Path, con: duckdb.DuckDBPyConnection, key: ServingKey) -> Retriever:
    """``engine`` with the learned ranking stage its version folder holds (``ranker/``), reading the store's signals;
    unchanged when the folder holds none.

    Raises:
        RankerError: the folder's ranker cannot be read (the message names the file).
    """
    from curation.ranking.signals import StoreSignals
    from curation.ranking.stage import RANKER_FOLDER, attach

    folder = Path(path) / RANKER_FOLDER
    if not folder.is_dir() or not key.schema:
        return engine
    from curation.store.base import list_schemas

    schema = next((s for s in list_schemas(con) if s.name == key.schema), None)
    return attach(engine, folder, StoreSignals(con, schema)) if schema is not None else engine


def planned_version(con: duckdb.DuckDBPyConnection, models_dir: Path, key: ServingKey) -> str:
    """The version :func:`open_served` tries first for ``key``, found without loading anything.

    What a page can show (and whether dense ranking is offered: every version has a dense index, BM25
    alone has none) while the retriever is still loading. It differs from what serves only when that
    version then fails to load, which the loaded retriever shows on the next run.
    """
    for version in catalog.list_model_versions(con):
        if version.version in key.active and version.manifest.documents == key.documents \
                and not catalog.check_version(version):
            return version.version
    fallbacks = _fallbacks(models_dir, key)
    return fallbacks[0].path.name if fallbacks else BM25_ONLY


def _fallbacks(models_dir: Path, key: ServingKey) -> list[ModelVersion]:
    """The complete versions that may serve ``key`` when its active one does not, in the order tried: the key's
    schema's own (any schema's, when none is named), newest first, then the untrained ones of other schemas."""
    versions, _ = list_versions(models_dir)  # complete, readable folders only
    return _serving_order([v for v in versions if v.manifest.documents == key.documents], key.schema,
                          lambda v: v.manifest.schema, lambda v: v.manifest.trained)


def _serving_order(candidates: list[T], schema: str, built_for: Callable[[T], str], trained: Callable[[T], bool]
                   ) -> list[T]:
    """The versions (newest first) that may serve ``schema``, in the order tried: its own (any schema's, when none is
    named), then the untrained versions of other schemas (one rule for the registry's folders and the store's rows)."""
    if not schema:
        return list(candidates)
    return ([c for c in candidates if built_for(c) == schema]
            + [c for c in candidates if built_for(c) != schema and not trained(c)])


def shared_base(con: duckdb.DuckDBPyConnection, schema: str, version: str) -> str:
    """The schema ``version`` was built for, when it serves ``schema`` as an untrained version of another schema
    ("" when it is ``schema``'s own, trained, or not registered)."""
    registered = catalog.get_version(con, version)
    if registered is None or registered.schema == schema or registered.manifest.trained:
        return ""
    return registered.schema


def load_problem(path: Path) -> str:
    """Why the version folder at ``path`` does not load ("it loads now" when it does)."""
    try:
        open_version(path).close()
    except USER_ERRORS as exc:
        return str(exc)
    return "it loads now; reload the page"


def serving_problem(con: duckdb.DuckDBPyConnection, schema: str, serving: str,
                    why_not_loading: Callable[[Path], str] = load_problem) -> str:
    """Why the active version of ``schema`` is not the one serving ("" when it is, or none is active).

    ``why_not_loading`` is asked last (it loads the version): an app passes a cached :func:`load_problem`.
    """
    active = catalog.active_version(con, schema)
    if active is None or active.version == serving:
        return ""
    documents = content_counts(con)[0]
    problem = catalog.check_version(active)
    if not problem and active.manifest.documents != documents:
        problem = (f"its index covers {active.manifest.documents} abstracts and the corpus now has "
                   f"{documents}; retrain to index them all")
    if not problem:
        problem = why_not_loading(active.path)
    return f"The active model version {active.version} is not serving ({problem}); ranking with {serving}."
