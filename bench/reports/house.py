"""bench/results/house.json -> the house section of docs/BENCHMARKS.md (the code's shape, CI's wall time)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bench.reports.readers import Goals, reader
from bench.reports.text import goals_line
from curation.versions.typed_json import OPTIONAL


@dataclass(frozen=True)
class Module:
    path: str
    lines: int


@dataclass(frozen=True)
class Folder:
    limit: int
    modules: int
    lines: int
    largest: Module
    over_limit: tuple[Module, ...]


@dataclass(frozen=True)
class Contracts:
    kept: int
    broken: int
    names: tuple[str, ...]


@dataclass(frozen=True)
class Benchmark:
    """One benchmark script: the lines it alone brings, what it shares, its result file's goals, where it is cited."""

    script: str
    result: str | None
    alone: tuple[str, ...]
    shared: tuple[str, ...]
    lines_alone: int
    goals: int
    goals_met: int
    documents: tuple[str, ...]


@dataclass(frozen=True)
class Layout:
    folders: Mapping[str, Folder]
    bench_sys_path_edits: tuple[str, ...]
    e402_waivers: int
    contracts: Contracts
    tests_collected: int
    readme_lines: int | None = field(default=None, metadata=OPTIONAL)
    benchmarks: tuple[Benchmark, ...] = field(default=(), metadata=OPTIONAL)


@dataclass(frozen=True)
class Slow:
    test: str
    when: str
    seconds: float


@dataclass(frozen=True)
class CiRun:
    commit: str
    exit_code: int
    wall_s: float
    slowest: tuple[Slow, ...]
    log: str
    counts: Mapping[str, int] = field(default_factory=dict, metadata=OPTIONAL)
    pytest_s: float | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class House:
    """bench/house.py's result: module lengths, the import contract, and (with --ci) one timed CI run."""

    benchmark: str
    date: str
    params: Mapping[str, object]
    layout: Layout
    layout_s: float
    goals: Goals
    ci: CiRun | None = field(default=None, metadata=OPTIONAL)


read = reader("house", House)


def house_section(data: House) -> list[str]:
    """bench/house.py: every folder's largest module against its limit, the import contract, CI's wall time."""
    shape = data.layout
    lines = [
        "## The house: module sizes, the import contract, CI's wall time (`python -m bench.house`)",
        "",
        f"Run {data.date[:10]}. Tracked modules per folder against the house limit (a page at most 200 lines, "
        "any other module at most 400):",
        "",
        "| folder | limit | modules | lines | largest | over the limit |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, f in shape.folders.items():
        over = ", ".join(f"{m.path} ({m.lines})" for m in f.over_limit) or "none"
        lines.append(f"| {name}/ | {f.limit} | {f.modules} | {f.lines:,} | {f.largest.path} ({f.largest.lines}) "
                     f"| {over} |")
    lines += [
        "",
        f"`sys.path` edits in bench/: {len(shape.bench_sys_path_edits)}; `noqa: E402` waivers: {shape.e402_waivers}. "
        f"Import contract (`lint-imports`): {shape.contracts.kept} kept, {shape.contracts.broken} broken "
        f"({'; '.join(shape.contracts.names)}). Tests collected: {shape.tests_collected:,}.",
    ]
    if shape.readme_lines is not None:
        lines[-1] += f" README.md: {shape.readme_lines} lines."
    if shape.benchmarks:
        lines += ["", "What each benchmark script of bench/ brings (its own lines, the private modules only it uses, "
                  "its renderer), the result file it writes and that file's goals, and the documents besides this "
                  "one that cite it:", "", "| script | lines alone | shares | result (goals met / all) | cited in |",
                  "| --- | ---: | --- | --- | --- |"]
        lines += [f"| {b.script} | {b.lines_alone:,} | {', '.join(b.shared) or '–'} | "
                  f"{f'{b.result} ({b.goals_met} / {b.goals})' if b.result else '–'} | "
                  f"{', '.join(b.documents) or '–'} |" for b in shape.benchmarks]
    if ci := data.ci:
        counts = ", ".join(f"{n} {word}" for word, n in ci.counts.items())
        pytest_s = f"; pytest's own time {ci.pytest_s / 60:.1f} min" if ci.pytest_s is not None else ""
        lines += [
            "",
            f"One CI run as CI runs it (a fresh clone of {ci.commit[:10]}, `bash .ci/run`: the environment set up, "
            f"the import contract, the whole suite on 2 cores): wall {ci.wall_s / 60:.1f} min, exit {ci.exit_code}"
            f"{pytest_s}; {counts}. Slowest:",
            "",
            "| test | phase | seconds |",
            "| --- | --- | --- |",
        ]
        lines += [f"| `{s.test}` | {s.when} | {s.seconds:.1f} |" for s in ci.slowest[:10]]
    return lines + [""] + goals_line(data.goals)
