"""What the app keeps alive between script runs: the store connection, the matcher, the served retriever.

The app caches what these functions return (pages/parts/common.py, the one place with ``st.cache_resource``);
the policy of which model version serves lives in :mod:`curation.versions.serving`; how the matcher is built in
the background, the heap settled and background work finished at exit, in :mod:`curation.runtime`. The names
pages use are offered here, so pages reach them through the workflows.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import duckdb

from curation.config import Settings, load_settings
from curation.entities.matching import Matcher
from curation.entities.normalise import Normaliser
from curation.errors import USER_ERRORS, SchemaError
from curation.retrieval.result_rows import default_linker
from curation.runtime import foreground
from curation.runtime.background import Background
from curation.runtime.background_work import current_work, start_work
from curation.runtime.exit import exiting
from curation.runtime.heap import watch_collector
from curation.runtime.matcher import build_matcher, start_matcher
from curation.store.opening import open_store
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
    "BM25_ONLY", "Background", "ServingKey", "back_up_if_due", "backup_problem", "build_matcher", "build_normaliser",
    "default_linker",
    "key_once_active", "load_problem", "open_app_store", "open_for_app", "open_served", "planned_version",
    "serving_key", "serving_problem", "start_matcher", "watch_collector",
]


def open_app_store(db_path: str | Path) -> duckdb.DuckDBPyConnection:
    """Open the store read-write for the app, and bring background jobs up to date.

    Once per app process: a job that was running when the app stopped is re-attached (worker
    alive), finished (worker done meanwhile) or marked failed; a recogniser job that succeeded
    meanwhile has its recogniser activated and its annotations loaded, a linker job its linker activated.

    Raises:
        StoreLockedError, StoreDamagedError: another process holds the file, or it cannot be read.
    """
    from curation.jobs.retraining import recover_jobs
    from curation.workflows.linker_training import apply_linker_jobs
    from curation.workflows.recogniser_training import apply_recogniser_jobs
    from curation.workflows.relation_scoring import apply_relation_jobs
    from curation.workflows.schemas import apply_schema_file

    con = open_store(db_path)
    if (schema_file := load_settings().schema_file) is not None:
        try:
            apply_schema_file(con.cursor(), schema_file)
        except SchemaError as exc:  # the app still opens; the Knowledge base page says what is wrong with the file
            print(f"CURATION_SCHEMAS not applied: {exc}", file=sys.stderr)
    try:
        recover_jobs(con.cursor())
        apply_recogniser_jobs(con.cursor())  # a recogniser job that succeeded while the app was down
        apply_linker_jobs(con.cursor())  # ... a linker job (its re-annotation is a recogniser job)
        apply_relation_jobs(con.cursor())  # ... and a relation-scorer job
    except (*USER_ERRORS, OSError) as exc:  # the store must open even if a job's folder is unreadable
        print(f"background jobs could not be recovered: {exc}", file=sys.stderr)
    return con


BACKUP_DELAY_S = 30.0  # a due backup begins this long after a page run found it due (a process exiting first skips it)
BACKUP_QUIET_S = 5.0  # ... and once no grade has been recorded for this long
BACKUP_QUIET_WAIT_S = 600.0  # ... or this long after that, with curators grading without a pause
# Store and backup folder → what its last backup said, said on every page run until a backup works.
_BACKUP_FAILURES: dict[str, str] = {}


def back_up_if_due(open_cursor: Callable[[], duckdb.DuckDBPyConnection], settings: Settings) -> None:
    """Back the store up in a server thread when its newest backup is older than ``CURATION_BACKUP_INTERVAL_MIN``.

    Not due: a listing of the backup folder. Due: about 0.4 s on the real-size store (bench/backup.py), on a cursor
    of its own (``open_cursor``) while sessions keep writing (see curation/ops/backup.py), begun
    :data:`BACKUP_DELAY_S` later, between grades: a backup due at a restart held up its first results (its ``ATTACH``
    and copy hold the catalog that the first page's queries read), and grades wait for the journal's lock it holds.
    One at a time per store; what went wrong is :func:`backup_problem`'s.
    """
    from curation.ops.backup import backup_due, backups_dir_for

    folder = backups_dir_for(settings.backups_dir, settings.db_path)
    key = _backup_key(settings)
    try:
        due = backup_due(folder, settings.backup_interval_min)
    except OSError as exc:
        _BACKUP_FAILURES[key] = str(exc)
        return
    running = current_work(key)
    if due and (running is None or not running.running()):
        start_work(key, "Backing up the store",
                   lambda report: _back_up(open_cursor, folder, settings.backup_interval_min, key), settle=False)


def backup_problem(settings: Settings) -> str:
    """What went wrong with the store's last automatic backup, for a person ("" when it worked or none ran)."""
    if not (problem := _BACKUP_FAILURES.get(_backup_key(settings), "")):
        return ""
    return (f"Automatic backup failed ({problem}). Decisions are still saved in the store; "
            f"check {settings.backups_dir}, or stop the app and run `python -m curation backup`.")


def _backup_key(settings: Settings) -> str:
    return f"backup {settings.db_path} into {settings.backups_dir}"


def _back_up(open_cursor: Callable[[], duckdb.DuckDBPyConnection], folder: Path, interval_min: float, key: str) -> str:
    from curation.ops.backup import backup_if_due

    # It holds the decision journal's lock while it copies: begun between grades, not under them.
    if not foreground.wait_for_quiet(BACKUP_DELAY_S, BACKUP_QUIET_S, BACKUP_QUIET_WAIT_S, exiting):
        return "not begun: the process is exiting"
    try:
        cursor = open_cursor()
        try:
            made = backup_if_due(cursor, folder, interval_min)
        finally:
            cursor.close()
    except (*USER_ERRORS, duckdb.Error, OSError) as exc:
        _BACKUP_FAILURES[key] = " ".join(str(exc).split())
        return "failed"
    _BACKUP_FAILURES.pop(key, None)
    return str(made.folder) if made is not None else "not due"


def open_for_app(con: duckdb.DuckDBPyConnection, models_dir: Path, key: ServingKey):
    """The retriever that serves ``key`` (:func:`~curation.versions.serving.open_served`), tuned for the app.

    FAISS searches with one thread: the app answers one query at a time, and more threads only add
    contention on a small machine (bench/scale.py).
    """
    import faiss

    faiss.omp_set_num_threads(1)
    return open_served(con, models_dir, key, cache_dir=load_settings().cache_dir)  # BM25 alone kept there


def build_normaliser(matcher: Matcher) -> Normaliser:
    """Typed name → ranked concepts (exact, notation rules, character n-gram similarity), over the matcher's lexicon."""
    return Normaliser(matcher.lexicon, kept=matcher.kept_fuzzy)  # indexes kept with the matcher: read, not fitted
