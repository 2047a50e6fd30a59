"""Background jobs (retraining) as the store records them: state, worker pid, folder, result.

States: ``queued`` (recorded, worker not yet started) → ``running`` (worker pid known) →
``succeeded`` / ``failed`` / ``cancelled``. At most one job is queued or running at a time:
:func:`create_job` refuses a second one in the same transaction that checks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import duckdb

from curation.errors import CurationError
from curation.store.base import transaction

STATES = ("queued", "running", "succeeded", "failed", "cancelled")
ACTIVE_STATES = ("queued", "running")
TERMINAL_STATES = ("succeeded", "failed", "cancelled")

SQL_JOB_COLUMNS = (
    "job_id, kind, state, params, message, pid, job_dir, result, CAST(created_at AS VARCHAR), "
    "CAST(started_at AS VARCHAR), CAST(finished_at AS VARCHAR)"
)
SQL_ACTIVE_JOBS = f"SELECT {SQL_JOB_COLUMNS} FROM jobs WHERE state IN ('queued', 'running') ORDER BY job_id"
SQL_INSERT_JOB = "INSERT INTO jobs (kind, state, params) VALUES (?, 'queued', ?) RETURNING job_id"
SQL_GET_JOB = f"SELECT {SQL_JOB_COLUMNS} FROM jobs WHERE job_id = ?"
SQL_LIST_JOBS = f"SELECT {SQL_JOB_COLUMNS} FROM jobs ORDER BY job_id DESC LIMIT ?"
SQL_START_JOB = "UPDATE jobs SET state = 'running', pid = ?, job_dir = ?, started_at = now() WHERE job_id = ?"
SQL_SET_DIR = "UPDATE jobs SET job_dir = ? WHERE job_id = ?"
SQL_SET_MESSAGE = "UPDATE jobs SET message = ? WHERE job_id = ?"
SQL_SET_RESULT = "UPDATE jobs SET message = ?, result = ? WHERE job_id = ?"
SQL_FINISH_JOB = (
    "UPDATE jobs SET state = ?, message = ?, result = ?, finished_at = now() "
    "WHERE job_id = ? AND state IN ('queued', 'running')"
)


@dataclass(frozen=True)
class Job:
    """One background job.

    Attributes:
        job_id: its number.
        kind: "retrain".
        state: one of :data:`STATES`.
        params: what was asked (schema, base model, settings).
        message: the latest human-readable word on it (why it failed, why a version was not activated).
        pid: the worker process, once started.
        job_dir: its folder (snapshot, progress.json, result.json, worker.log).
        result: what the worker reported, and what the app did with it.
    """

    job_id: int
    kind: str
    state: str
    params: dict
    message: str
    pid: int | None
    job_dir: str
    result: dict
    created_at: str
    started_at: str | None
    finished_at: str | None

    @property
    def finished(self) -> bool:
        return self.state in TERMINAL_STATES


def _job(row: tuple) -> Job:
    job_id, kind, state, params, message, pid, job_dir, result, created, started, finished = row
    return Job(job_id, kind, state, json.loads(params), message, pid, job_dir or "",
               json.loads(result) if result else {}, created, started, finished)


def create_job(con: duckdb.DuckDBPyConnection, kind: str, params: dict) -> Job:
    """Record a queued job.

    Raises:
        CurationError: another job is queued or running (one at a time).
    """
    with transaction(con):
        running = [_job(r) for r in con.execute(SQL_ACTIVE_JOBS).fetchall()]
        if running:
            job = running[0]
            raise CurationError(
                f"job {job.job_id} ({job.kind}) is {job.state}; one job runs at a time — wait for it or cancel it"
            )
        job_id = con.execute(SQL_INSERT_JOB, [kind, json.dumps(params, default=str)]).fetchall()[0][0]
    return get_job(con, job_id)


def get_job(con: duckdb.DuckDBPyConnection, job_id: int) -> Job:
    rows = con.execute(SQL_GET_JOB, [job_id]).fetchall()
    if not rows:
        raise CurationError(f"there is no job {job_id}")
    return _job(rows[0])


def list_jobs(con: duckdb.DuckDBPyConnection, limit: int = 50) -> list[Job]:
    """The newest jobs first."""
    return [_job(r) for r in con.execute(SQL_LIST_JOBS, [limit]).fetchall()]


def active_jobs(con: duckdb.DuckDBPyConnection) -> list[Job]:
    """Jobs queued or running (at most one, unless a store predates the rule)."""
    return [_job(r) for r in con.execute(SQL_ACTIVE_JOBS).fetchall()]


def set_job_dir(con: duckdb.DuckDBPyConnection, job_id: int, job_dir: str) -> None:
    con.execute(SQL_SET_DIR, [job_dir, job_id])


def start_job(con: duckdb.DuckDBPyConnection, job_id: int, pid: int, job_dir: str) -> None:
    con.execute(SQL_START_JOB, [pid, job_dir, job_id])


def set_job_message(con: duckdb.DuckDBPyConnection, job_id: int, message: str) -> None:
    con.execute(SQL_SET_MESSAGE, [message, job_id])


def finish_job(con: duckdb.DuckDBPyConnection, job_id: int, state: str, message: str = "",
               result: dict | None = None) -> bool:
    """Move a queued or running job to a final state; False when it had already finished."""
    if state not in TERMINAL_STATES:
        raise CurationError(f"a job finishes as one of {TERMINAL_STATES}, not '{state}'")
    rows = con.execute(
        SQL_FINISH_JOB + " RETURNING job_id", [state, message, json.dumps(result or {}, default=str), job_id]
    ).fetchall()
    return bool(rows)


def set_job_result(con: duckdb.DuckDBPyConnection, job_id: int, message: str, result: dict) -> None:
    """Replace a job's message and result (the app records what it did with a finished job's output)."""
    con.execute(SQL_SET_RESULT, [message, json.dumps(result, default=str), job_id])
