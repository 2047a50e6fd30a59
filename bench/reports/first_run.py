"""bench/results/first_run.json -> the first-run section of docs/BENCHMARKS.md."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bench.reports.readers import Goals, decode_result, read_result
from bench.reports.text import fmt
from curation.versions.typed_json import OPTIONAL

FIRST_RUN_STEPS = (  # timing, what it spans, goal in the JSON's "goals"
    ("first_page_s", "first page: command start → page drawn with the Curator field", "first_page_s"),
    ("sample_load_s", "click on *Load the sample* → \"Sample loaded from\"", "sample_load_s_cpu"),
    ("first_results_after_load_s", "then on Curate: typing BRAF + V600E → ranked results",
     "first_results_after_load_s"),
)


@dataclass(frozen=True)
class Spread:
    """One step's seconds over the runs."""

    min: float
    median: float
    max: float
    runs: tuple[float, ...]


@dataclass(frozen=True)
class Counts:
    runs_timed: int
    failures: tuple[str, ...]
    files: int
    abstracts_loaded: int | None = field(default=None, metadata=OPTIONAL)
    kb_records_loaded: int | None = field(default=None, metadata=OPTIONAL)
    synonyms_loaded: int | None = field(default=None, metadata=OPTIONAL)
    results_shown: int | None = field(default=None, metadata=OPTIONAL)
    results_with_marks: int | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class Cli:
    """The CLI path once: quickstart, then the README's command on its store (absent figures: not reached)."""

    quickstart_s: float
    quickstart_rc: int
    quickstart_first_search_check_s_reported: float | None = field(default=None, metadata=OPTIONAL)
    first_page_s: float | None = field(default=None, metadata=OPTIONAL)
    landing_page: str | None = field(default=None, metadata=OPTIONAL)
    first_results_s: float | None = field(default=None, metadata=OPTIONAL)
    variant_enter_to_results_s: float | None = field(default=None, metadata=OPTIONAL)
    results: int | None = field(default=None, metadata=OPTIONAL)
    results_with_marks: int | None = field(default=None, metadata=OPTIONAL)
    marks: int | None = field(default=None, metadata=OPTIONAL)
    store: Mapping[str, int] | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class FirstRun:
    """bench/first_run.py's result: the README's first command on fresh stores, timed in a browser."""

    date: str
    params: Mapping[str, object]  # the settings echoed (command, data_dir, ...)
    machine: Mapping[str, object]  # cpus, load averages (printed as the lists they are), python
    counts: Counts
    timings_s: Mapping[str, object]  # step → Spread (read by spread()), "total" → seconds
    runs: tuple[Mapping[str, object], ...]
    goals: Goals = field(default_factory=dict, metadata=OPTIONAL)
    cli: Cli | None = field(default=None, metadata=OPTIONAL)
    notes: tuple[str, ...] = field(default=(), metadata=OPTIONAL)
    load_resume: Mapping[str, object] | None = field(default=None, metadata=OPTIONAL)  # bench/_load_resume.py
    first_models: Mapping[str, object] | None = field(default=None, metadata=OPTIONAL)  # bench/_load_resume.py

    def spread(self, step: str) -> Spread | None:
        """One step's seconds over the runs, None when no run reached it."""
        value = self.timings_s.get(step)
        return None if value is None else decode_result(Spread, value, f"first_run.json timings_s.{step}")


def read(results: Path) -> FirstRun | None:
    """bench/results/first_run.json, None when it was not run."""
    return read_result(results, "first_run", FirstRun)


def first_run_section(data: FirstRun) -> list[str]:
    params, machine, c = data.params, data.machine, data.counts
    lines = [
        "## First run (`bench/first_run.py`)",
        "",
        f"Run {data.date} on {machine.get('cpus')} CPU cores (load average {machine.get('load_average_before')} "
        f"before, {machine.get('load_average_after')} after): the README's first command, `{params['command']}`, "
        f"run as written on a fresh store, then headless Chromium; {c.runs_timed} runs, each on its own fresh "
        f"store. The sample ({c.files} files of {params['data_dir']}) holds {c.abstracts_loaded} abstracts, "
        f"{c.kb_records_loaded} KB records and {c.synonyms_loaded} synonyms; BRAF + V600E showed "
        f"{c.results_shown} results, {c.results_with_marks} of them with highlighted entities.",
        "",
        "| step | min s | median s | max s | goal (median) |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for name, label, goal_name in FIRST_RUN_STEPS:
        v, goal = data.spread(name), data.goals.get(goal_name)
        verdict = f"{goal.op} {goal.target:g} s: {'met' if goal.met else 'missed'}" if goal else "–"
        lines.append(f"| {label} | {fmt(v and v.min, 1)} | {fmt(v and v.median, 1)} | {fmt(v and v.max, 1)} "
                     f"| {verdict} |")
    cli = data.cli
    if cli is not None and cli.first_results_s is not None:
        lines += [
            "",
            "The CLI path, once, on another fresh store: `python -m curation quickstart` "
            f"{fmt(cli.quickstart_s, 1)} s "
            f"(its own first-search check {fmt(cli.quickstart_first_search_check_s_reported, 1)} s), then the "
            f"README's command on that store: first page {fmt(cli.first_page_s, 1)} s, first results "
            f"(typing BRAF + V600E → ranked results) {fmt(cli.first_results_s, 1)} s.",
        ]
    lines += _load_resume_lines(data)
    if c.failures:
        lines += ["", "Failed runs: " + "; ".join(c.failures)]
    lines += [line for note in data.notes for line in ("", note)]
    return lines + [""]


def _load_resume_lines(data: FirstRun) -> list[str]:
    """The load cut half way and finished by the next start; the learned parts' cost after a load."""
    lines = []
    if (run := data.load_resume) is not None:
        cut, clean = run["interrupted"], run["clean"]
        left = [str(step).rstrip(":") for step in run["cut_left_pending"]]
        lines += [
            "",
            f"A load cut half way ({run['date']}, load average {run['load_average_before']}, installed "
            f"vocabularies: {run.get('vocabularies', 'all')}): the tab closed in "
            f"step {cut['cut_in_step'].rstrip(':')!r} after {cut['cut_after_s']} s, the load went on with no tab "
            f"open, then the server was killed, leaving pending: {', '.join(left)}; the next "
            f"start finished them in {cut['restart_to_load_finished_s']} s. Same counts as a clean `quickstart "
            f"--no-train` ({clean['documents']:,} abstracts, {clean['annotations']:,} annotations, "
            f"{clean['relation_pairs']:,} relation pairs): **interrupted_load_recovered = "
            f"{run['interrupted_load_recovered']}**.",
        ]
    if (models := data.first_models) is not None:
        lines += ["", f"The learned parts after a load ({models['date']}): {models['summary']}"]
    return lines
