"""The house: the code's shape and the CI's wall time (bench/results/house.json).

Section ``layout`` (seconds): every module's length against the house limits (a page <= 200 lines; a module
of curation/, index/, pages/ or bench/ <= 400), ``sys.path`` edits and ``E402`` waivers left in the code, the
import contract (``lint-imports``: layers, index free of curation, pages through workflows, no cycles) and how
many tests the suite collects.

Section ``ci`` (``--ci``, about 20 minutes on 2 cores): what CI does, timed — a fresh clone of HEAD beside this
checkout (so ``../shared`` is the same folder), ``bash .ci/run`` with ``CI=true``: the environment set up from
requirements.txt (pip's cache as this machine has it), the import contract, the whole test suite. The wall time,
the pytest summary and its slowest tests are read from the run's own output; the clone is removed afterwards.

    python -m bench.house            # layout only
    python -m bench.house --ci       # layout + one timed CI run
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

from bench import _scaffold as scaffold
from bench._scaffold import goal

ROOT = Path(__file__).resolve().parent.parent
#: The house limits (shared/STYLE.md habit 1 and the thin-page rule): folder → most lines a module may have.
LIMITS = {"pages": 200, "curation": 400, "index": 400, "bench": 400}
#: CI's budget for one run of .ci/run on this machine.
CI_BUDGET_S = 20 * 60
README_LIMIT = 200  # a README a newcomer reads; the manual is the documentation site
BENCH_LIMIT = 7_500  # bench/ at most half of its 15,042 lines when the house's third step was asked for
SYS_PATH = re.compile(r"\bsys\.path\.(insert|append|extend)\(|\bsys\.path\s*=|\bsys\.path\s*\+=")
E402 = re.compile(r"#\s*noqa:[^\n]*\bE402\b")
SUMMARY = re.compile(r"^=*\s*(?P<counts>(?:\d+ \w+(?:, )?)+) in (?P<seconds>[\d.]+)s")
DURATION = re.compile(r"^(?P<seconds>[\d.]+)s (?P<when>call|setup|teardown)\s+(?P<test>\S+)")


def tracked_python(root: Path) -> list[Path]:
    """The repository's tracked .py files (what a clone has), relative to ``root``."""
    out = subprocess.run(["git", "ls-files", "*.py"], cwd=root, capture_output=True, text=True, check=True).stdout
    return [Path(line) for line in out.splitlines() if line]


def lines_of(path: Path) -> int:
    with path.open(encoding="utf-8") as f:
        return sum(1 for _ in f)


def layout(root: Path) -> dict:
    """Module lengths against :data:`LIMITS`, sys.path edits, E402 waivers, the import contract, the test count."""
    files = tracked_python(root)
    folders: dict[str, dict] = {}
    for top, limit in LIMITS.items():
        sizes = {str(p): lines_of(root / p) for p in files if p.parts[0] == top}
        over = sorted(((p, n) for p, n in sizes.items() if n > limit), key=lambda item: -item[1])
        largest = max(sizes.items(), key=lambda item: item[1]) if sizes else ("", 0)
        folders[top] = {"limit": limit, "modules": len(sizes), "lines": sum(sizes.values()),
                        "largest": {"path": largest[0], "lines": largest[1]},
                        "over_limit": [{"path": p, "lines": n} for p, n in over]}
    texts = {str(p): (root / p).read_text(encoding="utf-8") for p in files}
    sys_path = sorted(p for p, t in texts.items() if p.startswith("bench/") and SYS_PATH.search(t))
    waivers = sum(len(E402.findall(t)) for t in texts.values())
    return {"folders": folders, "bench_sys_path_edits": sys_path, "e402_waivers": waivers,
            "contracts": contracts(root), "tests_collected": collected(root),
            "readme_lines": lines_of(root / "README.md") if (root / "README.md").exists() else None,
            "benchmarks": bench_map(root, files)}


BENCH_IMPORT = re.compile(r"^[ \t]*from bench(?:\.(?P<module>_?\w+) import| import (?P<names>[^\n(]+|\([^)]*\)))",
                          re.MULTILINE)
RUNS = re.compile(r'with_name\("(_\w+)\.py"\)')
RESULT_NAME = re.compile(r'scaffold\.parser\(__doc__, "(\w+)"')  # the result file a script writes (or shares)
#: The documents a benchmark may be cited in besides docs/BENCHMARKS.md (which every result renders into).
DOCUMENTS = ("README.md", "docs/*.md", "docs/guide/*.md", "bench/*.md.in")


def bench_map(root: Path, files: list[Path]) -> list[dict]:
    """Each benchmark script of bench/ (a module without a leading underscore that is not the report): the lines
    it alone brings (its own, the private modules only it imports, directly or not, and its renderer in
    bench/reports/), the private modules it shares with others, the result file it writes (some scripts write
    sections of one file: feedback.json, entities.json) and that file's goals (met / all), and the documents
    other than docs/BENCHMARKS.md that name it."""
    bench = {p.stem: p for p in files if p.parts[0] == "bench" and len(p.parts) == 2 and p.stem != "__init__"}
    imports = {}
    for name, path in bench.items():
        found = set()
        for m in BENCH_IMPORT.finditer((root / path).read_text(encoding="utf-8")):
            found |= {m["module"]} if m["module"] else {n.split(" as ")[0].strip(" ()\n") for n in
                                                        m["names"].split(",")}
        found |= set(RUNS.findall((root / path).read_text(encoding="utf-8")))  # a worker started as a process
        imports[name] = {n for n in found if n in bench and n != name}
    scripts = sorted(n for n in bench if not n.startswith("_") and n != "report")
    reached = {}
    for script in scripts:
        seen, todo = set(), [script]
        while todo:
            for dep in imports[todo.pop()] - seen:
                if dep.startswith("_"):
                    seen.add(dep)
                    todo.append(dep)
        reached[script] = seen
    docs = {str(p.relative_to(root)): p.read_text(encoding="utf-8") for pattern in DOCUMENTS
            for p in sorted(root.glob(pattern)) if p.name != "BENCHMARKS.md"}
    rows = []
    for script in scripts:
        alone = sorted(d for d in reached[script] if all(d not in reached[o] for o in scripts if o != script))
        renderer = root / "bench" / "reports" / f"{script}.py"
        writes = RESULT_NAME.search((root / bench[script]).read_text(encoding="utf-8"))
        result = root / "bench" / "results" / f"{writes[1] if writes else script}.json"
        goals = scaffold.read(result).get("goals", {}) if result.exists() else {}
        cited = re.compile(rf"bench[/.]{script}\b")
        rows.append({"script": script, "result": result.name if result.exists() else None, "alone": alone,
                     "shared": sorted(set(reached[script]) - set(alone)),
                     "lines_alone": lines_of(root / bench[script]) + sum(lines_of(root / bench[d]) for d in alone)
                     + (lines_of(renderer) if renderer.exists() else 0),
                     "goals": len(goals), "goals_met": sum(bool(g.get("met")) for g in goals.values()),
                     "documents": sorted(d for d, text in docs.items() if cited.search(text))})
    return rows


def contracts(root: Path) -> dict:
    """``lint-imports`` over the tree: contracts kept and broken (its own summary line)."""
    tool = Path(sys.executable).with_name("lint-imports")
    run = subprocess.run([str(tool), "--no-cache"], cwd=root, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(root)})
    found = re.search(r"Contracts: (\d+) kept, (\d+) broken", run.stdout)
    if not found:
        raise SystemExit(f"lint-imports printed no summary (exit {run.returncode}):\n{run.stdout[-2000:]}")
    # The contracts' names from where they are declared (lint-imports wraps long names over several lines).
    with (root / "pyproject.toml").open("rb") as f:
        names = [c["name"] for c in tomllib.load(f)["tool"]["importlinter"]["contracts"]]
    return {"kept": int(found.group(1)), "broken": int(found.group(2)), "names": names}


def collected(root: Path) -> int:
    """How many tests ``pytest --collect-only`` finds (every test, browser and slow ones included)."""
    run = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
                         cwd=root, capture_output=True, text=True)
    found = re.search(r"^(\d+) tests? collected", run.stdout, re.MULTILINE)
    if not found:
        raise SystemExit(f"pytest --collect-only printed no count (exit {run.returncode}):\n{run.stdout[-2000:]}")
    return int(found.group(1))


def parse_ci_output(text: str) -> dict:
    """The pytest summary (counts, seconds) and the slowest tests from one CI run's output."""
    summary: dict = {}
    slowest = []
    for line in text.splitlines():
        if m := SUMMARY.match(line.strip()):
            counts = {word: int(n) for n, word in (part.split(" ", 1) for part in m.group("counts").split(", "))}
            summary = {"counts": counts, "pytest_s": float(m.group("seconds"))}
        elif m := DURATION.match(line.strip()):
            slowest.append({"test": m.group("test"), "when": m.group("when"), "seconds": float(m.group("seconds"))})
    return {**summary, "slowest": slowest[:15]}


def ci_run(root: Path, log: Path) -> dict:
    """Clone HEAD beside ``root`` (``../shared`` is then this checkout's) and time ``bash .ci/run`` in it."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                          check=True).stdout.strip()
    clone = Path(tempfile.mkdtemp(prefix=".house-ci-", dir=root.parent))
    try:
        subprocess.run(["git", "clone", "--quiet", str(root), str(clone / "repo")], check=True)
        subprocess.run(["git", "checkout", "--quiet", head], cwd=clone / "repo", check=True)
        # A copy of shared/ beside the clone, as CI has it: a link to this checkout's neighbour.
        if (root.parent / "shared").exists():
            (clone / "shared").symlink_to(root.parent / "shared")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTEST"))}
        env["CI"] = "true"
        started = time.perf_counter()
        with log.open("w", encoding="utf-8") as out:
            run = subprocess.run(["bash", ".ci/run"], cwd=clone / "repo", stdout=out, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, env=env)
        wall = time.perf_counter() - started
    finally:
        shutil.rmtree(clone, ignore_errors=True)
    parsed = parse_ci_output(log.read_text(encoding="utf-8", errors="replace"))
    return {"commit": head, "exit_code": run.returncode, "wall_s": round(wall, 1), **parsed,
            "log": str(log)}


def main(argv: list[str] | None = None) -> int:
    parser = scaffold.parser(__doc__, "house")
    parser.add_argument("--ci", action="store_true", help="also time one run of .ci/run on a fresh clone of HEAD")
    parser.add_argument("--ci-log", type=Path, default=Path(tempfile.gettempdir()) / "house-ci.log",
                        help="where the CI run's output goes (kept for reading)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    shape = layout(ROOT)
    out: dict = {"benchmark": "house", "date": scaffold.now(),
                 "params": scaffold.machine("cpu_count", "python", limits=LIMITS, ci_budget_s=CI_BUDGET_S),
                 "layout": shape, "layout_s": round(time.perf_counter() - started, 1)}
    folders = shape["folders"]
    goals = {
        "pages_over_200_lines": goal(len(folders["pages"]["over_limit"]), 0, "<="),
        "modules_over_400_lines": goal(sum(len(folders[k]["over_limit"]) for k in ("curation", "index", "bench")),
                                       0, "<="),
        "bench_sys_path_edits": goal(len(shape["bench_sys_path_edits"]), 0, "<="),
        "import_contracts_broken": goal(shape["contracts"]["broken"], 0, "<="),
        "readme_lines": goal(shape["readme_lines"] or 0, README_LIMIT, "<="),
        "bench_lines": goal(folders["bench"]["lines"], BENCH_LIMIT, "<="),
    }
    if args.ci:
        ci = ci_run(ROOT, args.ci_log)
        out["ci"] = ci
        counts = ci.get("counts", {})
        failed = counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0)
        goals["ci_wall_s"] = goal(ci["wall_s"], CI_BUDGET_S, "<=")
        # A run that failed before or outside the tests (set-up, the import contract) counts as one failure.
        goals["ci_tests_failed"] = goal(max(failed, int(ci["exit_code"] != 0)), 0, "<=")
    elif "ci" in (old := scaffold.read(args.out)):
        # A layout-only run keeps the last timed CI run (and its goals) rather than dropping them.
        out["ci"] = old["ci"]
        goals.update({k: v for k, v in old.get("goals", {}).items() if k.startswith("ci_")})
    out["goals"] = goals
    scaffold.write(args.out, out)
    scaffold.print_goals(goals)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
