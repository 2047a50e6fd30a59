"""App-side shared resources: the store's connection, who writes, and the search's cached dictionaries
(``st.cache_resource``; the served retrievers are :mod:`pages.parts.retrievers`')."""

from __future__ import annotations

import sys

import duckdb
import streamlit as st

from curation.config import load_settings
from curation.errors import USER_ERRORS, StoreLockedError
from curation.grades import GRADES
from curation.workflows import entities, serving, timing
from curation.workflows.session import content_fingerprint, corpus_size
from curation.workflows.team import Who

# Keyboard shortcuts of the grade buttons on the Curate and Annotate pages: 1, 2, 3, best grade first.
GRADE_SHORTCUTS = {grade: str(n) for n, grade in enumerate(GRADES, start=1)}


@st.cache_resource(show_spinner=False)
def _connection(db_path: str) -> duckdb.DuckDBPyConnection:
    return serving.open_app_store(db_path)


def store_cursor(db_path: str | None = None) -> duckdb.DuckDBPyConnection:
    """A cursor on the app's cached connection (``db_path``: the settings' store), without :func:`connection`'s
    messages: for callbacks and background loads, which draw nothing."""
    return _connection(db_path or str(load_settings().db_path)).cursor()


def connection() -> duckdb.DuckDBPyConnection | None:
    """A cursor on the app's store (one per script run), or None with the reason shown."""
    try:
        settings = load_settings()  # a bad CURATION_* value is said here, not as a traceback
        con = _connection(str(settings.db_path)).cursor()
    except StoreLockedError as exc:
        st.error(f"{exc} If it is a command-line run, wait for it to finish, then reload this page.")
        return None
    except USER_ERRORS as exc:
        st.error(str(exc))
        return None
    if problem := serving.backup_problem(settings):  # the backup itself starts once a page is drawn
        st.warning(problem)
    return con


def who() -> Who:
    """Who the session's writes are made by: the signed-in person (team mode) or the typed name (personal mode).

    Write workflows take it and check the role (:mod:`curation.access`); team mode never passes a typed name.
    """
    return st.session_state.get("identity") or st.session_state.get("curator") or ""


@st.cache_resource(show_spinner=False, max_entries=2)
def _matcher_build(db_path: str, fingerprint: tuple[int, int, int]) -> serving.Background:
    # Starts the build and returns at once: a page is drawn without waiting for it (see preload_search).
    cache_dir = load_settings().cache_dir / "lexicon"
    return serving.start_matcher(lambda: store_cursor(db_path), cache_dir)


def _matcher(db_path: str, fingerprint: tuple[int, int, int]):
    build = _matcher_build(db_path, fingerprint)
    try:
        return build.result()
    except BaseException:
        _matcher_build.clear(db_path, fingerprint)  # as st.cache_resource does: a failed build is tried again
        raise


def matcher(con: duckdb.DuckDBPyConnection):
    """The text matcher over the store's dictionaries (rebuilt when the store grows).

    Built in the background from the end of the first page on (:func:`preload_search`); a search that comes
    before it is ready waits for it under a message.
    """
    db_path, fingerprint = str(load_settings().db_path), content_fingerprint(con)
    if not _matcher_build(db_path, fingerprint).ready():
        with st.spinner("Loading the search index (dictionaries)…"):
            return _matcher(db_path, fingerprint)
    return _matcher(db_path, fingerprint)


def preload_search(con: duckdb.DuckDBPyConnection | None) -> None:
    """Start building what a search needs (the matcher), and the store's backup when due, in the background,
    once a page has been drawn.

    app.py calls it when every run ends, however it ends (st.stop included: no Streamlit element is drawn
    here): the first page after a (re)start is served without waiting for the dictionaries or a backup, and the
    dictionaries are usually ready by the time a curator has typed a query.
    """
    serving.watch_collector()  # long garbage-collector pauses are noticed and ended (see settle_heap)
    try:
        if con is not None:
            settings = load_settings()
            serving.back_up_if_due(lambda: store_cursor(str(settings.db_path)), settings)
        if con is not None and corpus_size(con) > 0:
            _matcher_build(str(load_settings().db_path), content_fingerprint(con))
    except (*USER_ERRORS, duckdb.Error) as exc:  # the page itself reports a store that fails
        print(f"background loading not started: {exc}", file=sys.stderr)


def log_decision_time(pmid: str) -> None:
    """Where a decision's caption has been drawn (the end of its card): log the server's time for it
    (``CURATION_TIMING_LOG``), from the start of the button's callback to here: the write and the run
    (the card's fragment) that shows it."""
    pending = st.session_state.get("decision_timing")
    if pending and pending[1] == pmid:
        timing.log_decision(load_settings(), *st.session_state.pop("decision_timing"))


@st.cache_resource(show_spinner="Loading the entity recogniser…", max_entries=2)
def _annotator(db_path: str, fingerprint: tuple[int, int, int], models: tuple[str, str]):
    return entities.current_annotator(store_cursor(db_path), load_settings(), _matcher(db_path, fingerprint))


def annotator(con: duckdb.DuckDBPyConnection):
    """The app's annotator (the active recogniser and linker, else the dictionaries) and its message.

    Used when documents are ingested, never per page view: highlights read the stored annotations.
    """
    matcher(con)  # built first, under its own message when a search comes before it is ready
    return _annotator(str(load_settings().db_path), content_fingerprint(con), entities.active_models_key(con))


@st.cache_resource(show_spinner="Preparing name suggestions…", max_entries=2)
def _normaliser(db_path: str, fingerprint: tuple[int, int, int]):
    return serving.build_normaliser(_matcher(db_path, fingerprint))


def normaliser(con: duckdb.DuckDBPyConnection):
    """Typed name → ranked concepts (exact, notation rules, character n-gram similarity)."""
    matcher(con)  # built first, under its own message when a search comes before it is ready
    return _normaliser(str(load_settings().db_path), content_fingerprint(con))


@st.cache_resource(show_spinner="Preparing the query linker…", max_entries=2)
def _query_linker(db_path: str, fingerprint: tuple[int, int, int], models: tuple[str, str]):
    # A search reads the stored annotations: of the annotator it needs the linker only (loading the recogniser here
    # would put spaCy's model load before a restart's first results).
    matcher = _matcher(db_path, fingerprint)
    linker, _ = entities.active_linker(store_cursor(db_path), load_settings(), matcher)
    return serving.default_linker(store_cursor(db_path), matcher, _normaliser(db_path, fingerprint), linker)


def query_linker(con: duckdb.DuckDBPyConnection):
    """Typed slot → concepts (exact names, notation rules, the active linker; weak links only offered)."""
    matcher(con)  # built first, under its own message when a search comes before it is ready
    return _query_linker(str(load_settings().db_path), content_fingerprint(con), entities.active_models_key(con))

