"""Durability on the real-size store: backup cost, recovery cost, commit cost, and a kill -9 campaign.

Usage::

    python -m bench.backup [--data-dir D] [--kills 20] [--decisions 2000] [--wal-trials 40]
                           [--journal-kills 10] [--double-faults 20] [--out bench/results/backup.json]

Builds a temporary store from the real data exactly as the README's "Data" section does (CIViC
2018 + 2026, BioRED, BC5CDR, HoC: 3,476 abstracts), adds curators' decisions through
``curation.store.decisions.record_decision`` (half with an answer, so half also write a KB record), then measures:

- ``record_decision`` latency (each is one committed, fdatasync-ed transaction), and with
  ``strace`` when it is installed, how many fdatasync calls one decision makes;
- ``backup_store`` on the open store: seconds, bytes, alone and while another thread records
  decisions (and those decisions' latency meanwhile); ``backup_due`` when not due; ``verify_backup``;
- ``CHECKPOINT`` after one decision (what a more frequent checkpoint would cost);
- ``recover_store`` on a copy whose store file is damaged (restores the backup); then 16 bytes of a
  WAL holding 200 decisions inverted at random places: how often DuckDB refuses to open (and what
  ``recover`` gets back), how often it opens silently, and how many decisions that silently loses;
  and the same WAL cut short at random places (what a full disk can leave);
- a double fault (``--double-faults``, bench/_recovery_figures.py): 60 decisions in the WAL, backed up while
  a write is in flight; the WAL and the journal segment both cut at random places; the notice must count
  exactly the decisions missing and name that backup;
- a kill -9 campaign: a child process records decisions on the real-size store and prints each id
  after ``record_decision`` returned; it is SIGKILLed after a random number of acks, the store is
  reopened and every acknowledged decision looked up;
- kills between a decision's journal line and its COMMIT (``--journal-kills``, bench/_kill_campaign.py): the
  decision is put back and the notice must call it "recovered, never confirmed", never "had been told";
- the same for the app (``--app-kills``, bench/_app_restart.py): a real ``streamlit run app.py`` on that
  store, decisions clicked in headless Chromium, the server SIGKILLed and started again at once; timed
  from the restart: the first page drawn, and the first search's results shown.

Writes one JSON with date, params, environment, store counts, the figures and ``goals`` (name → value,
target, op, met; each computed from this run).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import duckdb

from bench import _scaffold as scaffold
from bench._app_restart import FIRST_PAGE_TARGET_S, app_kill_campaign
from bench._backup_timing import ms_summary, timed_decision
from bench._kill_campaign import journal_commit_kills, kill_campaign
from bench._recovery_figures import double_fault_trials, recovery_figures
from bench._scaffold import goal
from curation.ops.backup import backup_due, backup_store, verify_backup
from curation.store.base import stats
from curation.store.opening import open_store
from curation.workflows.ingestion import ingest_corpus, ingest_kb

ROOT = Path(__file__).resolve().parent.parent


def build_store(data_dir: Path, path: Path) -> dict[str, float]:
    """The README's ingest commands, through the same functions the CLI calls."""
    started = time.perf_counter()
    con = open_store(path)
    civic = data_dir / "civic"
    for tsv in (civic / "civic_evidence_2018-05_v1schema.tsv", civic / "civic_evidence_2026-05.tsv"):
        ingest_kb(con, "civic", tsv)
    for pubtator in [*sorted((data_dir / "biored").glob("*.PubTator")),
                     *sorted((data_dir / "bc5cdr").glob("*.PubTator.txt"))]:
        ingest_corpus(con, "pubtator", pubtator)
    ingest_corpus(con, "jsonl", data_dir / "hoc" / "hoc_abstracts.jsonl")
    con.close()
    return {"ingest_s": round(time.perf_counter() - started, 2)}


def fdatasyncs_per_decision(db: Path, decisions: int = 50) -> float | None:
    """fdatasync calls per record_decision, counted by strace in a child process (None without strace)."""
    if not shutil.which("strace"):
        return None
    code = ("import sys; from curation.schemas import PO\n"
            "from curation.grades import Grade\n"
            "from curation.store.decisions import record_decision\n"
            "from curation.store.opening import open_store\n"
            f"con = open_store({str(db)!r}); con.execute('CHECKPOINT')\n"
            "pmid = con.execute('SELECT min(pmid) FROM documents').fetchall()[0][0]\n"
            "sys.stderr.write('BEGIN\\n'); sys.stderr.flush()\n"
            f"for i in range({decisions}):\n"
            "    record_decision(con, 'strace', PO, {'Gene': f'S{i}'}, pmid, Grade.PARTIAL)\n"
            "sys.stderr.write('END\\n'); sys.stderr.flush()\n"
            "import os; os._exit(0)\n")
    trace = subprocess.run(
        ["strace", "-f", "-e", "trace=fsync,fdatasync,write", sys.executable, "-c", code],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=300,
    ).stderr
    window = trace[trace.index("BEGIN"): trace.rindex("END")]
    return round(len(re.findall(r"\b(?:fdatasync|fsync)\(", window)) / decisions, 2)


def backup_figures(db: Path, folder: Path, decisions: int, pmids: list[str]) -> dict[str, object]:
    con = open_store(db)
    alone = []
    for _ in range(5):
        started = time.perf_counter()
        made = backup_store(con, folder, keep=3)
        alone.append(time.perf_counter() - started)
    started = time.perf_counter()
    problems = verify_backup(made)
    verify_s = time.perf_counter() - started
    started = time.perf_counter()
    for _ in range(1000):
        backup_due(folder, 30)
    due_us = (time.perf_counter() - started) * 1000

    latencies: list[float] = []
    stop = threading.Event()

    def write() -> None:
        cursor = con.cursor()
        i = decisions
        while not stop.is_set():
            latencies.append(timed_decision(cursor, i, pmids))
            i += 1

    writer = threading.Thread(target=write)
    writer.start()
    time.sleep(0.5)
    under_load = []
    for _ in range(5):
        started = time.perf_counter()
        loaded = backup_store(con.cursor(), folder, keep=3)
        under_load.append(time.perf_counter() - started)
    stop.set()
    writer.join()
    checkpoint_ms = []
    for i in range(20):
        timed_decision(con, 10_000_000 + i, pmids)
        started = time.perf_counter()
        con.execute("CHECKPOINT")
        checkpoint_ms.append((time.perf_counter() - started) * 1000)
    con.close()
    return {
        "method": "ATTACH + one transaction of COPY FROM DATABASE from the open connection, CHECKPOINT first",
        "bytes": made.manifest["bytes"],
        "store_bytes": db.stat().st_size,
        "seconds_alone": [round(s, 3) for s in alone],
        "seconds_while_writing": [round(s, 3) for s in under_load],
        "decision_ms_during_backups": ms_summary(latencies),
        "decisions_during_backups": len(latencies),
        "rows_in_last_backup_while_writing": loaded.counts["decisions"],
        "verify_s": round(verify_s, 3),
        "verify_problems": problems,
        "backup_due_not_due_us": round(due_us, 1),
        "checkpoint_after_one_decision_ms": ms_summary(checkpoint_ms),
    }


def durability_goals(report: dict) -> dict[str, dict[str, object]]:
    """The kill -9 part's goals: no acknowledged decision lost (the writer's and the app's kills), and the
    app's first page within 5 s of a restart (p95 over the app's kills)."""
    app = report.get("app_kill_9", {})
    goals = {"kill9_lost": goal(report["kill_9"]["lost"] + app.get("lost", 0), 0, "<=")}
    # notices about the journal that were untrue (a kill between journal and commit; a double fault)
    checked = [report[part] for part in ("journal_commit_kill", "double_fault") if part in report]
    if checked:
        goals["journal_notices_untrue"] = goal(
            sum(part.get("kills", part.get("trials", 0)) - part["messages_true"] for part in checked), 0, "<=")
    if app.get("first_page_s", {}).get("n"):
        goals["restart_to_first_page_s_p95"] = goal(app["first_page_s"]["p95"], FIRST_PAGE_TARGET_S, "<=")
    return goals


def main(argv: list[str] | None = None) -> int:
    parser = scaffold.parser(__doc__, "backup", data_dir=True)
    parser.add_argument("--kills", type=int, default=20, help="kill -9 of a process recording decisions")
    parser.add_argument("--app-kills", type=int, default=20,
                        help="kill -9 of the app server, each followed by a timed restart; 0: none")
    parser.add_argument("--decisions", type=int, default=2000, help="decisions recorded before measuring")
    parser.add_argument("--wal-trials", type=int, default=40, help="random corruptions of a WAL of 200 decisions")
    parser.add_argument("--journal-kills", type=int, default=10,
                        help="kills between a decision's journal line and its COMMIT")
    parser.add_argument("--double-faults", type=int, default=20, help="the WAL and the journal both cut")
    args = parser.parse_args(argv)
    if not (args.data_dir / "civic").is_dir():
        raise SystemExit(f"real data not found at {args.data_dir} (set CURATION_DATA_DIR or --data-dir)")
    with tempfile.TemporaryDirectory(prefix="bench-backup-") as scratch:
        work = Path(scratch)
        db = work / "curation.duckdb"
        report: dict[str, object] = {
            "date": scaffold.now(),
            "params": {"kills": args.kills, "app_kills": args.app_kills, "decisions": args.decisions,
                       "wal_trials": args.wal_trials, "journal_kills": args.journal_kills,
                       "double_faults": args.double_faults},
            "environment": {"duckdb": duckdb.__version__, **scaffold.machine("python", "platform", "cpus")},
        }
        report["build"] = build_store(args.data_dir, db)
        con = open_store(db)
        pmids = [row[0] for row in con.execute("SELECT pmid FROM documents ORDER BY pmid").fetchall()]
        report["record_decision_ms"] = ms_summary([timed_decision(con, i, pmids) for i in range(args.decisions)])
        report["store"] = {k: v for k, v in stats(con).items() if isinstance(v, int)}
        con.close()
        report["fdatasync_per_decision"] = fdatasyncs_per_decision(db)
        print(f"store built: {report['store']}; record_decision {report['record_decision_ms']}", flush=True)
        folder = work / "backups" / "curation"
        report["backup"] = backup_figures(db, folder, args.decisions, pmids)
        print(f"backup: {report['backup']}", flush=True)
        report["recovery"] = recovery_figures(db, folder, work, pmids, args.wal_trials)
        print(f"recovery: {report['recovery']}", flush=True)
        if args.double_faults:
            report["double_fault"] = double_fault_trials(db, work, pmids, args.double_faults)
            print(f"double fault: {report['double_fault']}", flush=True)
        report["kill_9"] = kill_campaign(db, args.kills)
        print(f"kill -9: {report['kill_9']}", flush=True)
        if args.journal_kills:
            report["journal_commit_kill"] = journal_commit_kills(db, args.journal_kills)
            print(f"kill between journal and commit: {report['journal_commit_kill']}", flush=True)
        if args.app_kills:
            report["app_kill_9"] = app_kill_campaign(db, work, args.app_kills)
            print(f"kill -9 of the app: {report['app_kill_9']}", flush=True)
    recovery = report["recovery"]
    report["goals"] = {
        # decisions missing after the product opened (or recovered) a store with a damaged or cut WAL, and
        # nobody was told: every trial, with the decision journal beside the store as deployed
        "corrupt_wal_silent_losses": goal(
            recovery["corrupt_wal"]["product"]["silent_lost_decisions"]
            + recovery["truncated_wal"]["product"]["silent_lost_decisions"], 0, "<="),
    }
    report["goals"] = {**report.get("goals", {}), **durability_goals(report)}  # each part adds its own
    scaffold.write(args.out, report)
    untrue = report["goals"].get("journal_notices_untrue", {}).get("met", True) is False
    return 0 if report["kill_9"]["lost"] == 0 and report.get("app_kill_9", {}).get("lost", 0) == 0 and not untrue else 1


if __name__ == "__main__":
    raise SystemExit(main())
