"""What the app keeps alive between script runs: the store connection, the matcher, the served retriever.

The app caches what these functions return (pages/common.py, the one place with ``st.cache_resource``);
the policy of which model version serves lives in :mod:`curation.versions.serving`; how the matcher is built in
the background, the heap settled and background work finished at exit, in :mod:`curation.runtime`. The names
pages use are offered here, so pages reach them through the workflows.
"""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb

from curation.config import Settings, load_settings
from curation.entities.matching import Matcher
from curation.entities.normalise import Normaliser
from curation.errors import USER_ERRORS, SchemaError
from curation.runtime.background import Background
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
    "BM25_ONLY", "Background", "ServingKey", "back_up_if_due", "build_matcher", "build_normaliser",
    "key_once_active", "load_problem", "open_app_store", "open_for_app", "open_served", "planned_version",
    "serving_key", "serving_problem", "start_matcher", "watch_collector",
]


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
