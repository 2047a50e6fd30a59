"""bench/results/load.json -> the load table of docs/RELIABILITY.md."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bench.reports.readers import Goals, reader
from bench.reports.text import fmt
from curation.versions.typed_json import OPTIONAL


@dataclass(frozen=True)
class Params:
    decisions_per_session: int
    data: str
    retraining: bool
    click_timeout_s: float
    cpu_count: int
    python: str
    sessions: str


@dataclass(frozen=True)
class Counts:
    documents: int
    kb_records: int


@dataclass(frozen=True)
class Run:
    """Browser sessions deciding at once while a retraining job runs."""

    sessions: int
    decisions_per_session: int
    acknowledged: int
    stored: int
    errors: int
    retrain_running: bool
    retrain_job_after_cancel: str | None
    latency_ms: Mapping[str, float]
    wall_s: float
    error_messages: tuple[str, ...]
    # Absent from runs before the server logged its own time per decision.
    server_decision_ms: Mapping[str, float] | None = field(default=None, metadata=OPTIONAL)
    server_callback_ms: Mapping[str, float] | None = field(default=None, metadata=OPTIONAL)
    server_run_ms: Mapping[str, float] | None = field(default=None, metadata=OPTIONAL)
    server_decisions_logged: int | None = field(default=None, metadata=OPTIONAL)
    decisions_per_s: float | None = field(default=None, metadata=OPTIONAL)
    load_average_1min: float | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class Load:
    """bench/load.py's result: one run per number of sessions."""

    date: str
    params: Params
    counts: Counts
    runs: tuple[Run, ...]
    timings_s: Mapping[str, float]
    goals: Goals
    notes: tuple[str, ...] = field(default=(), metadata=OPTIONAL)


read = reader("load", Load)


def load_table(data: Load) -> str:
    rows = ["| sessions | decisions each | acknowledged | stored | errors | retrain running | click p50 ms "
            "| click p95 ms | click max ms | server p50 ms | server p95 ms | write p95 ms | decisions/s "
            "| load average |",
            "| ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in data.runs:
        lat = r.latency_ms
        server = r.server_decision_ms or {}
        write = r.server_callback_ms or {}
        rows.append(f"| {r.sessions} | {r.decisions_per_session} | {r.acknowledged} | {r.stored} | "
                    f"{r.errors} | {'yes' if r.retrain_running else 'no'} | {fmt(lat['p50'], 0)} | "
                    f"{fmt(lat['p95'], 0)} | {fmt(lat.get('max'), 0)} | {fmt(server.get('p50'), 0)} | "
                    f"{fmt(server.get('p95'), 0)} | {fmt(write.get('p95'), 0)} | {fmt(r.decisions_per_s, 1)} | "
                    f"{fmt(r.load_average_1min, 1)} |")
    c = data.counts
    rows += ["", f"Run {data.date} on a store of {c.documents:,} abstracts and {c.kb_records:,} KB records "
                 f"({data.params.data} data)." + "".join(f" {note}" for note in data.notes)]
    return "\n".join(rows)
