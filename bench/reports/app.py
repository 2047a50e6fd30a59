"""bench/results/app.json -> the browser section of docs/BENCHMARKS.md."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bench.reports.readers import reader
from bench.reports.text import fmt


@dataclass(frozen=True)
class Counts:
    store_documents: int
    store_kb_records: int
    candidate_pairs: int
    pairs: int
    queries_timed: int
    clicks_timed: int
    decisions_confirmed_in_store: int
    source_pmid_in_results: int
    failures: tuple[object, ...]
    screenshots: Mapping[str, int]
    screenshots_over_budget: Mapping[str, object]


@dataclass(frozen=True)
class App:
    """bench/app.py's result: query → results and click → stored in headless Chromium."""

    date: str
    params: Mapping[str, object]  # the settings echoed; pairs_source and load averages are printed as written
    counts: Counts
    latency_ms: Mapping[str, Mapping[str, float]]  # path → p50, p95, min, max
    timings_s: Mapping[str, float]
    per_pair_ms: tuple[tuple[object, ...], ...]


read = reader("app", App)


def app_section(data: App) -> list[str]:
    c, params = data.counts, data.params
    lines = [
        "## The app in a browser (`bench/app.py`)",
        "",
        f"Run {data.date}: headless Chromium against `streamlit run app.py`, store of {c.store_documents} "
        f"abstracts and {c.store_kb_records} KB records, {c.pairs} gene + variant pairs "
        f"({params.get('pairs_source')}); load average before/after "
        f"{params.get('load_average_1min_before_and_after')}.",
        "",
        "| path | p50 ms | p95 ms |",
        "| --- | ---: | ---: |",
    ]
    for name, v in data.latency_ms.items():
        lines.append(f"| {name} | {fmt(v.get('p50'), 0)} | {fmt(v.get('p95'), 0)} |")
    lines += [
        "",
        f"Decisions confirmed in DuckDB: {c.decisions_confirmed_in_store} of {c.clicks_timed}; the pair's own "
        f"abstract was in the top 20 for {c.source_pmid_in_results} of {c.pairs}. One-off costs (s): "
        + ", ".join(f"{k} {fmt(v, 1)}" for k, v in data.timings_s.items()),
        "",
    ]
    return lines
