"""bench/results/reproduce.json -> the reproduction section of docs/BENCHMARKS.md."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bench.reports.readers import Goals, reader
from bench.reports.text import fmt
from curation.versions.typed_json import OPTIONAL


@dataclass(frozen=True)
class Params:
    names: tuple[str, ...]
    tolerance: float
    left_out: str


@dataclass(frozen=True)
class Rerun:
    """One benchmark re-run and compared; the figures are absent when it did not finish."""

    exit_code: int
    figures_compared: int | None = field(default=None, metadata=OPTIONAL)
    numbers_compared: int | None = field(default=None, metadata=OPTIONAL)
    differ: int | None = field(default=None, metadata=OPTIONAL)
    differences: Mapping[str, object] | None = field(default=None, metadata=OPTIONAL)
    params_and_notes_differ: int | None = field(default=None, metadata=OPTIONAL)
    params_and_notes_differences: Mapping[str, object] | None = field(default=None, metadata=OPTIONAL)
    error: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class Reproduce:
    """bench/reproduce.py's result: per benchmark re-run, how many figures differ from the committed JSON."""

    date: str
    params: Params
    benchmarks: Mapping[str, Rerun]
    timings_s: Mapping[str, float]
    goals: Goals


read = reader("reproduce", Reproduce)


def _or(value: object, absent: str) -> object:
    return absent if value is None else value


def reproduce_section(data: Reproduce) -> list[str]:
    lines = [
        "## Reproducing the committed figures (`bench/reproduce.py`)",
        "",
        f"Run {data.date}: each benchmark re-run through `python -m curation bench NAME` and every figure compared "
        f"with its committed JSON (absolute tolerance {data.params.tolerance:g}; timings, latencies, dates and "
        "machine facts left out, as they change from run to run).",
        "",
        "| benchmark | figures compared | differ | settings and notes that differ | re-run s |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, item in data.benchmarks.items():
        lines.append(f"| {name} | {_or(item.figures_compared, '–')} | {_or(item.differ, 'did not finish')} | "
                     f"{_or(item.params_and_notes_differ, '–')} | {fmt(data.timings_s.get(name), 0)} |")
    for name, item in data.benchmarks.items():
        echoed = item.params_and_notes_differences or {}
        if echoed:
            listed = ", ".join(f"`{k}`" for k in echoed)
            lines += ["", f"{name}: settings or notes that differ (not figures): {listed}"]
    return lines + [""]
