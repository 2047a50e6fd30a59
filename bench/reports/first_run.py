"""bench/results/first_run.json -> the first-run section of docs/BENCHMARKS.md."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from bench.reports.readers import Goal, Goals, decode_result, reader
from bench.reports.text import fmt
from curation.relations.answer_filter import THRESHOLD
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
class Suggestions:
    """The Treatment-suggestion figure (bench/_treatments.py): top-5 precision before / after the kind filter."""

    queries: tuple[str, ...]
    queries_with_abstracts_naming_both: int
    queries_with_suggestions: Mapping[str, int]
    suggestions_judged: Mapping[str, int]
    precision: Mapping[str, Mapping[str, float | None]]  # before / after -> judge -> share
    not_drugs: Mapping[str, tuple[str, ...]]
    filter_dev: Mapping[str, Mapping[str, float]]
    searcher_build_s: float
    filter_learn_s: float
    mode: str
    top_docs: int
    judge: str
    filter_read_s: float | None = field(default=None, metadata=OPTIONAL)
    date: str | None = field(default=None, metadata=OPTIONAL)
    load_average: tuple[float, ...] | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class Timed:
    """One timing and the 1-minute load average read just before it."""

    s: float
    load_1min_before: float


@dataclass(frozen=True)
class CommandTimings:
    """One CLI command's whole process: the first run after the store was copied, then the timed runs."""

    first_run: Timed
    runs: tuple[Timed, ...]
    p50: float
    p95: float


@dataclass(frozen=True)
class Restarted:
    """One new app process timed to BRAF + V600E's results (wall, and inside the process), and to its exit."""

    s: float
    load_1min_before: float
    in_process_s: float
    results: int
    exit_s: float | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class RestartTimings:
    """The timed restarts; measured alone (``--restart-only``) they carry their own date, store and loads."""

    runs: tuple[Restarted, ...]
    p50: float
    p95: float
    warm_up: Mapping[str, Timed] | None = field(default=None, metadata=OPTIONAL)  # untimed commands before them
    backup_interval_min: float | None = field(default=None, metadata=OPTIONAL)
    date: str | None = field(default=None, metadata=OPTIONAL)
    store: str | None = field(default=None, metadata=OPTIONAL)
    models_copied: bool | None = field(default=None, metadata=OPTIONAL)
    load_average_before: tuple[float, ...] | None = field(default=None, metadata=OPTIONAL)
    load_average_after: tuple[float, ...] | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class FastStart:
    """``--fast-start``: CLI commands on a copy of a loaded store, and the matcher's build before/after it was kept."""

    date: str
    store: str
    runs: int
    load_average_before: tuple[float, ...]
    load_average_after: tuple[float, ...]
    cli_search_s: CommandTimings
    cli_suggest_s: CommandTimings
    matcher_build_s: Mapping[str, Timed]
    restart_to_first_results_s: RestartTimings | None = field(default=None, metadata=OPTIONAL)
    models_copied: bool | None = field(default=None, metadata=OPTIONAL)


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
    suggestions: Suggestions | None = field(default=None, metadata=OPTIONAL)
    notes: tuple[str, ...] = field(default=(), metadata=OPTIONAL)
    fast_start: FastStart | None = field(default=None, metadata=OPTIONAL)
    load_resume: Mapping[str, object] | None = field(default=None, metadata=OPTIONAL)  # bench/_load_resume.py
    first_models: Mapping[str, object] | None = field(default=None, metadata=OPTIONAL)  # bench/_load_resume.py

    def spread(self, step: str) -> Spread | None:
        """One step's seconds over the runs, None when no run reached it."""
        value = self.timings_s.get(step)
        return None if value is None else decode_result(Spread, value, f"first_run.json timings_s.{step}")


read = reader("first_run", FirstRun)


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
    lines += _while_training_lines(data.runs)
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
    if data.suggestions is not None:
        lines += suggestions_lines(data.suggestions, data.goals.get("suggestion_top5_treatment_precision"))
    lines += _load_resume_lines(data)
    if c.failures:
        lines += ["", "Failed runs: " + "; ".join(c.failures)]
    lines += [line for note in data.notes for line in ("", note)]
    if data.fast_start is not None:
        lines += ["", *fast_start_lines(data.fast_start, data.goals)]
    return lines + [""]


def _while_training_lines(runs: tuple[Mapping[str, object], ...]) -> list[str]:
    """The searches each run made while the learned parts worked after the load (bench/_during_training.py)."""
    later = [r["searches_while_training"] for r in runs if r.get("searches_while_training")]
    if not later:
        return []
    cells = []
    for position, first in enumerate(later[0]):
        seconds = ", ".join(fmt(run[position]["results_s"], 1) for run in later if len(run) > position)
        doing = "; ".join(sorted({re.sub(r" \(\d+ s\)", "", line) for run in later if len(run) > position
                                  for line in run[position]["background"]}))
        cells.append(f"{first['after_first_search_s']:g} s after the first search, {first['query']}: {seconds} s "
                     f"(the sidebar: {doing or 'no background work'})")
    return ["", "Searches while the learned parts work (each in a fresh session, from typing the gene to the "
                "results; no goal): " + "; ".join(cells) + "."]


def suggestions_lines(s: Suggestions, goal: Goal | None) -> list[str]:
    """The Treatment-suggestion figure: a table of the judges before and after the kind filter."""
    verdict = f"{goal.op} {goal.target:g}: {'met' if goal.met else 'missed'}" if goal else "–"
    dev = s.filter_dev.get(f"learned@{THRESHOLD:.2f}", {})
    lines = [
        "",
        f"Treatment suggestions (`bench/_treatments.py`{', ' + s.date if s.date else ''}): the top 5 for "
        f"{len(s.queries)} CIViC gene + variant queries ({s.queries_with_abstracts_naming_both} of them named "
        f"together in an abstract), {s.top_docs} abstracts read each, judged drug or therapy by {s.judge}. Goal "
        f"(judge medicine, after: the judge that shares no source with the filter, which keeps every KB name): "
        f"{verdict}.",
        "",
        "| judge | before (no kind filter) | after |",
        "| --- | ---: | ---: |",
    ]
    for judge in ("medicine_or_civic", "medicine", "drugbank"):
        before, after = s.precision.get("before", {}).get(judge), s.precision.get("after", {}).get(judge)
        lines.append(f"| {judge} | {fmt(before, 3)} | {fmt(after, 3)} |")
    lines += [
        "",
        f"Suggestions judged: {s.suggestions_judged.get('before')} before, {s.suggestions_judged.get('after')} after "
        f"({s.queries_with_suggestions.get('before')} and {s.queries_with_suggestions.get('after')} queries with "
        f"any). The filter's dev figures (held-out names): precision {fmt(dev.get('precision'), 3)}, recall "
        f"{fmt(dev.get('recall'), 3)}, F1 {fmt(dev.get('f1'), 3)} at {THRESHOLD:.2f}; learned in "
        f"{fmt(s.filter_learn_s, 2)} s, its decisions read back by a later process in {fmt(s.filter_read_s, 2)} s "
        f"(load average {list(s.load_average or [])}). Judged no drug after: "
        f"{', '.join(s.not_drugs.get('after', ())) or 'none'}.",
    ]
    return lines


def fast_start_lines(fast: FastStart, goals: Goals) -> list[str]:
    """The fast-start table: each CLI command's first run and p50 / p95 of the runs after it."""
    build = fast.matcher_build_s  # label -> Timed, decoded with the file
    lines = [
        f"Fast start ({fast.date}, load average {list(fast.load_average_before)} before, "
        f"{list(fast.load_average_after)} after): one query (BRAF + V600E), the whole `python -m curation` "
        f"process, on a copy of a loaded store; the first run after the copy builds and keeps the dictionaries' "
        f"matcher, the {fast.runs} runs after it read it.",
        "",
        "| command | first run s (load) | p50 s | p95 s | loads | goal (p95) |",
        "| --- | ---: | ---: | ---: | --- | --- |",
    ]
    for name, timings in (("search", fast.cli_search_s), ("suggest", fast.cli_suggest_s)):
        goal = goals.get(f"cli_{name}_s_p95")
        verdict = f"{goal.op} {goal.target:g} s: {'met' if goal.met else 'missed'}" if goal else "–"
        loads = ", ".join(f"{t.load_1min_before:g}" for t in timings.runs)
        lines.append(f"| `{name}` | {fmt(timings.first_run.s, 1)} ({timings.first_run.load_1min_before:g}) "
                     f"| {fmt(timings.p50, 1)} | {fmt(timings.p95, 1)} | {loads} | {verdict} |")
    restart = fast.restart_to_first_results_s
    if restart is not None:
        goal = goals.get("restart_to_first_results_s_p95")
        verdict = f"{goal.op} {goal.target:g} s: {'met' if goal.met else 'missed'}" if goal else "–"
        loads = ", ".join(f"{t.load_1min_before:g}" for t in restart.runs)
        lines.append(f"| a new app process → BRAF + V600E results (AppTest) | – | {fmt(restart.p50, 1)} "
                     f"| {fmt(restart.p95, 1)} | {loads} | {verdict} |")
        if restart.backup_interval_min is not None:
            when = f" ({restart.date}, load average {list(restart.load_average_before or ())} before)" \
                if restart.date else ""
            models = ", the store's models folder copied with it (its active versions, recogniser and relation " \
                "scorer serve)" if restart.models_copied else ""
            lines += ["", f"The restarts{when}: after one `search` and one `suggest` command (what they keep)"
                          f"{models}; each timed one finds a backup due and starts it once the page is drawn, timed "
                          "to the results line (the exit, which waits for the backup, is not the curator's wait)."]
        else:
            lines += ["", "An app process backed the store up before its first page when the newest backup was "
                          "older than `CURATION_BACKUP_INTERVAL_MIN`: the first one on the copy did, in its timing."]
    if {"before", "after"} <= set(build):
        before, after = build["before"], build["after"]
        lines += ["", f"The matcher's build, the call alone in a fresh process (the build from the store imports "
                      f"spaCy inside the timing; the kept copy is read without it): "
                      f"{fmt(before.s, 1)} s built from the store as before (load {before.load_1min_before:g}), "
                      f"{fmt(after.s, 1)} s read from its kept copy (load {after.load_1min_before:g})."]
    return lines


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
