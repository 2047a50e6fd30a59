"""Concurrent curators in real browsers while a retraining job runs: every acknowledged decision is stored.

Usage::

    python -m bench.load [--sessions 4,8] [--decisions 250] [--out bench/results/load.json]
    python -m bench.load --small --sessions 2 --decisions 6    # the test fixtures, a minute

A real ``streamlit run app.py`` serves a store built from the real data (CIViC + BioRED +
BC5CDR, as bench/app.py). Each session is its own headless Chromium (own Playwright, own
thread, own Streamlit session over the server's websocket; run under ``nice`` — the browsers stand
for curators' own machines, so they leave this machine's CPU to the server and the retraining
worker): it types its curator name and its partial relation (a KB gene–variant pair for which the
Curate page's own search finds at least 10 abstracts), then clicks the grade buttons of its results
in turn — "Complete evidence", then "Partial evidence", then "Not relevant" on each abstract, and
round again. A click is
**acknowledged** when the abstract's card shows "<curator>: <grade>" (the app writes the
decision in the button's callback, before the rerun that draws that caption); **latency** is
click → caption, what a curator waits for. A click not confirmed within the timeout, or an
exception the page shows, is an **error**.

Before the server starts, a real retraining job (worker process, KB + decisions so far) is
started on the store; the server re-attaches it when it starts (as after an app restart).
**retrain running** says its worker was alive when the clicking began and when it ended.
After the run the server is stopped, the job cancelled, and the store read: **stored** counts
the run's decision rows (each click is a row; a later grade of the same abstract supersedes,
never overwrites).

The server's own share: the server runs with ``CURATION_TIMING_LOG`` set, so the app logs, per
decision, the time from the start of the button's callback (the write) to the end of the script run
that draws its caption (curation/workflows/timing.py). **server ms** is that time; the click time
adds the browser (event, websocket, drawing) and the rerun request's wait for the server.

Goals (``goals`` in the JSON, computed from the run): ``server_decision_ms_p95_4_sessions`` <= 100,
``lost_or_errors`` (acknowledged but not stored, plus errors, over all runs) <= 0.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

from bench import _scaffold as scaffold
from bench._scaffold import goal
from curation.grades import GRADE_LABELS, GRADES

ROOT = Path(__file__).resolve().parent.parent
# The browsers stand for curators' own machines: under nice, they leave the CPU to the server they load
# (which still shares it with the retraining worker, as in production).
BROWSER_NICENESS = 19
SHM = Path("/dev/shm")


def load_store(db: Path, data_dir: Path, small: bool) -> dict:
    from bench._server import build_store
    from curation.store.base import stats
    from curation.store.opening import open_store
    from curation.workflows.ingestion import ingest_corpus, ingest_kb

    if not small:
        counts = build_store(db, data_dir)
        return {"documents": counts["documents"], "kb_records": counts["kb_records"]}
    fixtures = ROOT / "tests" / "fixtures"
    con = open_store(db)
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    counts = stats(con)
    con.close()
    return {"documents": counts["documents"], "kb_records": counts["kb_records"]}


def served_search(con):
    """The PMIDs the Curate page's search (the served concept search, its default ranking) finds for a PO
    gene–variant pair, as a function of the pair and k, over ``con``."""
    from curation.retrieval.relation_search import SearchOptions, search_relation
    from curation.schemas import PO
    from curation.workflows.search import Searcher

    searcher = Searcher(con)
    engine, _ = searcher.engine(PO)
    mode = "hybrid" if engine.dense is not None else "bm25"

    def found(values: dict[str, str], k: int = 20) -> list[str]:
        result = search_relation(engine, searcher.linker, searcher.matcher, searcher.source, searcher.documents,
                                 PO, values, SearchOptions(mode=mode, k=k))
        return [hit.pmid for hit in result.hits]

    return found


def relations(con, sessions: int, min_hits: int) -> list[dict[str, str]]:
    """Gene–variant pairs of the KB for which the Curate page's search finds ``min_hits`` abstracts, one per
    session (repeating when there are fewer)."""
    from curation.store.kb import list_kb_records

    found = served_search(con)
    pairs: list[dict[str, str]] = []
    for record in list_kb_records(con, "PO"):
        values = {"Gene": record.get("Gene"), "Variant": record.get("Variant")}
        if values in pairs or not all(values.values()):
            continue
        if len(found(values)) >= min_hits:
            pairs.append(values)
        if len(pairs) >= sessions:
            break
    if not pairs:
        raise SystemExit("no KB relation finds abstracts")
    return [pairs[i % len(pairs)] for i in range(sessions)]


def start_job(db: Path, target: dict[str, str]) -> tuple[int, int]:
    """Seed a few decisions (so there is something to train on) and start a long retraining job."""
    from curation.config import load_settings
    from curation.jobs import retraining
    from curation.learning.holdout import DECISION_SHARE
    from curation.learning.splits import gene_key, gene_part, unit_hash
    from curation.schemas import PO
    from curation.store.decisions import record_decision
    from curation.store.opening import open_store

    def trainable(gene: str) -> bool:  # decisions on dev / test / held-out genes are never trained on
        key = gene_key(PO, gene)
        return gene_part(key) == "train" and unit_hash(key, 13, "decisions") >= DECISION_SHARE

    con = open_store(db)
    try:
        pmids = served_search(con)(target, 10)
        # The target's abstracts judged under the target and under genes whose decisions are trained on (the
        # small store's KB may have none: the worker needs pairs to keep busy during the load).
        genes = [target["Gene"]] + [g for g in ("KRAS", "BRCA1", "ALK", "MET", "PIK3CA", "TP53") if trainable(g)][:2]
        for gene in genes:
            values = {**target, "Gene": gene}
            for n, pmid in enumerate(pmids):
                record_decision(con, "load-seed", PO, values, pmid, GRADES[n % 3])
        request = retraining.RetrainRequest(  # no early stopping: the worker stays busy for the whole load
            "PO", epochs=1000, max_steps=1_000_000, batch_size=8, max_seq_length=128, patience=0
        )
        job = retraining.start_retrain(con, request, load_settings())
    finally:
        con.close()
    deadline = time.time() + 600
    progress_file = Path(job.job_dir) / retraining.PROGRESS
    while time.time() < deadline:  # until it trains, so the load meets a busy worker
        progress = json.loads(progress_file.read_text()) if progress_file.exists() else {}
        # Training: "running" between evaluations, "evaluating epoch" after each epoch (here an epoch is one step,
        # so the worker spends most of its time evaluating and "running" shows only now and then).
        if progress.get("state") in ("running", "evaluating epoch"):
            return job.job_id, job.pid
        if not retraining.worker_alive(job.pid):
            log = Path(job.job_dir) / "worker.log"
            tail = log.read_text(errors="replace")[-1500:] if log.exists() else "(no worker.log)"
            raise SystemExit(f"the retraining worker ended before the load; {log} ends:\n{tail}")
        time.sleep(1)
    raise SystemExit("the retraining worker did not start training within 10 minutes")


def stop_job(db: Path, job_id: int) -> str:
    from curation.jobs import retraining
    from curation.store.jobs import get_job
    from curation.store.opening import open_store

    con = open_store(db)
    try:
        retraining.recover_jobs(con)  # the server stopped: re-attach the job
        job = retraining.cancel_job(con, get_job(con, job_id))
        job = retraining.wait_for(con, job, interval_s=1.0, timeout_s=300)
        return job.state
    finally:
        con.close()


def session(index: int, url: str, run_id: str, values: dict, decisions: int, profile: Path, timeout_s: float,
            start: threading.Barrier, out: dict) -> None:
    from bench._browser import _DECIDED, _wait, chromium, open_app, result_pmids, search, set_curator

    curator = f"load-{run_id}-{index}"
    latencies, acknowledged, errors, messages = [], 0, 0, []
    try:
        with chromium(profile, niceness=BROWSER_NICENESS) as context:
            page = context.new_page()
            open_app(page, url, timeout_s=600)
            set_curator(page, curator)
            search(page, values["Gene"], values["Variant"], timeout_s=600)
            pmids = result_pmids(page)[:10]
            if not pmids:
                raise RuntimeError(f"no results for {values}")
            start.wait(timeout=1800)
            for n in range(decisions):
                pmid = pmids[n % len(pmids)]
                grade = GRADES[(n // len(pmids)) % len(GRADES)]
                label = GRADE_LABELS[grade]
                # The button of this run (a card being redrawn may still show its previous one, stale).
                button = page.locator(f'.st-key-{grade}_{pmid}:not([data-stale="true"]) button')
                try:
                    button.wait_for(state="visible", timeout=timeout_s * 1000)
                    clock = time.perf_counter()
                    button.click(timeout=timeout_s * 1000)
                    _wait(page, _DECIDED, [pmid, f"{curator}: {label}"], timeout_s, polling="raf")
                    latencies.append(time.perf_counter() - clock)
                    acknowledged += 1
                except Exception as exc:  # Playwright's timeout, or an exception the page shows (AppError)
                    errors += 1
                    messages.append(f"{type(exc).__name__}: {exc}"[:600])
    except Exception as exc:  # a session that breaks counts its remaining clicks as errors
        start.abort()
        errors = decisions - acknowledged
        messages.append(f"{type(exc).__name__}: {exc}"[:300])
    out[index] = {"curator": curator, "acknowledged": acknowledged, "errors": errors, "latencies": latencies,
                  "messages": messages[:5]}


def server_times(log: Path, curators: list[str]) -> dict[str, object]:
    """The server's time per decision of ``curators``, from the app's timing log (ms: p50, p95, max)."""
    from curation.workflows.timing import read_log

    rows = [r for r in read_log(log) if r.get("event") == "decision" and r.get("curator") in set(curators)] \
        if log.exists() else []

    def summary(key: str) -> dict[str, float | None]:
        values = [r[key] for r in rows]
        return {"p50": round(percentile(values, 0.5), 1) if values else None,
                "p95": round(percentile(values, 0.95), 1) if values else None,
                "max": round(max(values), 1) if values else None}

    return {"logged": len(rows), "server_ms": summary("server_ms"), "callback_ms": summary("callback_ms"),
            "run_ms": summary("run_ms")}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run(work: Path, sessions: int, decisions: int, retrain: bool, small: bool, timeout_s: float) -> dict:
    from bench._server import app_server
    from curation.jobs import retraining
    from curation.store.opening import open_store

    db = work / "load.duckdb"
    con = open_store(db)
    targets = relations(con, sessions, min_hits=1 if small else 10)
    con.close()
    run_id = f"{sessions}s{int(time.time())}"
    job_id, pid = start_job(db, targets[0]) if retrain else (None, None)
    results: dict[int, dict] = {}
    # The browsers' profiles (cache, local storage: many small synced writes) in memory when the machine has a
    # tmpfs: like their CPU, their disk stands for the curators' machines, not the server's.
    profiles = Path(tempfile.mkdtemp(prefix="load-profiles-", dir=SHM)) if SHM.is_dir() else work
    timing_log = work / f"timing-{run_id}.jsonl"
    os.environ["CURATION_TIMING_LOG"] = str(timing_log)  # the server logs its own time per decision
    try:
        with app_server(db, work / "models", work / f"server-{run_id}.log", timeout_s=600) as url:
            start = threading.Barrier(sessions + 1)
            threads = [
                threading.Thread(target=session, args=(i, url, run_id, targets[i], decisions,
                                                       profiles / f"profile-{run_id}-{i}", timeout_s, start, results))
                for i in range(sessions)
            ]
            for thread in threads:
                thread.start()
            try:
                start.wait(timeout=1800)  # every session shows its results
            except threading.BrokenBarrierError:
                pass  # a session failed before clicking: its clicks count as errors
            running_at_start = bool(pid and retraining.worker_alive(pid))
            started = time.time()
            for thread in threads:
                thread.join()
            wall = time.time() - started
            running_at_end = bool(pid and retraining.worker_alive(pid))
    finally:
        os.environ.pop("CURATION_TIMING_LOG", None)
        if profiles != work:
            shutil.rmtree(profiles, ignore_errors=True)
        job_state = stop_job(db, job_id) if job_id else ""
    con = open_store(db)
    curators = [r["curator"] for r in results.values()]
    marks = ", ".join("?" * len(curators))
    stored = con.execute(f"SELECT count(*) FROM decisions WHERE curator IN ({marks})", curators).fetchall()[0][0]
    con.close()
    latencies = [x for r in results.values() for x in r["latencies"]]
    acknowledged = sum(r["acknowledged"] for r in results.values())
    server = server_times(timing_log, curators)
    return {
        "sessions": sessions,
        "decisions_per_session": decisions,
        "acknowledged": acknowledged,
        "stored": int(stored),
        "errors": sum(r["errors"] for r in results.values()),
        "retrain_running": running_at_start and running_at_end,
        "retrain_job_after_cancel": job_state,
        "latency_ms": {"p50": round(1000 * percentile(latencies, 0.5), 1),
                       "p95": round(1000 * percentile(latencies, 0.95), 1),
                       "max": round(1000 * max(latencies), 1) if latencies else None},
        "server_decision_ms": server["server_ms"],  # callback start → end of the run that draws the caption
        "server_callback_ms": server["callback_ms"],  # the write alone (record_judgement)
        "server_run_ms": server["run_ms"],  # the script run after it
        "server_decisions_logged": server["logged"],
        "wall_s": round(wall, 1),
        "decisions_per_s": round(acknowledged / wall, 2) if wall else None,
        "error_messages": [m for r in results.values() for m in r["messages"]][:10],
        "load_average_1min": os.getloadavg()[0],
    }


def load_goals(runs: list[dict]) -> dict[str, dict[str, object]]:
    """Nothing lost or refused in any run; the server's own p95 per decision with 4 sessions (when run)."""
    goals = {"lost_or_errors": goal(sum(max(0, r["acknowledged"] - r["stored"]) + r["errors"] for r in runs), 0, "<=")}
    four = next((r for r in runs if r["sessions"] == 4), None)
    if four is not None and four["server_decision_ms"]["p95"] is not None:
        goals["server_decision_ms_p95_4_sessions"] = goal(four["server_decision_ms"]["p95"], 100, "<=")
    return goals


def main(argv: list[str] | None = None) -> int:
    parser = scaffold.parser(__doc__, "load")
    parser.add_argument("--sessions", default="4,8", help="comma-separated session counts, one run each")
    parser.add_argument("--decisions", type=int, default=250, help="decisions per session")
    parser.add_argument("--small", action="store_true", help="the test fixtures instead of the real data")
    parser.add_argument("--no-retrain", action="store_true", help="no retraining job during the load")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds a click may take to be confirmed")
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--note", action="append", default=[], help="a line for the JSON's notes (why this run)")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="load-bench-"))
    os.environ.update({"CURATION_DB": str(work / "load.duckdb"), "CURATION_MODELS_DIR": str(work / "models"),
                       "CURATION_JOBS_DIR": str(work / "jobs"), "CURATION_BACKUPS_DIR": str(work / "backups")})
    from curation.config import load_settings

    data_dir = args.data_dir or load_settings().data_dir
    clock = time.time()
    counts = load_store(work / "load.duckdb", data_dir, args.small)
    load_s = time.time() - clock
    load_before = [round(x, 2) for x in os.getloadavg()]
    runs = []
    for n in [int(n) for n in args.sessions.split(",") if n]:
        runs.append(run(work, n, args.decisions, not args.no_retrain, args.small, args.timeout))
        r = runs[-1]
        print(f"{r['sessions']} sessions: acknowledged {r['acknowledged']}, stored {r['stored']}, errors "
              f"{r['errors']}, retrain running {r['retrain_running']}, p50 {r['latency_ms']['p50']} ms, "
              f"p95 {r['latency_ms']['p95']} ms; server p50 {r['server_decision_ms']['p50']} ms, "
              f"p95 {r['server_decision_ms']['p95']} ms ({r['server_decisions_logged']} logged)", flush=True)
    report = {
        "date": scaffold.now(),
        "params": {"decisions_per_session": args.decisions, "data": "test fixtures" if args.small else "real",
                   "retraining": not args.no_retrain, "click_timeout_s": args.timeout,
                   **scaffold.machine("cpu_count", "python"),
                   "sessions": "headless Chromium each (own Playwright, own thread) against one streamlit run app.py"},
        "counts": counts,
        "runs": runs,
        "timings_s": {"load_store": round(load_s, 1)},
        "goals": load_goals(runs),
        "notes": [*args.note, f"Load average (uptime) {load_before} before the runs; each run's 1-minute figure at its "
                  "end is in its row. The browsers and the retraining worker run under nice."
                  + (f" {args.decisions} decisions per session, fewer than the default 250." if args.decisions < 250
                     else "")],
    }
    scaffold.write(args.out, report)
    print(f"work folder {work}")
    return 0 if all(r["acknowledged"] == r["stored"] and r["errors"] == 0 for r in runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
