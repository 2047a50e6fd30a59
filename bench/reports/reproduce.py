"""bench/results/reproduce.json -> the reproduction section of docs/BENCHMARKS.md."""

from __future__ import annotations

from bench.reports.text import fmt


def reproduce_section(data: dict) -> list[str]:
    lines = [
        "## Reproducing the committed figures (`bench/reproduce.py`)",
        "",
        f"Run {data['date']}: each benchmark re-run through `python -m curation bench NAME` and every figure compared "
        f"with its committed JSON (absolute tolerance {data['params']['tolerance']:g}; timings, latencies, dates and "
        "machine facts left out, as they change from run to run).",
        "",
        "| benchmark | figures compared | differ | settings and notes that differ | re-run s |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, item in data["benchmarks"].items():
        lines.append(f"| {name} | {item.get('figures_compared', '–')} | {item.get('differ', 'did not finish')} | "
                     f"{item.get('params_and_notes_differ', '–')} | {fmt(data['timings_s'].get(name), 0)} |")
    for name, item in data["benchmarks"].items():
        echoed = item.get("params_and_notes_differences") or {}
        if echoed:
            listed = ", ".join(f"`{k}`" for k in echoed)
            lines += ["", f"{name}: settings or notes that differ (not figures): {listed}"]
    return lines + [""]
