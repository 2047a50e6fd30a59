"""Loads of the sample as planned steps: which are done, which failed, which are left.

A load is planned whole before its first step runs (``loads`` + one ``load_steps`` row per step, in one
transaction); each step is marked done or failed in its own statement once it has committed its work. A step
still ``pending`` after the process that ran it is gone is what the next start finishes.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from curation.store.base import transaction

PENDING, DONE, FAILED = "pending", "done", "failed"

SQL_NEXT_LOAD = "SELECT coalesce(max(load_id), 0) + 1 FROM loads"
SQL_ADD_LOAD = "INSERT INTO loads (load_id, source, started_by) VALUES (?, ?, ?)"
SQL_ADD_STEP = "INSERT INTO load_steps (load_id, position, kind, fmt, path, source) VALUES (?, ?, ?, ?, ?, ?)"
SQL_FINISH_STEP = (
    "UPDATE load_steps SET state = ?, message = ?, finished_at = now() WHERE load_id = ? AND position = ?"
)
SQL_UNFINISHED_LOAD = (
    "SELECT l.load_id, l.source FROM loads l WHERE EXISTS "
    "(SELECT 1 FROM load_steps s WHERE s.load_id = l.load_id AND s.state = 'pending') ORDER BY l.load_id DESC LIMIT 1"
)
SQL_STEPS = (
    "SELECT position, kind, fmt, path, source, state, message FROM load_steps WHERE load_id = ? ORDER BY position"
)


@dataclass(frozen=True)
class StepRow:
    """One planned step of a load.

    Attributes:
        kind: ``kb``, ``corpus``, ``dict`` (a file or an installed vocabulary), ``annotate``, or a training job's
            kind (``train-relations``, ``train-encoder``).
        fmt, path, source: what the step reads (a file's format and path; ``path`` None for a package's vocabulary
            and for steps that read the store).
        state: ``pending``, ``done`` or ``failed`` (``message`` says why).
    """

    position: int
    kind: str
    fmt: str = ""
    path: str | None = None
    source: str = ""
    state: str = PENDING
    message: str = ""


@dataclass(frozen=True)
class LoadRow:
    """A load: its id, where its sample came from, and its steps in order."""

    load_id: int
    source: str
    steps: tuple[StepRow, ...]

    @property
    def pending(self) -> tuple[StepRow, ...]:
        return tuple(s for s in self.steps if s.state == PENDING)


def plan_load(con: duckdb.DuckDBPyConnection, source: str, steps: list[StepRow], started_by: str = "") -> LoadRow:
    """Record a new load and its steps, all pending, in one transaction; returns it."""
    with transaction(con):
        load_id = int(con.execute(SQL_NEXT_LOAD).fetchone()[0])
        con.execute(SQL_ADD_LOAD, [load_id, source, started_by])
        for position, step in enumerate(steps, start=1):
            con.execute(SQL_ADD_STEP, [load_id, position, step.kind, step.fmt, step.path, step.source])
    return get_load(con, load_id)


def get_load(con: duckdb.DuckDBPyConnection, load_id: int) -> LoadRow:
    """The load ``load_id`` with its steps as they stand now."""
    source = con.execute("SELECT source FROM loads WHERE load_id = ?", [load_id]).fetchone()[0]
    steps = tuple(StepRow(*row) for row in con.execute(SQL_STEPS, [load_id]).fetchall())
    return LoadRow(load_id, source, steps)


def unfinished_load(con: duckdb.DuckDBPyConnection) -> LoadRow | None:
    """The newest load with a step still pending (None: every load is finished)."""
    row = con.execute(SQL_UNFINISHED_LOAD).fetchone()
    return get_load(con, int(row[0])) if row else None


def finish_step(con: duckdb.DuckDBPyConnection, load_id: int, position: int, state: str, message: str = "") -> None:
    """Mark a step ``done`` or ``failed`` (with why)."""
    if state not in (DONE, FAILED):
        raise ValueError(f"a step finishes as {DONE} or {FAILED}, not {state!r}")
    con.execute(SQL_FINISH_STEP, [state, message, load_id, position])
