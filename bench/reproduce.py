"""Re-run benchmarks through `python -m curation bench` and compare their figures with the committed JSONs.

A structure-only change must not move a figure: this script runs each named benchmark into a temporary
file, compares every number that measures quality (timings, latencies, dates and machine facts are
left out: they change from run to run), and writes bench/results/reproduce.json with what differs.

    .venv/bin/python -m bench.reproduce                    # matching and retrieval (about 10 min on 2 cores)
    .venv/bin/python -m bench.reproduce --names matching   # one of them
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import _scaffold as scaffold
from bench._scaffold import RESULTS, goal

ROOT = Path(__file__).resolve().parent.parent
# Keys whose values vary between runs of the same code (wall-clock, load, dates, host facts).
VOLATILE = re.compile(r"(^|\.)(date|timings_s|latency_ms|latency|load_average\w*|machine|python|"
                      r"\w*_ms(_per_abstract)?|\w*_s|build_s|seconds\w*)(\.|\[|$)")


def flatten(value: object, prefix: str = "") -> dict[str, object]:
    """Every leaf of a JSON value by its dotted path ("systems.bm25.ndcg@10")."""
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for key, item in value.items():
            out.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(value, list):
        out = {}
        for i, item in enumerate(value):
            out.update(flatten(item, f"{prefix}[{i}]"))
        return out
    return {prefix: value}


def same(a: object, b: object, tolerance: float) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, int | float) or not isinstance(b, int | float):
        return a == b
    return math.isclose(float(a), float(b), rel_tol=0.0, abs_tol=tolerance)


def compare(committed: dict, now: dict, tolerance: float) -> dict[str, object]:
    """What differs between two results of one benchmark, volatile keys left out.

    Figures are every value outside ``params`` and ``notes``; those two (the settings echoed and prose)
    are compared too and listed, but a difference there is not a moved figure.
    """
    old = {k: v for k, v in flatten(committed).items() if not VOLATILE.search(k)}
    new = {k: v for k, v in flatten(now).items() if not VOLATILE.search(k)}
    keys = sorted(set(old) | set(new))
    figures = [k for k in keys if not k.startswith(("params", "notes"))]
    numbers = [k for k in figures if isinstance(old.get(k), int | float) and not isinstance(old.get(k), bool)]
    differ = {k: {"committed": old.get(k), "now": new.get(k)} for k in figures
              if not same(old.get(k), new.get(k), tolerance)}
    echoed = {k: {"committed": old.get(k), "now": new.get(k)} for k in keys
              if k not in figures and not same(old.get(k), new.get(k), tolerance)}
    return {"figures_compared": len(figures), "numbers_compared": len(numbers), "differ": len(differ),
            "differences": dict(list(differ.items())[:50]),
            "params_and_notes_differ": len(echoed), "params_and_notes_differences": dict(list(echoed.items())[:50])}


def run(name: str, out: Path) -> tuple[int, float]:
    started = time.time()
    proc = subprocess.run([sys.executable, "-m", "curation", "bench", name, "--out", str(out)], cwd=ROOT)
    return proc.returncode, round(time.time() - started, 1)


def main(argv: list[str] | None = None) -> int:
    parser = scaffold.parser(__doc__, "reproduce")
    parser.add_argument("--names", nargs="+", default=["matching", "retrieval"])
    parser.add_argument("--tolerance", type=float, default=1e-4, help="absolute difference allowed per number")
    parser.add_argument("--work-dir", type=Path, default=None, help="keep the re-run JSONs here (default: a temp dir)")
    args = parser.parse_args(argv)
    report: dict[str, object] = {"date": scaffold.now(),
                                 "params": {"names": args.names, "tolerance": args.tolerance,
                                            "left_out": VOLATILE.pattern},
                                 "benchmarks": {}, "timings_s": {}}
    goals = {}
    with tempfile.TemporaryDirectory(prefix="reproduce-") as temporary:
        folder = args.work_dir or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        for name in args.names:
            out = Path(folder) / f"{name}.json"
            code, seconds = run(name, out)
            report["timings_s"][name] = seconds
            if code != 0 or not out.exists():
                report["benchmarks"][name] = {"exit_code": code, "error": "the benchmark did not finish"}
                goals[f"{name}_reproduced"] = goal(None, 0, "<=", met=False)
                continue
            figures = compare(scaffold.read(RESULTS / f"{name}.json"), scaffold.read(out), args.tolerance)
            report["benchmarks"][name] = {"exit_code": code, **figures}
            goals[f"{name}_reproduced"] = goal(figures["differ"], 0, "<=")
    report["goals"] = goals
    scaffold.write(args.out, report)
    for name, item in report["benchmarks"].items():
        print(f"{name}: {item.get('differ', 'failed')} of {item.get('figures_compared', '?')} figures differ")
    return 0 if scaffold.print_goals(goals) else 1


if __name__ == "__main__":
    raise SystemExit(main())
