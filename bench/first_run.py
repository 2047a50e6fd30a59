"""A newcomer's first run: the README's first command on a fresh store, "Load the sample", a first search.

Usage::

    python -m bench.first_run [--runs 3] [--data-dir D] [--out bench/results/first_run.json]
    python -m bench.first_run --suggestions-only STORE   # only the Treatment-suggestion figure, into --out
    python -m bench.first_run --fast-start STORE [--fast-start-runs 5]   # CLI and matcher figures only
    python -m bench.first_run --fast-start STORE --restart-only          # the app restarts alone
    python -m curation bench first_run

Each browser run starts from nothing in a temporary folder: the README's first command (the first
line of its first ```bash block, read from README.md, its comment cut) runs with ``bash -c`` in the
repository's root, with only the store's variables (CURATION_DB, _MODELS_DIR, _JOBS_DIR, _CACHE_DIR,
_BACKUPS_DIR) and STREAMLIT_SERVER_PORT set, and headless system Chromium (``bench/_browser.py``, the
code of the browser tests) measures:

* **first_page_s**: from starting the command until the first page (an empty store: Knowledge base)
  is drawn, its script finished, with the sidebar's Curator field (the browser was started before);
* **sample_load_s**: from the click on "Load the sample" until "Sample loaded from ..." shows; the
  click's callback ingests every file of the data directory and builds what the first search needs
  (the text matcher over the new dictionaries, the BM25 index);
* **first_results_after_load_s**: then, on Curate, from starting to type BRAF in the Gene slot until
  the ranked results of BRAF + V600E are drawn (the Gene-only search runs in between, as it does for
  a curator).

``--load-resume`` measures **interrupted_load_recovered** instead (``bench/_load_resume.py``): a load cut by a
closed tab and a killed server, finished by the next start, against a clean load; ``--first-models``
**models_active_after_load_s_cpu**: quickstart with its training steps (relation scorer, base encoder version).

The CLI path is measured once for comparison: ``python -m curation quickstart`` on another fresh store
(wall time), then the README's command on that store (first page: Curate) and the same first search,
which builds the matcher in the new server process.

**suggestion_top5_treatment_precision** (``bench/_treatments.py``): on the CLI path's loaded store, the share of
the top 5 Treatment suggestions for 50 CIViC gene + variant queries that are drugs or therapies, before and
after the answer-kind filter (the judge, not the filter's rule, is named there; the goal reads the "medicine" judge,
the one that shares no source with the filter).

Writes one JSON: date, params, machine, counts, timings_s (min / median / max over the runs), runs,
cli, suggestions, goals and notes.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import Error as PlaywrightError

from bench import _scaffold as scaffold
from bench._browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    VIEWPORT,
    AppError,
    chromium,
    load_sample,
    marked_results,
    open_page,
    result_pmids,
    search,
    wait_for_page,
)
from bench._during_training import later_searches
from bench._fast_start import fast_start, fast_start_goals
from bench._server import command_server, first_run_env, readme_first_command
from bench._treatments import first_run_suggestions
from curation.config import load_settings
from curation.ingest.sample import find_sample
from curation.store.base import stats
from curation.store.opening import open_store

ROOT = Path(__file__).resolve().parent.parent
QUERY = ("BRAF", "V600E")
#: The sections a full run does not measure, each kept with its goal (``--load-resume``, ``--first-models``).
SEPARATE_SECTIONS = {"load_resume": "interrupted_load_recovered", "first_models": "models_active_after_load_s_cpu"}
CURATOR_FIELD = 'input[aria-label="Curator"]'
LOAD_TIMEOUT_S = 1200
SEARCH_TIMEOUT_S = 600
# Goals of issue 22: each a timing's median over the runs, compared with its target.
GOALS = {  # goal name: (timing, target, op)
    "sample_load_s_cpu": ("sample_load_s", 90.0, "<="),
    "first_results_after_load_s": ("first_results_after_load_s", 5.0, "<="),
    "first_page_s": ("first_page_s", 5.0, "<="),
}


def first_page(page, served) -> float:
    """Open the app; seconds from starting the command until a page is drawn with the Curator field."""
    page.goto(served.url)
    wait_for_page(page, timeout_s=SEARCH_TIMEOUT_S)
    page.locator(CURATOR_FIELD).wait_for(state="visible", timeout=SEARCH_TIMEOUT_S * 1000)
    return time.perf_counter() - served.started


def first_search(page) -> dict:
    """BRAF + V600E on the Curate page shown: typing the gene → the pair's results drawn, and what they are."""
    shown: list[float] = []
    typing = time.perf_counter()
    variant_s = search(page, *QUERY, timeout_s=SEARCH_TIMEOUT_S, shown_at=shown)
    marks = marked_results(page)
    return {
        "first_results_s": round(shown[0] - typing, 3),
        "variant_enter_to_results_s": round(variant_s, 3),
        "results": len(result_pmids(page)),
        "results_with_marks": sum(n > 0 for n in marks),
        "marks": sum(marks),
    }


def store_counts(db: str) -> dict:
    con = open_store(db, read_only=True)
    try:
        counts = stats(con)
    finally:
        con.close()
    return {k: counts[k] for k in ("documents", "kb_records", "synonyms", "mentions") if k in counts}


def browser_run(command: str, work: Path) -> dict:
    """One fresh store: the command, the first page, "Load the sample", Curate, BRAF + V600E."""
    env = first_run_env(work)
    run: dict = {}
    # The browser is up before the command starts (a newcomer's is): its start is not the app's.
    with chromium(work / "profile") as context:
        page = context.new_page()
        with command_server(command, env, work / "server.log", timeout_s=SEARCH_TIMEOUT_S) as served:
            run["server_up_s"] = round(time.perf_counter() - served.started, 3)
            run["first_page_s"] = round(first_page(page, served), 3)
            run["landing_page"] = page.locator("h1").first.inner_text().strip()
            load_s, message = load_sample(page, timeout_s=LOAD_TIMEOUT_S)
            run["sample_load_s"] = round(load_s, 3)
            run["message"] = message
            if not message.startswith("Sample loaded from"):
                raise AppError(f"the load said: {message}")
            # The load's own figure ("... in N s"): ingesting the files; the rest is the first search's build.
            if found := re.search(r" in (\d+) s:", message):
                run["ingest_s_reported"] = int(found.group(1))
            clock = time.perf_counter()
            open_page(page, "Curate")
            run["open_curate_s"] = round(time.perf_counter() - clock, 3)
            search_run = first_search(page)
            search_run["searches_while_training"] = later_searches(page, served.url, time.perf_counter(),
                                                                     SEARCH_TIMEOUT_S)
    run["first_results_after_load_s"] = search_run.pop("first_results_s")
    run.update(search_run)
    run["store"] = store_counts(env["CURATION_DB"])
    return run


def cli_run(command: str, work: Path) -> dict:
    """``python -m curation quickstart`` on a fresh store, then the app on it and its first search."""
    env = first_run_env(work)
    clock = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "curation", "quickstart"], cwd=ROOT, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=3600)
    out: dict = {"quickstart_s": round(time.perf_counter() - clock, 3), "quickstart_rc": done.returncode}
    if found := re.search(r"first search checked in ([\d.]+) s", done.stdout):
        out["quickstart_first_search_check_s_reported"] = float(found.group(1))
    if done.returncode != 0:
        out["quickstart_output_tail"] = (done.stdout + done.stderr)[-2000:]
        return out
    with chromium(work / "profile") as context, \
            command_server(command, env, work / "server.log", timeout_s=SEARCH_TIMEOUT_S) as served:
        page = context.new_page()
        out["first_page_s"] = round(first_page(page, served), 3)
        out["landing_page"] = page.locator("h1").first.inner_text().strip()
        search_run = first_search(page)
    out["first_results_s"] = search_run.pop("first_results_s")
    out.update(search_run)
    out["store"] = store_counts(env["CURATION_DB"])
    return out


def spread(values: list[float]) -> dict:
    if not values:
        return {}
    return {"min": round(min(values), 3), "median": round(statistics.median(values), 3),
            "max": round(max(values), 3), "runs": [round(v, 3) for v in values]}


def goals(timings: dict) -> dict:
    out = {}
    for name, (timing, target, op) in GOALS.items():
        value = timings.get(timing, {}).get("median")
        met = value is not None and (value <= target if op == "<=" else value >= target)
        out[name] = {"value": value, "target": target, "op": op, "met": met, "of": f"median {timing}"}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = scaffold.parser(__doc__, "first_run")
    parser.add_argument("--runs", type=int, default=3, help="browser runs, each on a fresh store")
    parser.add_argument("--no-cli", action="store_true", help="leave out the CLI path (quickstart, then the app)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="the sample's folder (CURATION_DATA_DIR for the app; default the project's)")
    parser.add_argument("--suggestions-only", type=Path, metavar="STORE", default=None,
                        help="only the Treatment-suggestion figure, on this loaded store (read-only), written into "
                             "--out's existing JSON")
    parser.add_argument("--fast-start", type=Path, default=None, metavar="STORE",
                        help="only the fast-start figures (CLI search / suggest, the matcher's build) on a copy of "
                             "this loaded store, added to --out's other figures")
    parser.add_argument("--fast-start-runs", type=int, default=5, help="timed runs per command")
    parser.add_argument("--restart-only", action="store_true",
                        help="with --fast-start: only restart_to_first_results_s; the other fast-start figures kept")
    parser.add_argument("--load-resume", action="store_true",
                        help="only the load cut by a closed tab and a killed server, finished by the next start "
                             "(bench/_load_resume.py): updates load_resume and its goal in --out")
    parser.add_argument("--first-models", action="store_true",
                        help="only the learned parts after a load, timed through quickstart (bench/_load_resume.py): "
                             "updates first_models and its goal in --out")
    args = parser.parse_args(argv)
    if args.fast_start is not None:
        return fast_start_main(args.fast_start, args.fast_start_runs, args.out, args.restart_only)
    if args.data_dir is not None:
        os.environ["CURATION_DATA_DIR"] = str(args.data_dir.resolve())
    data_dir = load_settings().data_dir
    if args.suggestions_only is not None:
        return suggestions_only(args.out, args.suggestions_only, data_dir)
    if args.load_resume or args.first_models:
        from bench._load_resume import update_results

        return update_results(args.out, data_dir, resume=args.load_resume, models=args.first_models)
    if not CHROMIUM.exists():
        print(f"no Chromium at {CHROMIUM}: apt-get install chromium", file=sys.stderr)
        return 2
    files = find_sample(data_dir)
    if not files:
        print(f"no sample files under {data_dir}; pass --data-dir", file=sys.stderr)
        return 2
    command = readme_first_command()

    started = time.perf_counter()
    load_before = os.getloadavg()
    runs: list[dict] = []
    failures: list[str] = []
    cli: dict = {}
    suggestions, suggestion_goal = {}, {}
    with tempfile.TemporaryDirectory(prefix="bench-first-run-") as tmp:
        for n in range(args.runs):
            try:
                runs.append(browser_run(command, Path(tmp) / f"run-{n}"))
                print(f"run {n}: {json.dumps(runs[-1])}", flush=True)
            except (PlaywrightError, AppError, RuntimeError) as exc:
                failures.append(f"run {n}: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
                print(failures[-1], file=sys.stderr, flush=True)
        if not args.no_cli:
            try:
                cli = cli_run(command, Path(tmp) / "cli")
            except (PlaywrightError, AppError, RuntimeError) as exc:
                failures.append(f"cli: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
            print(f"cli: {json.dumps(cli)}", flush=True)
            if cli.get("quickstart_rc") == 0:
                db = Path(first_run_env(Path(tmp) / "cli")["CURATION_DB"])
                suggestions, suggestion_goal = first_run_suggestions(db, data_dir)
    load_after = os.getloadavg()

    names = ("first_page_s", "sample_load_s", "first_results_after_load_s", "server_up_s", "open_curate_s",
             "variant_enter_to_results_s")
    timings = {name: spread([r[name] for r in runs if name in r]) for name in names}
    timings["total"] = round(time.perf_counter() - started, 1)
    last = runs[-1] if runs else {}
    result = {
        "date": scaffold.now(),
        "params": {
            "command": command,
            "command_source": "README.md: the first line of the first ```bash block, comment cut; run with "
                              "bash -c in the repository's root",
            "environment": "this process's, plus CURATION_DB, CURATION_MODELS_DIR, CURATION_JOBS_DIR, "
                           "CURATION_CACHE_DIR, CURATION_BACKUPS_DIR (a fresh temporary folder per run) and "
                           "STREAMLIT_SERVER_PORT (a free port); nothing else",
            "data_dir": str(data_dir),
            "sample_files": [f.label for f in files],
            "runs": args.runs,
            "query": list(QUERY),
            "first_page_s": "command start → first page drawn (script finished, nothing stale) with the "
                            "sidebar's Curator field; Chromium already running, the address opened as soon as "
                            "the server answers /_stcore/health (server_up_s)",
            "sample_load_s": "click on 'Load the sample' → 'Sample loaded from' shown (ingesting every file, "
                             "then building the matcher and the BM25 index for the first search)",
            "first_results_after_load_s": "on Curate after the load: start typing BRAF in Gene (its search "
                                          "runs), then V600E → the pair's query line and first result link drawn",
            "browser": f"{CHROMIUM} (headless), viewport {VIEWPORT['width']}x{VIEWPORT['height']}, "
                       + " ".join(CHROMIUM_ARGS),
            "server": "the README's command as written: streamlit run app.py with .streamlit/config.toml "
                      "(127.0.0.1, headless) and Streamlit's defaults (file watcher on), same machine as "
                      "the browser",
        },
        "machine": {
            **scaffold.machine("cpus"),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in load_after],
            **scaffold.machine("python", "platform"),
        },
        "counts": {
            "runs_timed": len(runs),
            "failures": failures,
            "abstracts_loaded": last.get("store", {}).get("documents"),
            "kb_records_loaded": last.get("store", {}).get("kb_records"),
            "synonyms_loaded": last.get("store", {}).get("synonyms"),
            "files": len(files),
            "results_shown": last.get("results"),
            "results_with_marks": last.get("results_with_marks"),
        },
        "timings_s": timings,
        "runs": runs,
        "cli": cli,
        "suggestions": suggestions,
        "goals": {**goals(timings), **suggestion_goal},
    }
    result["notes"] = notes(result)
    previous = scaffold.read(args.out)
    if "fast_start" in previous:  # measured by --fast-start, kept with its goals
        result["fast_start"] = previous["fast_start"]
        result["goals"].update(fast_start_goals(previous["fast_start"]))
    for section, goal_name in SEPARATE_SECTIONS.items():  # measured by --load-resume / --first-models: kept too
        if section in previous:
            result[section] = previous[section]
            if goal_name in previous.get("goals", {}):
                result["goals"][goal_name] = previous["goals"][goal_name]
    scaffold.write(args.out, result, echo={"timings_s": timings, "goals": result["goals"], "cli": cli})
    return 1 if failures or not runs else 0


def suggestions_only(out: Path, db: Path, data_dir: Path) -> int:
    """The Treatment-suggestion figure alone, on a loaded store, written into ``out``'s JSON (the other figures
    kept as they are)."""
    figures, goal = first_run_suggestions(db, data_dir)
    scaffold.write(out, {**figures, "date": scaffold.now(), "load_average": [round(x, 2) for x in os.getloadavg()]},
                   section="suggestions", goals=goal, echo={"precision": figures["precision"], "goals": goal})
    return 0


def fast_start_main(store: Path, runs: int, out: Path, restart_only: bool = False) -> int:
    """Measure the fast-start figures and write them into ``out`` beside its other figures and goals
    (``restart_only``: the restarts, the other fast-start figures kept as they are)."""
    if not store.exists():
        print(f"no store at {store}: build one with python -m curation quickstart --db {store}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-fast-start-") as tmp:
        figures = fast_start(store, Path(tmp), runs, restart_only)
    result = scaffold.read(out)
    date = scaffold.now()
    if restart_only:
        kept = result.get("fast_start", {})
        figures = {**kept, "restart_to_first_results_s": {"date": date, "store": str(store),
                                                          "models_copied": figures["models_copied"],
                                                          "load_average_before": figures["load_average_before"],
                                                          "load_average_after": figures["load_average_after"],
                                                          **figures["restart_to_first_results_s"]}}
        date = kept.get("date", date)
        restarts = figures["restart_to_first_results_s"]
        result["notes"] = [n for n in result.get("notes", []) if not n.startswith("Restarts (--restart-only")] + [
            f"Restarts (--restart-only, {restarts['date']}): p50 {restarts['p50']} s, p95 {restarts['p95']} s over "
            f"{len(restarts['runs'])} runs; uptime's load average {restarts['load_average_before']} before, "
            f"{restarts['load_average_after']} after (2 cores shared with other work)."]
    result["fast_start"] = {"date": date, **{k: v for k, v in figures.items() if k != "date"}}
    result["goals"] = {**result.get("goals", {}), **fast_start_goals(figures)}
    scaffold.write(out, result, echo=result["goals"])
    return 0


def notes(result: dict) -> list[str]:
    """Where the time goes, from the figures of this run."""
    out = []
    runs = result["runs"]
    if runs:
        up = statistics.median(r["server_up_s"] for r in runs)
        page = statistics.median(r["first_page_s"] - r["server_up_s"] for r in runs)
        out.append(f"First page: the server answers {up:.1f} s after the command starts (median); the first page's "
                   f"script run takes the other ~{page:.1f} s (imports, the fresh store, the rerun that leaves "
                   "Streamlit's legacy pages/ mode).")
    ingest = [r["ingest_s_reported"] for r in runs if "ingest_s_reported" in r]
    if ingest:
        build = statistics.median(r["sample_load_s"] - r["ingest_s_reported"] for r in runs if "ingest_s_reported" in r)
        out.append(f"'Load the sample': the load reported {statistics.median(ingest):.0f} s itself (its message, "
                   f"median: the files, the annotation and what the first search needs); the other ~{build:.0f} s "
                   "of the click-to-message time are the page's.")
    cli = result["cli"]
    if cli.get("first_results_s") is not None:
        out.append(f"CLI path: quickstart {cli['quickstart_s']:.0f} s (with its training steps unless --no-train; "
                   f"its own first-search check {cli.get('quickstart_first_search_check_s_reported', float('nan')):.1f}"
                   f" s), then the app's first search on that store {cli['first_results_s']:.1f} s (a new server "
                   "process reads the matcher the quickstart kept).")
    return out


if __name__ == "__main__":
    sys.exit(main())
