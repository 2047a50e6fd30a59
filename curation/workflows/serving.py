"""What the app keeps alive between script runs: the store connection, the matcher, the served retriever.

The app caches what these functions return (pages/common.py, the one place with ``st.cache_resource``);
the policy of which model version serves lives in :mod:`curation.versions.serving`.
"""

from __future__ import annotations

import atexit
import gc
import sys
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

import duckdb

from curation import store
from curation.config import Settings
from curation.entities.dictionaries import build_lexicon
from curation.entities.matching import Matcher
from curation.entities.normalise import Normaliser
from curation.errors import USER_ERRORS
from curation.versions.serving import (
    BM25_ONLY,
    ServingKey,
    key_once_active,
    load_problem,
    open_served,
    planned_version,
    serving_key,
    serving_problem,
)

__all__ = [
    "BM25_ONLY", "Background", "ServingKey", "back_up_if_due", "build_matcher", "build_normaliser",
    "key_once_active", "load_problem", "open_app_store", "open_for_app", "open_served", "planned_version",
    "serving_key", "serving_problem", "start_matcher",
]

WARM_DOCUMENTS = 20_000  # abstracts analysed when the matcher is built (all of a corpus this size)
WARM_BATCH = 16  # abstracts analysed at a time in the background (~40 ms): a search waits for one batch at most
T = TypeVar("T")


def open_app_store(db_path: str | Path) -> duckdb.DuckDBPyConnection:
    """Open the store read-write for the app, and bring background jobs up to date.

    Once per app process: a job that was running when the app stopped is re-attached (worker
    alive), finished (worker done meanwhile) or marked failed; a recogniser job that succeeded
    meanwhile has its recogniser activated and its annotations loaded.

    Raises:
        StoreLockedError, StoreDamagedError: another process holds the file, or it cannot be read.
    """
    from curation.jobs.retraining import recover_jobs
    from curation.workflows.recogniser_training import apply_recogniser_jobs
    from curation.workflows.relation_scoring import apply_relation_jobs

    con = store.open_store(db_path)
    try:
        recover_jobs(con.cursor())
        apply_recogniser_jobs(con.cursor())  # a recogniser job that succeeded while the app was down
        apply_relation_jobs(con.cursor())  # ... and a relation-scorer job
    except (*USER_ERRORS, OSError) as exc:  # the store must open even if a job's folder is unreadable
        print(f"background jobs could not be recovered: {exc}", file=sys.stderr)
    return con


def back_up_if_due(con: duckdb.DuckDBPyConnection, settings: Settings) -> str:
    """Back the store up when its newest backup is older than ``CURATION_BACKUP_INTERVAL_MIN``.

    Not due: a listing of the backup folder. Due: about 0.4 s on the real-size store (bench/backup.py),
    while other sessions keep writing; see curation/ops/backup.py. Returns "" or what went wrong, for a person.
    """
    from curation.ops.backup import backup_if_due, backups_dir_for

    try:
        backup_if_due(con, backups_dir_for(settings.backups_dir, settings.db_path), settings.backup_interval_min)
    except (*USER_ERRORS, duckdb.Error, OSError) as exc:
        return (f"Automatic backup failed ({exc}). Decisions are still saved in the store; "
                f"check {settings.backups_dir}, or stop the app and run `python -m curation backup`.")
    return ""


def build_matcher(con: duckdb.DuckDBPyConnection, warm_documents: int = WARM_DOCUMENTS,
                  cache_dir: Path | None = None) -> Matcher:
    """The text matcher over the store's dictionaries, with the corpus's abstracts analysed ahead.

    Analysing abstracts ahead (about 2 ms each) keeps highlighting off the search path: the curator
    path drops from ~130 ms to ~25 ms p95 on this corpus (bench/retrieval.py). ``cache_dir``: where the
    dictionary's measured exclusions are kept between processes (:func:`~curation.entities.dictionaries.build_lexicon`).
    """
    built = Matcher(build_lexicon(con, cache_dir=cache_dir), cache_size=warm_documents)
    built.analyse_many(_texts(con, warm_documents))
    return built


def _texts(con: duckdb.DuckDBPyConnection, limit: int) -> list[str]:
    texts = []
    for doc in store.iter_documents(con):
        texts.append(doc.text)
        if len(texts) >= limit:
            break
    return texts


_EXITING = threading.Event()
_RUNNING: weakref.WeakSet[threading.Thread] = weakref.WeakSet()
EXIT_WAIT_S = 60.0  # how long the process's exit waits for a background build to finish


def _finish_at_exit() -> None:
    # A daemon thread still inside DuckDB's or torch's C++ code when the interpreter finalises is ended by a
    # forced unwind that aborts the process ("FATAL: exception not rethrown"): ask the threads to stop
    # between steps, and wait for them, before finalisation.
    _EXITING.set()
    for thread in list(_RUNNING):
        thread.join(EXIT_WAIT_S)


atexit.register(_finish_at_exit)


def exiting() -> bool:
    """The process is exiting: background work stops at its next step (see :class:`Background`)."""
    return _EXITING.is_set()


def settle_heap() -> None:
    """Keep what was just built (dictionaries, indexes, models: millions of long-lived objects) out of the
    garbage collector's full passes.

    Each full pass walks every tracked object with the GIL held: with the dictionaries loaded that took
    0.5–1 s, every few seconds while curators click (bench/load.py), and every session waited for it. Frozen
    objects are skipped; a pass then walks the page runs' short-lived objects. Unfreezing first lets this
    collection free what an earlier build left behind (a replaced matcher), so nothing stays frozen for good.
    """
    _settling.set()
    try:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
    finally:
        _settling.clear()


SLOW_PASS_S = 0.05  # a full collection longer than this: long-lived objects piled up since the last settle
SETTLE_EVERY_S = 30.0  # at most one settle in this time
_slow_pass = threading.Event()
_settling = threading.Event()  # the settle's own full pass is slow by design: it does not ask for another
_pass_started = [0.0]


def _time_full_passes(phase: str, info: dict) -> None:
    if info.get("generation") != 2 or _settling.is_set():
        return
    if phase == "start":
        _pass_started[0] = time.perf_counter()
    elif time.perf_counter() - _pass_started[0] > SLOW_PASS_S:
        _slow_pass.set()


def _settler() -> None:
    while not exiting():
        if _slow_pass.wait(timeout=1.0):
            _slow_pass.clear()
            settle_heap()
            time.sleep(SETTLE_EVERY_S)


def watch_collector() -> None:
    """Settle the heap again (in a daemon thread, at most every :data:`SETTLE_EVERY_S`) whenever a full
    collection took longer than :data:`SLOW_PASS_S`: what the builds did not cover (indexes a first search
    builds, caches that grow) is frozen too. Idempotent."""
    if _time_full_passes in gc.callbacks:
        return
    gc.callbacks.append(_time_full_passes)
    threading.Thread(target=_settler, name="settle-heap", daemon=True).start()


class Background(Generic[T]):
    """A value built once in a daemon thread, so that a page can be drawn before it is ready.

    ``build`` runs at once in its own thread; :meth:`result` waits for it (and raises what it raised).
    ``then``, when given, runs in the same thread with the built value after :meth:`result` is released
    (work that improves the value without being needed to use it, such as warming a cache); it should
    return early once :func:`exiting` is true. The process's exit waits for the thread (up to
    :data:`EXIT_WAIT_S`).
    """

    def __init__(self, build: Callable[[], T], name: str, then: Callable[[T], None] | None = None) -> None:
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(build, then), name=name, daemon=True)
        _RUNNING.add(self._thread)
        self._thread.start()

    def _run(self, build: Callable[[], T], then: Callable[[T], None] | None) -> None:
        try:
            self._value = build()
            settle_heap()
        except BaseException as exc:  # handed to whoever waits for the value
            self._error = exc
        finally:
            self._done.set()
        if then is not None and self._error is None and not exiting():
            try:
                then(self._value)  # type: ignore[arg-type]
                settle_heap()
            except Exception as exc:  # an optimisation that failed: the value is still good
                print(f"{self._thread.name}: {type(exc).__name__}: {exc}", file=sys.stderr)

    def ready(self) -> bool:
        """Built (or failed): :meth:`result` returns at once."""
        return self._done.is_set()

    def failed(self) -> bool:
        """The build raised (:meth:`result` raises it)."""
        return self._done.is_set() and self._error is not None

    def result(self) -> T:
        """The value, waiting for the build when it is still running."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


def start_matcher(open_cursor: Callable[[], duckdb.DuckDBPyConnection], cache_dir: Path | None = None,
                  warm_documents: int = WARM_DOCUMENTS) -> Background[Matcher]:
    """Build the matcher of :func:`build_matcher` in the background; it is usable before the abstracts are analysed.

    The dictionaries come first (a few seconds when ``cache_dir`` holds this store's name exclusions, ~25 s
    otherwise); then scikit-learn is imported (the normaliser's fuzzy index) and the corpus's abstracts are
    analysed ahead in batches of :data:`WARM_BATCH`, so a search made meanwhile waits for one batch, and
    analyses its own results itself.

    Args:
        open_cursor: a new cursor on the store, called in the background thread (a cursor per thread).
    """
    texts: list[str] = []

    def build() -> Matcher:
        con = open_cursor()
        texts.extend(_texts(con, warm_documents))
        return Matcher(build_lexicon(con, cache_dir=cache_dir), cache_size=warm_documents)

    def warm(matcher: Matcher) -> None:
        # The typed-name normaliser's fuzzy index needs scikit-learn, ~5 s to import on 2 busy cores (most of a
        # first search after a restart, measured): imported here, the first search does not wait for it.
        import sklearn.feature_extraction.text  # noqa: F401

        for start in range(0, len(texts), WARM_BATCH):
            if exiting():
                return
            matcher.analyse_many(texts[start:start + WARM_BATCH])

    return Background(build, "matcher", then=warm)


def open_for_app(con: duckdb.DuckDBPyConnection, models_dir: Path, key: ServingKey):
    """The retriever that serves ``key`` (:func:`~curation.versions.serving.open_served`), tuned for the app.

    FAISS searches with one thread: the app answers one query at a time, and more threads only add
    contention on a small machine (bench/scale.py).
    """
    import faiss

    faiss.omp_set_num_threads(1)
    return open_served(con, models_dir, key)


def build_normaliser(matcher: Matcher) -> Normaliser:
    """Typed name → ranked concepts (exact, notation rules, character n-gram similarity), over the matcher's lexicon."""
    return Normaliser(matcher.lexicon)
