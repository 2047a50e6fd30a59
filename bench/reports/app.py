"""bench/results/app.json -> the browser section of docs/BENCHMARKS.md."""

from __future__ import annotations

from bench.reports.text import fmt


def app_section(data: dict) -> list[str]:
    c, params = data["counts"], data["params"]
    lines = [
        "## The app in a browser (`bench/app.py`)",
        "",
        f"Run {data['date']}: headless Chromium against `streamlit run app.py`, store of {c['store_documents']} "
        f"abstracts and {c['store_kb_records']} KB records, {c['pairs']} gene + variant pairs "
        f"({params.get('pairs_source')}); load average before/after "
        f"{params.get('load_average_1min_before_and_after')}.",
        "",
        "| path | p50 ms | p95 ms |",
        "| --- | ---: | ---: |",
    ]
    for name, v in data["latency_ms"].items():
        lines.append(f"| {name} | {fmt(v.get('p50'), 0)} | {fmt(v.get('p95'), 0)} |")
    lines += [
        "",
        f"Decisions confirmed in DuckDB: {c['decisions_confirmed_in_store']} of {c['clicks_timed']}; the pair's own "
        f"abstract was in the top 20 for {c['source_pmid_in_results']} of {c['pairs']}. One-off costs (s): "
        + ", ".join(f"{k} {fmt(v, 1)}" for k, v in data.get("timings_s", {}).items()),
        "",
    ]
    return lines
