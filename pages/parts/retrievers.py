"""The retrievers the app serves with, loaded in the background and cached (``st.cache_resource``), and the
background job that swaps a new version in.

A version's encoder takes seconds to load: a page asks :func:`loaded_retriever` (None until it has loaded)
and draws without waiting; a search asks :func:`retriever` and waits under a message.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import streamlit as st

from curation.config import load_settings
from curation.workflows import retrain, serving
from pages.parts.common import store_cursor, who


@st.cache_resource(show_spinner=False, max_entries=3)
def _retriever_load(db_path: str, models_dir: str, key: serving.ServingKey) -> serving.Background:
    # Starts loading and returns at once (a model version's encoder takes seconds to load).
    return serving.Background(lambda: serving.open_for_app(store_cursor(db_path), Path(models_dir), key), "retriever")


def _retriever(db_path: str, models_dir: str, key: serving.ServingKey):
    load = _retriever_load(db_path, models_dir, key)
    try:
        return load.result()
    except BaseException:
        _retriever_load.clear(db_path, models_dir, key)  # as st.cache_resource does: a failed load is tried again
        raise


def retriever_of_version(con: duckdb.DuckDBPyConnection, version: str):
    """The retriever a registered version serves with (loaded and cached as the served one is); what serves
    instead when its index does not cover the current corpus (the caller compares ``.version``)."""
    key = serving.key_once_active(con, version)
    if key is None:
        return None
    settings = load_settings()
    return _retriever(str(settings.db_path), str(settings.models_dir), key)


@st.cache_data(show_spinner=False, ttl=300)
def _load_problem(path: Path) -> str:
    return serving.load_problem(path)


def serving_problem(con: duckdb.DuckDBPyConnection, schema: str, serving_version: str) -> str:
    """Why the active version of ``schema`` is not the one serving ("" when it is, or none is active)."""
    return serving.serving_problem(con, schema, serving_version, why_not_loading=_load_problem)


def retriever(con: duckdb.DuckDBPyConnection, schema: str = ""):
    """What serves ``schema`` now (:mod:`curation.versions.serving` decides); without ``schema``: any schema's.

    The cache key holds the active version, so activating one swaps model and index together
    on the next script run, without restarting the app.
    """
    settings = load_settings()
    args = (str(settings.db_path), str(settings.models_dir), serving.serving_key(con, schema))
    if not _retriever_load(*args).ready():
        with st.spinner("Loading the search index…"):
            return _retriever(*args)
    return _retriever(*args)


def loaded_retriever(con: duckdb.DuckDBPyConnection, schema: str = ""):
    """The retriever of :func:`retriever` when it has loaded, else None (its load is started, in the background)."""
    settings = load_settings()
    args = (str(settings.db_path), str(settings.models_dir), serving.serving_key(con, schema))
    return _retriever(*args) if _retriever_load(*args).ready() else None


def planned_version(con: duckdb.DuckDBPyConnection, schema: str = "") -> str:
    """The version that will serve ``schema`` once loaded (``bm25-only``: BM25 alone), read without loading it."""
    return serving.planned_version(con, load_settings().models_dir, serving.serving_key(con, schema))


def ranking_modes(engine, serving_version: str) -> list[str]:
    """The rankings a search can ask for: "hybrid" too when what serves (or will, once loaded) has a dense index
    (every model version has one; BM25 alone has none)."""
    dense = engine.dense is not None if engine is not None else serving_version != serving.BM25_ONLY
    return ["hybrid", "bm25"] if dense else ["bm25"]


def preload_retriever(con: duckdb.DuckDBPyConnection, path) -> None:
    """Load a version's retriever into the cache under the key it will have once it is active.

    Called before the active flag flips: searches keep using the old retriever until then, and
    the first search after it finds the new one loaded (no failed and no slow search at the swap).
    """
    settings = load_settings()
    key = serving.key_once_active(con, Path(path).name)
    if key is not None:
        _retriever(str(settings.db_path), str(settings.models_dir), key)


def current_job(con: duckdb.DuckDBPyConnection):
    """The queued or running job, brought up to date (finished, and its version swapped in, when done)."""
    return retrain.current_job(con, before_activate=lambda path: preload_retriever(con, path), who=who())
