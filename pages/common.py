"""App-side shared resources: the one place st.cache_resource creates long-lived objects."""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

import duckdb
import streamlit as st

from curation.config import load_settings
from curation.errors import USER_ERRORS, StoreLockedError
from curation.grades import GRADES
from curation.workflows import entities, results, retrain, serving, timing
from curation.workflows.session import (
    acknowledge,
    content_fingerprint,
    corpus_size,
    curator_name_problem,
    schemas,
    store_counts,
    store_notices,
)
from curation.workflows.team import SignedIn, Who
from curation.workflows.versions import active_version
from pages import team_gate
from pages.highlight import escape_text

# Keyboard shortcuts of the grade buttons on the Curate and Annotate pages: 1, 2, 3, best grade first.
GRADE_SHORTCUTS = {grade: str(n) for n, grade in enumerate(GRADES, start=1)}


@st.cache_resource(show_spinner=False)
def _connection(db_path: str) -> duckdb.DuckDBPyConnection:
    return serving.open_app_store(db_path)


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
    if problem := serving.back_up_if_due(con, settings):
        st.warning(problem)
    return con


def store_notice_banner(con: duckdb.DuckDBPyConnection | None) -> None:
    """What opening the store repaired from the decision journal, or found wrong with it: shown above
    every page (app.py draws it once per run) until a curator clicks "Got it"."""
    if con is None:
        return
    for notice in store_notices(con):
        st.warning(f"{escape_text(notice.message)} ({notice.created_at[:19]} UTC)", icon=":material/healing:")
        st.button("Got it", key=f"notice_{notice.notice_id}", on_click=_acknowledge, args=(notice.notice_id,))


def _acknowledge(notice_id: int) -> None:
    acknowledge(_connection(str(load_settings().db_path)).cursor(), notice_id,
                st.session_state.get("curator") or "a curator")


MAX_UPLOAD_NAME = 120  # characters kept of an uploaded file's name


def safe_upload_name(name: str) -> str:
    """An uploaded file's name reduced to a plain file name (no folders, no traversal)."""
    base = Path(name.replace("\\", "/")).name
    base = re.sub(r"[^A-Za-z0-9._-]", "_", base).lstrip(".")
    if len(base) > MAX_UPLOAD_NAME:  # file systems refuse names over 255 bytes; keep the extension(s)
        stem, dot, suffix = base.partition(".")
        suffix = (dot + suffix)[-40:]
        base = stem[: MAX_UPLOAD_NAME - len(suffix)] + suffix
    return base or "upload"


def save_upload(upload) -> Path:
    """Write an uploaded file to a private temporary folder and return its path."""
    folder = Path(tempfile.mkdtemp(prefix="curation-upload-"))
    path = folder / safe_upload_name(upload.name)
    path.write_bytes(upload.getvalue())
    return path


def _remember(widget_key: str, state_key: str) -> None:
    value = st.session_state.get(widget_key)
    st.session_state[state_key] = value.strip() if isinstance(value, str) else value


def _remember_curator() -> None:
    """The typed name becomes the session's curator when it is one a decision can carry; else it is refused
    with the reason (the name in use stays as it was)."""
    name = " ".join(str(st.session_state.get("curator_input") or "").split())
    problem = curator_name_problem(name)
    st.session_state["curator_problem"] = problem
    if problem is None:
        st.session_state["curator"] = name


def who() -> Who:
    """Who the session's writes are made by: the signed-in person (team mode) or the typed name (personal mode).

    Write workflows take it and check the role (:mod:`curation.access`); team mode never passes a typed name.
    """
    return st.session_state.get("identity") or st.session_state.get("curator") or ""


def sidebar(con: duckdb.DuckDBPyConnection | None, signed: SignedIn | None = None) -> None:
    """Curator (typed, or the signed-in person in team mode), schema and store counts, shown on every page.

    Pages read the plain session keys ``curator`` and ``schema``, which the widgets' callbacks
    keep up to date (widget keys themselves are cleaned up by Streamlit when a widget is not drawn).
    """
    with st.sidebar:
        if signed is not None:
            team_gate.sidebar_identity(signed)
        else:
            st.text_input(
                "Curator",
                key="curator_input",
                placeholder="your name (needed to record decisions)",
                on_change=_remember_curator,  # a name too long is refused with the reason (not cut silently)
            )
        if problem := st.session_state.get("curator_problem"):
            st.error(escape_text(problem))
        if con is None:
            return
        names = [s.name for s in schemas(con)]
        st.selectbox(
            "Relation schema", names, key="schema_input", on_change=_remember, args=("schema_input", "schema")
        )
        counts = store_counts(con)
        st.caption(
            f"Store: {counts['kb_records']} KB records · {counts['documents']} abstracts · "
            f"{counts['decisions']} decisions"
        )
        active = active_version(con, st.session_state.get("schema") or (names[0] if names else ""))
        st.caption(f"Model: {active.version} (active)" if active else "Model: none active (newest that fits, or BM25)")
        job = current_job(con)
        if job is not None:
            st.caption(retrain.status_line(job))


def current_job(con: duckdb.DuckDBPyConnection):
    """The queued or running job, brought up to date (finished, and its version swapped in, when done)."""
    return retrain.current_job(con, before_activate=lambda path: preload_retriever(con, path))


@st.cache_resource(show_spinner=False, max_entries=2)
def _matcher_build(db_path: str, fingerprint: tuple[int, int, int]) -> serving.Background:
    # Starts the build and returns at once: a page is drawn without waiting for it (see preload_search).
    cache_dir = load_settings().cache_dir / "lexicon"
    return serving.start_matcher(lambda: _connection(db_path).cursor(), cache_dir)


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
    """Start building what a search needs (the matcher), in the background, once a page has been drawn.

    app.py calls it when every run ends, however it ends (st.stop included: no Streamlit element is drawn
    here): the first page after a (re)start is served without waiting for the dictionaries, and they are
    usually ready by the time a curator has typed a query.
    """
    serving.watch_collector()  # long garbage-collector pauses are noticed and ended (see settle_heap)
    try:
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
    return entities.current_annotator(_connection(db_path).cursor(), load_settings(), _matcher(db_path, fingerprint))


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
    return results.default_linker(
        _connection(db_path).cursor(), _matcher(db_path, fingerprint), _normaliser(db_path, fingerprint),
        _annotator(db_path, fingerprint, models).annotator.linker,
    )


def query_linker(con: duckdb.DuckDBPyConnection):
    """Typed slot → concepts (exact names, notation rules, the active linker; weak links only offered)."""
    matcher(con)  # built first, under its own message when a search comes before it is ready
    return _query_linker(str(load_settings().db_path), content_fingerprint(con), entities.active_models_key(con))


@st.cache_resource(show_spinner=False, max_entries=3)
def _retriever_load(db_path: str, models_dir: str, key: serving.ServingKey) -> serving.Background:
    # Starts loading and returns at once (a model version's encoder takes seconds to load).
    return serving.Background(
        lambda: serving.open_for_app(_connection(db_path).cursor(), Path(models_dir), key), "retriever"
    )


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
    load = _retriever_load(str(settings.db_path), str(settings.models_dir), serving.serving_key(con, schema))
    return _retriever(str(settings.db_path), str(settings.models_dir), serving.serving_key(con, schema)) \
        if load.ready() else None


def planned_version(con: duckdb.DuckDBPyConnection, schema: str = "") -> str:
    """The version that will serve ``schema`` once loaded (``bm25-only``: BM25 alone), read without loading it."""
    return serving.planned_version(con, load_settings().models_dir, serving.serving_key(con, schema))


def preload_retriever(con: duckdb.DuckDBPyConnection, path) -> None:
    """Load a version's retriever into the cache under the key it will have once it is active.

    Called before the active flag flips: searches keep using the old retriever until then, and
    the first search after it finds the new one loaded (no failed and no slow search at the swap).
    """
    settings = load_settings()
    key = serving.key_once_active(con, Path(path).name)
    if key is not None:
        _retriever(str(settings.db_path), str(settings.models_dir), key)
