"""App-side shared resources: the one place st.cache_resource creates long-lived objects."""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

import duckdb
import streamlit as st

from curation import store
from curation.config import load_settings
from curation.errors import USER_ERRORS
from curation.grades import GRADES
from curation.versions import catalog

# Keyboard shortcuts of the grade buttons on the Curate and Annotate pages: 1, 2, 3, best grade first.
GRADE_SHORTCUTS = {grade: str(n) for n, grade in enumerate(GRADES, start=1)}


@st.cache_resource(show_spinner=False)
def _connection(db_path: str) -> duckdb.DuckDBPyConnection:
    from curation.jobs.retraining import recover_jobs

    con = store.open_store(db_path)
    # Once per app process: a retraining job that was running when the app stopped is
    # re-attached (worker alive), finished (worker done meanwhile) or marked failed.
    try:
        recover_jobs(con.cursor())
    except (*USER_ERRORS, OSError) as exc:  # the store must open even if a job's folder is unreadable
        print(f"retraining jobs could not be recovered: {exc}", file=sys.stderr)
    return con


def connection() -> duckdb.DuckDBPyConnection | None:
    """A cursor on the app's store (one per script run), or None with the reason shown."""
    db_path = str(load_settings().db_path)
    try:
        return _back_up_if_due(_connection(db_path).cursor())
    except USER_ERRORS as exc:
        st.error(str(exc))
        return None


def _back_up_if_due(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Back the store up when its newest backup is older than ``CURATION_BACKUP_INTERVAL_MIN``.

    Not due: a listing of the backup folder. Due: about 0.4 s on the real-size store (bench/backup.py),
    while other sessions keep writing; see curation/ops/backup.py.
    """
    from curation.ops.backup import backup_if_due, backups_dir_for

    settings = load_settings()
    try:
        backup_if_due(con, backups_dir_for(settings.backups_dir, settings.db_path), settings.backup_interval_min)
    except (*USER_ERRORS, duckdb.Error, OSError) as exc:
        st.warning(f"Automatic backup failed ({exc}). Decisions are still saved in the store; "
                   f"check {settings.backups_dir}, or stop the app and run `python -m curation backup`.")
    return con


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


def leave_legacy_pages_mode() -> None:
    """Start the script run again through app.py when Streamlit's legacy ``pages/`` runner started it.

    A ``pages/`` folder beside the main script makes Streamlit treat the app as a legacy multipage
    app until the server process's first ``st.navigation`` call, so the first run after the server
    starts, and only it, is run by the legacy runner. That run lists every file of ``pages/`` in the
    sidebar ("app", "common", ...), runs a page's script without app.py when the page's own address
    is opened, and runs app.py as a page of its own, so the sidebar's widgets get other ids than in
    every later run: the curator name typed on the first load was dropped, and a second Curator
    field showed while the next run replaced the first.

    Called before anything is drawn: by app.py and as the first statement of every page script (the
    first run may be a page script's, its address opened, without app.py). Ends the legacy mode for
    the process (as ``st.navigation`` does) and reruns the same address, now through app.py's
    ``st.navigation`` (a page keeps its address: both derive it from the file name). In any other
    run, and outside one, it does nothing.
    """
    try:
        from streamlit.runtime.pages_manager import PagesManager
        from streamlit.runtime.scriptrunner import get_script_run_ctx
    except ImportError:  # a Streamlit without the legacy runner
        return
    if getattr(PagesManager, "uses_pages_directory", None) and get_script_run_ctx() is not None:
        PagesManager.uses_pages_directory = False
        st.rerun()


def _remember(widget_key: str, state_key: str) -> None:
    value = st.session_state.get(widget_key)
    st.session_state[state_key] = value.strip() if isinstance(value, str) else value


def sidebar(con: duckdb.DuckDBPyConnection | None) -> None:
    """Curator, schema and store counts, shown on every page.

    Pages read the plain session keys ``curator`` and ``schema``, which the widgets' callbacks
    keep up to date (widget keys themselves are cleaned up by Streamlit when a widget is not drawn).
    """
    with st.sidebar:
        st.text_input(
            "Curator",
            key="curator_input",
            placeholder="your name (needed to record decisions)",
            on_change=_remember,
            args=("curator_input", "curator"),
        )
        if con is None:
            return
        schemas = [s.name for s in store.list_schemas(con)]
        st.selectbox(
            "Relation schema", schemas, key="schema_input", on_change=_remember, args=("schema_input", "schema")
        )
        counts = store.stats(con)
        st.caption(
            f"Store: {counts['kb_records']} KB records · {counts['documents']} abstracts · "
            f"{counts['decisions']} decisions"
        )
        active = catalog.active_version(con, st.session_state.get("schema") or (schemas[0] if schemas else ""))
        st.caption(f"Model: {active.version} (active)" if active else "Model: none active (newest that fits, or BM25)")
        job = current_job(con)
        if job is not None:
            from curation.jobs.retraining import read_progress

            progress = read_progress(job)
            stage = progress.stage if progress else job.state
            share = f" {progress.fraction:.0%}" if progress and progress.fraction is not None else ""
            st.caption(f"Retraining (job {job.job_id}): {stage}{share}")


def current_job(con: duckdb.DuckDBPyConnection):
    """The queued or running job, brought up to date (finished, and its version swapped in, when done)."""
    from curation.jobs.retraining import poll_job

    jobs = store.active_jobs(con)
    if not jobs:
        return None
    job = poll_job(con, jobs[0], before_activate=lambda path: preload_retriever(con, path))
    return None if job.finished else job


def store_fingerprint(con: duckdb.DuckDBPyConnection) -> tuple[int, int, int]:
    """Changes when documents, imported KB records or synonyms are added (to refresh cached resources)."""
    return store.content_counts(con)


WARM_DOCUMENTS = 20_000  # abstracts analysed when the matcher is built (all of a corpus this size)


@st.cache_resource(show_spinner="Building the dictionaries and analysing the abstracts…", max_entries=2)
def _matcher(db_path: str, fingerprint: tuple[int, int, int]):
    from curation.entities.dictionaries import build_lexicon
    from curation.entities.matching import Matcher

    con = _connection(db_path).cursor()
    built = Matcher(build_lexicon(con), cache_size=WARM_DOCUMENTS)
    # Analysing abstracts ahead (about 2 ms each) keeps highlighting off the search path: the
    # curator path drops from ~130 ms to ~25 ms p95 on this corpus (bench/retrieval.py).
    texts = []
    for doc in store.iter_documents(con):
        texts.append(doc.text)
        if len(texts) >= WARM_DOCUMENTS:
            break
    built.analyse_many(texts)
    return built


def matcher(con: duckdb.DuckDBPyConnection):
    """The text matcher over the store's dictionaries (rebuilt when the store grows)."""
    return _matcher(str(load_settings().db_path), store_fingerprint(con))


@st.cache_resource(show_spinner="Preparing name suggestions…", max_entries=2)
def _normaliser(db_path: str, fingerprint: tuple[int, int, int]):
    from curation.entities.normalise import Normaliser

    return Normaliser(_matcher(db_path, fingerprint).lexicon)


def normaliser(con: duckdb.DuckDBPyConnection):
    """Typed name → ranked concepts (exact, notation rules, character n-gram similarity)."""
    return _normaliser(str(load_settings().db_path), store_fingerprint(con))


@st.cache_resource(show_spinner="Loading the search indexes…", max_entries=3)
def _retriever(db_path: str, models_dir: str, documents: int, active: tuple[str, ...], schema: str = ""):
    import faiss

    from curation.versions.registry import list_versions
    from index.lexical import LexicalIndex
    from index.loading import open_retriever
    from index.search import Retriever

    faiss.omp_set_num_threads(1)  # one query at a time: threads only add contention (bench/scale.py)
    con = _connection(db_path).cursor()
    # The versions named in ``active`` serve while their index covers the corpus; an unusable
    # folder is not loaded, and the next best serves (the Curate page says so).
    for version in catalog.list_model_versions(con):
        if version.version in active and version.manifest.documents == documents \
                and not catalog.check_version(version):
            try:
                return open_retriever(version.path)
            except USER_ERRORS:
                break  # corrupted weights or index: fall through to the newest version that loads
    versions, _ = list_versions(models_dir)  # complete, readable folders only
    for version in versions:
        if version.manifest.documents == documents and (not schema or version.manifest.schema == schema):
            try:
                return open_retriever(version.path)
            except USER_ERRORS:
                continue  # a corrupted version is skipped; the Train & evaluate page reports it
    docs = list(store.iter_documents(con))
    return Retriever(lexical=LexicalIndex.build(docs), version="bm25-only")


@st.cache_data(show_spinner=False, ttl=300)
def _load_problem(path: str) -> str:
    from index.loading import open_retriever

    try:
        open_retriever(path)
    except USER_ERRORS as exc:
        return str(exc)
    return "it loads now; reload the page"


def serving_problem(con: duckdb.DuckDBPyConnection, schema: str, serving: str) -> str:
    """Why the active version of ``schema`` is not the one serving ("" when it is, or none is active)."""
    active = catalog.active_version(con, schema)
    if active is None or active.version == serving:
        return ""
    problem = catalog.check_version(active)
    if not problem and active.manifest.documents != store_fingerprint(con)[0]:
        problem = (f"its index covers {active.manifest.documents} abstracts and the corpus now has "
                   f"{store_fingerprint(con)[0]}; retrain to index them all")
    if not problem:
        problem = _load_problem(str(active.path))
    return f"The active model version {active.version} is not serving ({problem}); ranking with {serving}."


def _active_names(con: duckdb.DuckDBPyConnection) -> tuple[str, ...]:
    return tuple(sorted(v.version for v in catalog.list_model_versions(con) if v.active))


def retriever(con: duckdb.DuckDBPyConnection, schema: str = ""):
    """The active model version of ``schema`` (else its newest) indexing the current corpus, or BM25 alone.

    The cache key holds the active version, so activating one swaps model and index together
    on the next script run, without restarting the app. Without ``schema``: any schema's.
    """
    settings = load_settings()
    if schema:
        active = catalog.active_version(con, schema)
        names = (active.version,) if active else ()
    else:
        names = _active_names(con)
    return _retriever(str(settings.db_path), str(settings.models_dir), store_fingerprint(con)[0], names, schema)


def preload_retriever(con: duckdb.DuckDBPyConnection, path) -> None:
    """Load a version's retriever into the cache under the key it will have once it is active.

    Called before the active flag flips: searches keep using the old retriever until then, and
    the first search after it finds the new one loaded (no failed and no slow search at the swap).
    """
    from pathlib import Path

    settings = load_settings()
    version = catalog.get_version(con, Path(path).name)
    if version is not None:
        _retriever(str(settings.db_path), str(settings.models_dir), store_fingerprint(con)[0], (version.version,),
                   version.schema)
