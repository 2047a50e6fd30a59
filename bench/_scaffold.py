"""The report scaffold every benchmark writes through: its argparse preamble, machine metadata, goals and the
JSON written atomically, one section re-read and merged where several scripts share a file (feedback.json).

Standard library and ``curation.files`` only: GPU machines run bench scripts without the search stack.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from curation.files import write_atomic

RESULTS = Path(__file__).resolve().parent / "results"

#: The machine figures a result may record, by the key it records them under (scripts keep their own keys).
MACHINE: dict[str, Callable[[], object]] = {
    "cpu_count": os.cpu_count,
    "cpus": os.cpu_count,
    "python": platform.python_version,
    "platform": platform.platform,
    "load_average_at_start": lambda: os.getloadavg()[0],
    "load_average_at_end": lambda: os.getloadavg()[0],
}


def goal(value: float, target: float, op: str, *, met: bool | None = None, of: str | None = None) -> dict[str, object]:
    """``{"value", "target", "op", "met"}`` with ``op`` one of ">=", "<=", ">"; ``met`` overrides the comparison
    where a goal has a further condition, ``of`` names the figure's path when the goal sits apart from it."""
    if met is None:
        met = {">=": value >= target, "<=": value <= target, ">": value > target}[op]
    out: dict[str, object] = {"value": value, "target": target, "op": op, "met": bool(met)}
    return out if of is None else {**out, "of": of}


def now() -> str:
    """The run's date as every result writes it (UTC, seconds)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def machine(*keys: str, **extra: object) -> dict[str, object]:
    """The named :data:`MACHINE` figures, in that order, then ``extra`` (a script's own settings beside them)."""
    return {key: MACHINE[key]() for key in keys} | extra


def parser(doc: str | None, name: str, *, data_dir: bool = False, seed: int | None = None) -> argparse.ArgumentParser:
    """The common preamble: the module docstring's first paragraph as description, ``--out`` (default
    ``bench/results/<name>.json``), and where asked ``--data-dir`` (the settings' data folder) and ``--seed``."""
    p = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=RESULTS / f"{name}.json", help="the result JSON")
    if data_dir:
        from curation.config import load_settings

        p.add_argument("--data-dir", type=Path, default=load_settings().data_dir)
    if seed is not None:
        p.add_argument("--seed", type=int, default=seed)
    return p


def print_goals(goals: Mapping[str, Mapping[str, object]]) -> bool:
    """One line per goal (``name: value op target met``); True when every goal is met."""
    for name, g in goals.items():
        print(f"{name}: {g['value']} {g['op']} {g['target']} {'met' if g['met'] else 'MISSED'}")
    return all(g["met"] for g in goals.values())


def read(out: Path) -> dict:
    """The result JSON at ``out`` as it stands ({} when there is none yet)."""
    return json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}


def write(out: Path, result: Mapping[str, object], *, section: str | None = None,
          goals: Mapping[str, object] | None = None, echo: object = None, indent: int = 2) -> dict:
    """Write ``result`` as the JSON at ``out`` atomically and return what was written.

    With ``section``, ``out`` is shared: it is re-read as it stands now, ``result`` replaces its ``section`` and
    ``goals`` are merged into its top-level goals, so what other scripts wrote there is kept. ``echo`` (if given)
    is printed as JSON, the run's summary on stdout; ``indent`` 1 keeps the largest files smaller.
    """
    if section is None:
        report = dict(result)
    else:
        report = read(out) or {"goals": {}}
        report[section] = result
    if goals:
        report.setdefault("goals", {}).update(goals)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, json.dumps(report, indent=indent, default=str) + "\n")
    if echo is not None:
        print(json.dumps(echo, indent=2, default=str))
    print(f"wrote {out}", file=sys.stderr)
    return report
