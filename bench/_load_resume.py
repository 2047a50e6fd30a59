"""A load of the sample cut half way (tab closed, server killed), finished by the next start; and a clean load.

Called by ``bench/first_run.py`` (``--load-resume``), whose JSON gets the figures under ``load_resume``:

* **interrupted_load_recovered** (1 or 0): the README's server on a fresh store; "Load the sample" clicked in headless
  Chromium; once the load is in its :data:`CUT_AT_STEP`-th file (or past its files) the tab is closed, the load left
  to run without any session for :data:`TAB_CLOSED_S` s, and the server's process group killed (SIGKILL). A new server
  on the same store: its first run finds the unfinished load and finishes it in the background (the sidebar says so,
  and the Curate page says the index is still being built meanwhile). 1 when no step is left pending and the store's
  counts (abstracts, KB records, synonyms, gold mentions, annotations, annotated abstracts, relation pairs) equal
  those of a clean ``python -m curation quickstart --no-train`` on another fresh store."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from bench._browser import chromium, open_app, sidebar_text
from bench._server import ROOT, _launch, _stop, _wait_healthy, first_run_env, free_port
from curation.store.base import stats
from curation.store.loads import unfinished_load
from curation.store.opening import open_store

CUT_AT_STEP = 3  # the load is cut while it reads its third file (two are in)
TAB_CLOSED_S = 5.0  # how long the load runs with its tab closed before the server is killed
RESUME_TIMEOUT_S = 3600
COUNTED = ("kb_records", "documents", "synonyms", "mentions", "annotations", "annotated_documents")
FINISHED = "finishing a load that had stopped"


def _server(env: dict[str, str], log: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    process = _launch(port, env, log)
    url = f"http://127.0.0.1:{port}"
    _wait_healthy(process, url, log, 300)
    return process, url


def store_contents(db: str | Path) -> dict:
    """The counts a load writes, and the steps an unfinished load has left (opened read-write: a killed server's
    write-ahead log is replayed as the app's next start would)."""
    con = open_store(db)
    try:
        counts = stats(con)
        out = {name: int(counts[name]) for name in COUNTED}
        out["relation_pairs"] = int(con.execute("SELECT count(*) FROM relation_pairs").fetchone()[0])
        left = unfinished_load(con)
        out["steps_left"] = [":".join(filter(None, (s.kind, Path(s.path).name if s.path else s.fmt)))
                             for s in left.pending] if left else []
        return out
    finally:
        con.close()


def _wait_sidebar(page, pattern: re.Pattern | str, timeout_s: float) -> tuple[str, float]:
    """Poll the sidebar until it matches; its text and when (``time.perf_counter``)."""
    deadline = time.perf_counter() + timeout_s
    while time.perf_counter() < deadline:
        text = sidebar_text(page)
        if (pattern.search(text) if isinstance(pattern, re.Pattern) else pattern in text):
            return text, time.perf_counter()
        time.sleep(0.5)
    raise TimeoutError(f"the sidebar never showed {pattern!r}; it shows: {sidebar_text(page)[-500:]}")


def _cut_pattern() -> re.Pattern:
    """The sidebar's progress once the load is in its :data:`CUT_AT_STEP`-th file or past the files (building the
    matcher, annotating): a small sample reads its later files between two refreshes of the sidebar."""
    return re.compile(rf"(?:[{CUT_AT_STEP}-9]|\d\d+)/\d+ · \S+|building the dictionaries' matcher|annotating the "
                      "abstracts")


def interrupted_load(folder: Path, data_dir: Path) -> dict:
    """The load cut by a closed tab and a killed server, then the next start; what it left and what it ended with."""
    # The load alone (its training steps are measured apart): the same work as quickstart --no-train.
    env = {**os.environ, **first_run_env(folder / "interrupted"), "CURATION_DATA_DIR": str(data_dir),
           "CURATION_TRAIN_AFTER_LOAD": "0"}
    out: dict = {}
    with chromium(folder / "profile") as context:
        process, url = _server(env, folder / "server-cut.log")
        try:
            page = context.new_page()
            open_app(page, url, timeout_s=300)
            clicked = time.perf_counter()
            page.get_by_role("button", name="Load the sample").first.click()
            text, at = _wait_sidebar(page, _cut_pattern(), 900)
            out["cut_in_step"] = _cut_pattern().search(text).group(0)
            out["tab_closed_s"] = TAB_CLOSED_S
            out["cut_after_s"] = round(at - clicked, 1)
            page.close()  # the tab closed mid-load: the load goes on without any session
            time.sleep(TAB_CLOSED_S)
            os.killpg(process.pid, signal.SIGKILL)  # then the server dies (a power cut, a kill -9)
            process.wait(timeout=60)
        finally:
            _stop(process)
        out["at_cut"] = store_contents(env["CURATION_DB"])
        restarted = time.perf_counter()
        process, url = _server(env, folder / "server-resume.log")
        try:
            page = context.new_page()
            open_app(page, url, timeout_s=300)
            text, _ = _wait_sidebar(page, "Loading the sample in the background", 300)
            out["notice_after_restart"] = " ".join(text.split())[-400:]
            text, done = _wait_sidebar(page, FINISHED, RESUME_TIMEOUT_S)
            out["restart_to_load_finished_s"] = round(done - restarted, 1)
            out["summary"] = next((line for line in text.splitlines() if FINISHED in line), "")[:600]
        finally:
            _stop(process)
    out["after_resume"] = store_contents(env["CURATION_DB"])
    return out


def clean_load(folder: Path, data_dir: Path) -> dict:
    """``python -m curation quickstart --no-train`` on a fresh store: its counts and wall time."""
    env = {**os.environ, **first_run_env(folder / "clean"), "CURATION_DATA_DIR": str(data_dir)}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "curation", "quickstart", "--no-train"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"quickstart failed ({done.returncode}): {(done.stdout + done.stderr)[-1500:]}")
    return {"seconds": round(time.perf_counter() - started, 1), **store_contents(env["CURATION_DB"])}


def measure(folder: Path, data_dir: Path) -> dict:
    """Both loads, and ``interrupted_load_recovered``: 1 when the resumed store equals the clean one."""
    load_before = os.getloadavg()
    interrupted = interrupted_load(folder, data_dir)
    clean = clean_load(folder, data_dir)
    resumed = interrupted["after_resume"]
    recovered = not resumed["steps_left"] and all(resumed[k] == clean[k] for k in (*COUNTED, "relation_pairs"))
    return {
        "interrupted_load_recovered": int(recovered),
        "cut_left_pending": interrupted["at_cut"]["steps_left"],
        "interrupted": interrupted,
        "clean": clean,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "vocabularies": os.environ.get("CURATION_VOCABULARIES", "all"),  # the installed vocabularies loaded too
        "how": __doc__.split("\n\n", 1)[1].strip(),
    }


def first_models(folder: Path, data_dir: Path) -> dict:
    """``python -m curation quickstart`` with its training steps on a fresh store: wall and CPU seconds of the
    whole run and of each step (its own "[N s]"), from the command's start to the learned parts active (the
    relation scorer, the base encoder version, the shipped recogniser with the corpus annotated by it)."""
    import resource

    env = {**os.environ, **first_run_env(folder / "models"), "CURATION_DATA_DIR": str(data_dir)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_before = os.getloadavg()
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "curation", "quickstart"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=7200)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"quickstart failed ({done.returncode}): {(done.stdout + done.stderr)[-1500:]}")
    loaded = re.search(r"Sample loaded from .*? in (\d+) s", done.stdout)
    trained = next((line for line in done.stdout.splitlines() if line.startswith("relation scorer")), "")
    steps = [float(s) for s in re.findall(r"\[(\d+) s\]", trained)]
    return {
        "models_active_after_load_s_cpu": round(wall, 1),  # the command's start → the three learned parts active
        "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
        "load_reported_s": int(loaded.group(1)) if loaded else None,
        "relation_scorer_s": steps[0] if steps else None,
        "base_version_s": steps[1] if len(steps) > 1 else None,
        "recogniser_s": steps[2] if len(steps) > 2 else None,  # its job, started first, runs beside the other two
        "recogniser_active": int("recogniser job" in trained and "succeeded" in trained.split("recogniser job")[-1]),
        "trained": trained[:1200],
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "vocabularies": os.environ.get("CURATION_VOCABULARIES", "all"),
        **store_contents(env["CURATION_DB"]),
    }


def models_summary(figures: dict) -> str:
    """One paragraph for docs/BENCHMARKS.md from :func:`first_models`' figures."""
    return (f"`quickstart` with its training steps, on a fresh store: {figures['models_active_after_load_s_cpu']} s "
            f"from the command's start to the relation scorer, the base encoder version and the shipped recogniser "
            f"active ({'the recogniser active' if figures.get('recogniser_active') else 'the recogniser NOT active'}), "
            f"{figures['cpu_s']} s of CPU (the load {figures['load_reported_s']} s; then, each from its own start: "
            f"the relation scorer {figures['relation_scorer_s']} s with the re-scoring of the stored pairs, the base "
            f"version {figures['base_version_s']} s, the recogniser's job {figures.get('recogniser_s')} s, started "
            f"first and annotating beside the other two; load average {figures['load_average_before']} on the 2 "
            f"shared cores, installed vocabularies: {figures.get('vocabularies', 'all')}).")


def update_results(out: Path, data_dir: Path, *, resume: bool = True, models: bool = False) -> int:
    """Measure (``resume``: the cut load; ``models``: the learned parts after a load) and put the figures into
    ``out`` (``load_resume`` / ``first_models`` and their goals), keeping what else it holds."""
    import json
    import tempfile

    from bench import _scaffold as scaffold

    result: dict = {}  # what this run measured; merged into ``out`` as it stands when the run ends
    goals = result.setdefault("goals", {})
    ok = True
    with tempfile.TemporaryDirectory(prefix="bench-load-resume-") as tmp:
        if resume:
            figures = {**measure(Path(tmp), data_dir), "date": scaffold.now()}
            result["load_resume"] = figures
            value = figures["interrupted_load_recovered"]
            goals["interrupted_load_recovered"] = scaffold.goal(value, 1, ">=",
                                                                of="load_resume.interrupted_load_recovered")
            ok = ok and value >= 1
            print(json.dumps(figures, indent=2), flush=True)
        if models:
            figures = {**first_models(Path(tmp), data_dir), "date": scaffold.now()}
            figures["summary"] = models_summary(figures)
            result["first_models"] = figures
            value = figures["models_active_after_load_s_cpu"]
            goals["models_active_after_load_s_cpu"] = scaffold.goal(
                value, 900.0, "<=",
                of="first_models.models_active_after_load_s_cpu (relation scorer, base version, shipped recogniser)")
            print(json.dumps(figures, indent=2), flush=True)
    goals = result.pop("goals")
    scaffold.write(out, {**scaffold.read(out), **result}, goals=goals)
    return 0 if ok else 1
