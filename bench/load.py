"""Concurrent curators while a retraining job runs: every acknowledged decision must be stored.

Usage::

    python bench/load.py [--sessions 4,8] [--decisions 250] [--out bench/results/load.json]
    python bench/load.py --small --sessions 2 --decisions 5    # the test fixtures, seconds

Each session is a Streamlit ``AppTest`` of ``app.py`` (the real pages, the real callbacks,
one shared store connection as in a running server), in its own thread, with its own curator
name and partial relation. A session clicks a grade button on one of its results, the app
re-runs, and the click is **acknowledged** when the app shows its confirmation toast
("PMID …: …") with no error. Latency is click → the re-run finished (callback, search,
rendering), what a curator waits for. Meanwhile a real retraining job (worker process) runs;
the run records whether it was still running at the start and at the end.

Afterwards the store is read: **stored** counts the decision rows of the run's curators
(superseded ones included: each click is a row). **errors** counts exceptions, error
messages and clicks without a toast.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
GRADES = ("complete", "partial", "not_relevant")


def load_store(db: Path, data_dir: Path, small: bool) -> dict:
    from curation import store
    from curation.ingestion import ingest_corpus, ingest_kb

    con = store.open_store(db)
    if small:
        fixtures = ROOT / "tests" / "fixtures"
        ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
        ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    else:
        ingest_kb(con, "civic", data_dir / "civic" / "civic_evidence_2026-05.tsv")
        for path in sorted((data_dir / "biored").glob("*.PubTator")) + sorted((data_dir / "bc5cdr").glob("*.txt")):
            ingest_corpus(con, "pubtator", path)
        ingest_corpus(con, "jsonl", data_dir / "hoc" / "hoc_abstracts.jsonl")
    counts = store.stats(con)
    con.close()
    return {"documents": counts["documents"], "kb_records": counts["kb_records"]}


def relations(con, sessions: int, min_hits: int = 10) -> list[dict[str, str]]:
    """Gene–variant pairs of the KB whose query finds abstracts, one per session (repeating if few)."""
    from curation import store
    from curation.schemas import PO
    from pages.common import retriever

    engine = retriever(con)
    mode = "hybrid" if engine.dense is not None else "bm25"
    pairs = []
    for record in store.list_kb_records(con, "PO"):
        values = {"Gene": record.get("Gene"), "Variant": record.get("Variant")}
        if values in pairs or not all(values.values()):
            continue
        if len(engine.search(PO, values, mode=mode, k=20).hits) >= min_hits:
            pairs.append(values)
        if len(pairs) >= sessions:
            break
    if not pairs:
        raise SystemExit("no KB relation finds abstracts")
    return [pairs[i % len(pairs)] for i in range(sessions)]


def seed_decisions(con, values: dict[str, str]) -> None:
    from curation import store
    from curation.schemas import PO
    from pages.common import retriever

    engine = retriever(con)
    mode = "hybrid" if engine.dense is not None else "bm25"
    for n, hit in enumerate(engine.search(PO, values, mode=mode, k=10).hits):
        store.record_decision(con, "load-seed", PO, values, hit.pmid, GRADES[n % len(GRADES)])


def session(index: int, run_id: str, values: dict, decisions: int, out: dict) -> None:
    from streamlit.testing.v1 import AppTest

    curator = f"load-{run_id}-{index}"
    latencies, acknowledged, errors, messages = [], 0, 0, []
    try:
        at = AppTest.from_file(APP, default_timeout=600)
        at.session_state["curator"] = curator
        for entity_type, value in values.items():
            at.session_state[f"pick_{entity_type}"] = value
        at.run()
        pmids = [b.key.split("_", 1)[1] for b in at.button if b.key and b.key.startswith("complete_")]
        if not pmids:
            raise RuntimeError(f"session {index}: no results for {values}")
        for n in range(decisions):
            pmid, grade = pmids[n % len(pmids)], GRADES[n % len(GRADES)]
            at.button(key=f"{grade}_{pmid}").click()
            clock = time.perf_counter()
            at.run()
            latencies.append(time.perf_counter() - clock)
            toast = any(f"PMID {pmid}:" in t.value for t in at.toast)
            if at.exception or at.error or not toast:
                errors += 1
                messages.append(str(at.exception or [e.value for e in at.error] or "no confirmation")[:300])
            else:
                acknowledged += 1
    except Exception as exc:  # a session that breaks counts its remaining clicks as errors
        errors += decisions - acknowledged - errors
        messages.append(f"{type(exc).__name__}: {exc}"[:300])
    out[index] = {"curator": curator, "acknowledged": acknowledged, "errors": errors, "latencies": latencies,
                  "messages": messages[:5]}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run(sessions: int, decisions: int, retrain: bool, small: bool = False) -> dict:
    from curation import retraining, store
    from curation.config import load_settings
    from pages.common import connection

    con = connection()
    run_id = f"{sessions}s{int(time.time())}"
    targets = relations(con, sessions, min_hits=1 if small else 10)
    job = None
    if retrain:
        seed_decisions(con, targets[0])  # the job trains on the KB and the decisions made so far
        request = retraining.RetrainRequest("PO", epochs=1000, max_steps=1_000_000, batch_size=8, max_seq_length=128)
        job = retraining.start_retrain(con, request, load_settings())
        deadline = time.time() + 600
        while time.time() < deadline:  # wait until it trains, so the load meets a busy worker
            progress = retraining.read_progress(job)
            if progress is not None and progress.stage == "running":
                break
            job = retraining.poll_job(con, store.get_job(con, job.job_id))
            if job.finished:
                raise SystemExit(f"the retraining job ended before the load: {job.message}")
            time.sleep(1)
    running_at_start = bool(job and retraining.worker_alive(job.pid))
    results: dict[int, dict] = {}
    threads = [threading.Thread(target=session, args=(i, run_id, targets[i], decisions, results))
               for i in range(sessions)]
    started = time.time()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.time() - started
    running_at_end = bool(job and retraining.worker_alive(job.pid))
    if job is not None:
        retraining.cancel_job(con, store.get_job(con, job.job_id))
        retraining.wait_for(con, store.get_job(con, job.job_id), interval_s=1.0, timeout_s=300)
    curators = [r["curator"] for r in results.values()]
    stored = con.execute(
        f"SELECT count(*) FROM decisions WHERE curator IN ({', '.join('?' * len(curators))})", curators
    ).fetchall()[0][0]
    latencies = [x for r in results.values() for x in r["latencies"]]
    acknowledged = sum(r["acknowledged"] for r in results.values())
    return {
        "sessions": sessions,
        "decisions_per_session": decisions,
        "acknowledged": acknowledged,
        "stored": int(stored),
        "errors": sum(r["errors"] for r in results.values()),
        "retrain_running": running_at_start and running_at_end,
        "latency_ms": {"p50": round(1000 * percentile(latencies, 0.5), 1),
                       "p95": round(1000 * percentile(latencies, 0.95), 1),
                       "max": round(1000 * max(latencies), 1) if latencies else None},
        "wall_s": round(wall, 1),
        "decisions_per_s": round(acknowledged / wall, 2) if wall else None,
        "error_messages": [m for r in results.values() for m in r["messages"]][:10],
        "load_average_1min": os.getloadavg()[0],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", default="4,8", help="comma-separated session counts, one run each")
    parser.add_argument("--decisions", type=int, default=250, help="decisions per session")
    parser.add_argument("--small", action="store_true", help="the test fixtures instead of the real data")
    parser.add_argument("--no-retrain", action="store_true", help="no retraining job during the load")
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "load.json")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="load-bench-"))
    os.environ.update({"CURATION_DB": str(work / "load.duckdb"), "CURATION_MODELS_DIR": str(work / "models"),
                       "CURATION_JOBS_DIR": str(work / "jobs"), "CURATION_BACKUPS_DIR": str(work / "backups")})
    from curation.config import load_settings

    data_dir = args.data_dir or load_settings().data_dir
    clock = time.time()
    counts = load_store(work / "load.duckdb", data_dir, args.small)
    load_s = time.time() - clock
    runs = [run(int(n), args.decisions, not args.no_retrain, args.small) for n in args.sessions.split(",") if n]
    for r in runs:
        print(f"{r['sessions']} sessions: acknowledged {r['acknowledged']}, stored {r['stored']}, errors "
              f"{r['errors']}, retrain running {r['retrain_running']}, p50 {r['latency_ms']['p50']} ms, "
              f"p95 {r['latency_ms']['p95']} ms", flush=True)
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "params": {"decisions_per_session": args.decisions, "data": "test fixtures" if args.small else "real",
                   "retraining": not args.no_retrain, "cpu_count": os.cpu_count(),
                   "python": platform.python_version(),
                   "sessions": "streamlit.testing AppTest of app.py, one thread each, one shared store"},
        "counts": counts,
        "runs": runs,
        "timings_s": {"load_store": round(load_s, 1)},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(f"wrote {args.out}")
    return 0 if all(r["acknowledged"] == r["stored"] and r["errors"] == 0 for r in runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
