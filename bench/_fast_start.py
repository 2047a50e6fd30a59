"""Fast start figures of bench/first_run.py: CLI commands and the matcher's build on a loaded store.

* **cli_search_s / cli_suggest_s**: one query (BRAF + V600E), the whole ``python -m curation search`` (or
  ``suggest``) process, wall time, on a copy of a loaded store. The first run after the copy finds no kept
  matcher (as after an ingest) and builds it; the runs after it read it: their p95 is the goal's figure.
* **restart_to_first_results_s**: a new app process on the store (``AppTest`` runs app.py in it, as the
  server would) with BRAF + V600E typed: from the process's start to the ranked results drawn (the line it prints
  then; its exit, which waits for background work such as the backup begun after the page, is ``exit_s``). One
  untimed ``search`` and ``suggest`` first (what they keep); a backup is due at every timed restart.
  ``--restart-only``: these figures alone.
* **matcher_build_s**: in a fresh process each, the call alone: the matcher as every command built it before it
  was kept (``Matcher(build_lexicon(con))``: the names measured on the annotated abstracts, every phrase
  tokenized) against :func:`curation.entities.matcher_cache.load_matcher` reading the kept copy. The build imports
  spaCy (and, through thinc, torch) inside the timing; the kept copy (with the abstracts' kept abbreviations) is read
  without it.

Each timing is written with the load average read just before it (the machine's 2 cores are shared).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUERY = ("--schema", "PO", "--entity", "Gene=BRAF", "--entity", "Variant=V600E")
COMMANDS = {"cli_search_s": ("search", *QUERY, "--top", "20"), "cli_suggest_s": ("suggest", *QUERY)}
BUILD_SCRIPT = """
import json, sys, time
import duckdb
from curation.entities.dictionaries import build_lexicon
from curation.entities.matcher_cache import load_matcher
from curation.entities.matching import Matcher
con = duckdb.connect(sys.argv[1], read_only=True)
started = time.perf_counter()
if sys.argv[2] == "before":
    Matcher(build_lexicon(con))
else:
    load_matcher(con, sys.argv[3])
print(json.dumps(time.perf_counter() - started))
"""
# A new app process on the loaded store (Streamlit's AppTest runs app.py in it, as a server would), BRAF + V600E
# typed on the first page: seconds from the process's start to the ranked results, printed last.
RESTART_SCRIPT = """
import json, sys, time
started = time.perf_counter()
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(sys.argv[1], default_timeout=900)
at.session_state["curator"] = "bench"
at.session_state["pick_Gene"] = "BRAF"
at.session_state["pick_Variant"] = "V600E"
at.run()
assert not at.exception, at.exception
assert any("Query: Treatment for gene BRAF and variant V600E?" in t.value for t in at.text), "no query line"
results = sum("PMID" in m.value for m in at.markdown)
assert results, "no results"
print(json.dumps([time.perf_counter() - started, results]), flush=True)
"""
RESTART_BACKUP_INTERVAL_MIN = 0.001  # every timed restart finds a backup due (the newest is older than this)


def load_average() -> float:
    """The 1-minute load average now."""
    return round(os.getloadavg()[0], 2)


def store_copy(store: Path, work: Path) -> dict[str, str]:
    """Copy a loaded store into ``work`` (never written in place) and the environment that points at it, with the
    ``models`` folder beside the store when there is one (quickstart's layout, ``bench._server.first_run_env``):
    the versions, recogniser and relation scorer the store names active then serve in the copy."""
    work.mkdir(parents=True, exist_ok=True)
    shutil.copy2(store, work / "curation.duckdb")
    if (store.parent / "models").is_dir():
        shutil.copytree(store.parent / "models", work / "models")
    env = dict(os.environ)
    env.update({"CURATION_DB": str(work / "curation.duckdb"), "CURATION_CACHE_DIR": str(work / "cache"),
                "CURATION_MODELS_DIR": str(work / "models"), "CURATION_JOBS_DIR": str(work / "jobs"),
                "CURATION_BACKUPS_DIR": str(work / "backups")})
    return env


def timed_command(args: tuple[str, ...], env: dict[str, str], timeout: float = 900) -> dict:
    """One ``python -m curation ...`` process: wall seconds, exit status, the load average before it."""
    load = load_average()
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "curation", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return {"s": round(seconds, 3), "load_1min_before": load}


def p95(values: list[float]) -> float:
    """The 95th percentile (linear interpolation; the largest value of fewer than 20)."""
    ordered = sorted(values)
    rank = 0.95 * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return round(ordered[low] + (ordered[high] - ordered[low]) * (rank - low), 3)


def cli_timings(name: str, env: dict[str, str], runs: int) -> dict:
    """``runs`` timed processes of one command after a first one (which builds the kept matcher when absent)."""
    first = timed_command(COMMANDS[name], env)
    timed = [timed_command(COMMANDS[name], env) for _ in range(runs)]
    seconds = [t["s"] for t in timed]
    return {"first_run": first, "runs": timed, "p50": round(statistics.median(seconds), 3), "p95": p95(seconds)}


def matcher_build_timings(env: dict[str, str]) -> dict:
    """The matcher built as before (no kept copy) and read from the kept copy, each in a fresh process, timed
    inside it after the imports."""
    out = {}
    for label in ("before", "after"):
        load = load_average()
        done = subprocess.run([sys.executable, "-c", BUILD_SCRIPT, env["CURATION_DB"], label,
                               str(Path(env["CURATION_CACHE_DIR"]) / "lexicon")],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800, check=True)
        out[label] = {"s": round(float(done.stdout.strip().splitlines()[-1]), 3), "load_1min_before": load}
    return out


def restart_timings(env: dict[str, str], runs: int) -> dict:
    """``runs`` new app processes on the store, each timed to BRAF + V600E's results, after one untimed ``search``
    and ``suggest`` command each (they keep the matcher, the abstracts' abbreviations and the answer filter when they
    are not kept yet, as an app that ran before a restart has; one stopped after its first results has not kept them
    all). Each has a backup due (:data:`RESTART_BACKUP_INTERVAL_MIN`), as a restart after a while has."""
    warm_up = {name: timed_command(args, env) for name, args in COMMANDS.items()}
    env = {**env, "CURATION_BACKUP_INTERVAL_MIN": str(RESTART_BACKUP_INTERVAL_MIN)}
    timed = [_restart(env) for _ in range(runs)]
    seconds = [t["s"] for t in timed]
    return {"warm_up": warm_up, "runs": timed, "p50": round(statistics.median(seconds), 3), "p95": p95(seconds),
            "backup_interval_min": RESTART_BACKUP_INTERVAL_MIN}


def _restart(env: dict[str, str]) -> dict:
    """One new app process: seconds from its start to the results line it prints (``s``) and to its exit
    (``exit_s``: what the exit waits for, such as a backup begun after the page, is not the curator's wait)."""
    load = load_average()
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-c", RESTART_SCRIPT, str(ROOT / "app.py")], cwd=ROOT, env=env,
                                   stdout=subprocess.PIPE, stderr=errors, text=True)
        shown, printed = None, None
        for line in process.stdout:  # until the results line, the script's last
            if line.startswith("["):
                shown, printed = time.perf_counter(), json.loads(line)
        if process.wait(timeout=1800) != 0 or printed is None:
            errors.seek(0)
            raise RuntimeError(f"app restart: {errors.read().decode(errors='replace').strip()[-400:]}")
        ended = time.perf_counter()
    inside, results = printed
    return {"s": round(shown - started, 3), "exit_s": round(ended - started, 3), "load_1min_before": load,
            "in_process_s": round(inside, 3), "results": results}


def fast_start(store: Path, work: Path, runs: int, restart_only: bool = False) -> dict:
    """Every fast-start figure on a copy of ``store`` under ``work`` (``restart_only``: the restarts alone)."""
    env = store_copy(store, work)
    result = {"store": str(store), "runs": runs, "load_average_before": [round(x, 2) for x in os.getloadavg()],
              "models_copied": (work / "models").is_dir()}
    if restart_only:
        result["restart_to_first_results_s"] = restart_timings(env, runs)
        result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
        return result
    for name in COMMANDS:
        result[name] = cli_timings(name, env, runs)
        print(f"{name}: {result[name]}", flush=True)
    result["matcher_build_s"] = matcher_build_timings(env)
    print(f"matcher_build_s: {result['matcher_build_s']}", flush=True)
    result["restart_to_first_results_s"] = restart_timings(env, runs)
    print(f"restart_to_first_results_s: {result['restart_to_first_results_s']}", flush=True)
    result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    return result


def fast_start_goals(result: dict) -> dict:
    """The goals of the fast-start figures, as bench/first_run.py writes its goals."""
    out = {}
    for goal, name, target in (("cli_search_s_p95", "cli_search_s", 3.0), ("cli_suggest_s_p95", "cli_suggest_s", 3.0),
                               ("restart_to_first_results_s_p95", "restart_to_first_results_s", 3.0)):
        if name not in result:
            continue
        value = result[name]["p95"]
        out[goal] = {"value": value, "target": target, "op": "<=", "met": value <= target,
                     "of": f"p95 {name} over {len(result[name]['runs'])} runs, the kept matcher read"}
    return out
