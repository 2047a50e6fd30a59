"""bench/results/first_run.json -> the first-run section of docs/BENCHMARKS.md."""

from __future__ import annotations

from bench.reports.text import fmt

FIRST_RUN_STEPS = (  # timing, what it spans, goal in the JSON's "goals"
    ("first_page_s", "first page: command start → page drawn with the Curator field", "first_page_s"),
    ("sample_load_s", "click on *Load the sample* → \"Sample loaded from\"", "sample_load_s_cpu"),
    ("first_results_after_load_s", "then on Curate: typing BRAF + V600E → ranked results",
     "first_results_after_load_s"),
)


def first_run_section(data: dict) -> list[str]:
    params, machine, c, t = data["params"], data["machine"], data["counts"], data["timings_s"]
    lines = [
        "## First run (`bench/first_run.py`)",
        "",
        f"Run {data['date']} on {machine.get('cpus')} CPU cores (load average {machine.get('load_average_before')} "
        f"before, {machine.get('load_average_after')} after): the README's first command, `{params['command']}`, "
        f"run as written on a fresh store, then headless Chromium; {c['runs_timed']} runs, each on its own fresh "
        f"store. The sample ({c['files']} files of {params['data_dir']}) holds {c.get('abstracts_loaded')} abstracts, "
        f"{c.get('kb_records_loaded')} KB records and {c.get('synonyms_loaded')} synonyms; BRAF + V600E showed "
        f"{c.get('results_shown')} results, {c.get('results_with_marks')} of them with highlighted entities.",
        "",
        "| step | min s | median s | max s | goal (median) |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    goals = data.get("goals", {})
    for name, label, goal_name in FIRST_RUN_STEPS:
        v, goal = t.get(name, {}), goals.get(goal_name)
        verdict = f"{goal['op']} {goal['target']:g} s: {'met' if goal['met'] else 'missed'}" if goal else "–"
        lines.append(f"| {label} | {fmt(v.get('min'), 1)} | {fmt(v.get('median'), 1)} | {fmt(v.get('max'), 1)} "
                     f"| {verdict} |")
    cli = data.get("cli") or {}
    if cli.get("first_results_s") is not None:
        lines += [
            "",
            "The CLI path, once, on another fresh store: `python -m curation quickstart` "
            f"{fmt(cli['quickstart_s'], 1)} s "
            f"(its own first-search check {fmt(cli.get('quickstart_first_search_check_s_reported'), 1)} s), then the "
            f"README's command on that store: first page {fmt(cli.get('first_page_s'), 1)} s, first results "
            f"(typing BRAF + V600E → ranked results) {fmt(cli['first_results_s'], 1)} s.",
        ]
    if c.get("failures"):
        lines += ["", "Failed runs: " + "; ".join(c["failures"])]
    lines += [line for note in data.get("notes", []) for line in ("", note)]
    return lines + [""]
