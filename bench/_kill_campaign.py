"""The backup benchmark's kill -9 part: a writer process killed at random moments, and one killed between a
decision's journal line and its COMMIT.

No acknowledged decision may be lost; every reopen is timed. A decision killed between its journal line and
its COMMIT is put back, and the notice must say it was never confirmed (never that curators had been told).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from bench._backup_timing import ms_summary
from curation.store.opening import open_store
from curation.store.reconcile import acknowledge_notice, open_notices

ROOT = Path(__file__).resolve().parent.parent

WRITER = """
import sys
from curation.store.decisions import record_decision
from curation.store.opening import open_store
from curation.grades import Grade
from curation.schemas import PO
db, start = sys.argv[1], int(sys.argv[2])
con = open_store(db)
pmids = [r[0] for r in con.execute("SELECT pmid FROM documents ORDER BY pmid LIMIT 500").fetchall()]
print("ready", flush=True)
for i in range(start, start + 100000):
    answer = f"drug{i}" if i % 2 == 0 else ""
    d = record_decision(con, f"curator{i % 4}", PO, {"Gene": f"GENE{i % 50}", "Variant": "V600E"},
                        pmids[i % len(pmids)], Grade.COMPLETE if answer else Grade.PARTIAL, answer=answer)
    print("ack", d.decision_id, flush=True)
"""


def kill_campaign(db: Path, kills: int, seed: int = 7) -> dict[str, object]:
    chooser = random.Random(seed)
    acked: list[int] = []
    lost: set[int] = set()
    reopen = []
    for round_ in range(kills):
        child = subprocess.Popen([sys.executable, "-c", WRITER, str(db), str(round_ * 100_000)], cwd=ROOT,
                                 env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, text=True)
        target, seen = chooser.randint(1, 80), 0
        for line in child.stdout:
            if line.startswith("ack "):
                acked.append(int(line.split()[1]))
                seen += 1
                if seen >= target:
                    break
        os.kill(child.pid, signal.SIGKILL)
        acked += [int(line.split()[1]) for line in child.stdout if line.startswith("ack ") and line.endswith("\n")]
        child.wait()
        started = time.perf_counter()
        con = open_store(db)
        reopen.append(time.perf_counter() - started)
        present = {row[0] for row in con.execute("SELECT decision_id FROM decisions").fetchall()}
        con.close()
        missing = [d for d in acked if d not in present]
        if missing:  # counted (the goal kill9_lost), and the run ends with status 1
            lost.update(missing)
            print(f"acknowledged decisions lost after kill {round_ + 1}: {missing[:10]}", file=sys.stderr)
    # reopen_s holds milliseconds, as its ms_summary says (the key is kept so that older JSONs read the same).
    return {"kills": kills, "acknowledged": len(acked), "lost": len(lost), "lost_ids": sorted(lost)[:20],
            "reopen_s": ms_summary([s * 1000 for s in reopen])}


KILLED_BEFORE_COMMIT = """
import os, sys
from curation.grades import Grade
from curation.schemas import PO
from curation.store import decisions, journaled
from curation.store.opening import open_store
db, start, before = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
con = open_store(db)
pmids = [r[0] for r in con.execute("SELECT pmid FROM documents ORDER BY pmid LIMIT 500").fetchall()]
write = journaled.Writer.write
def write_then_die(self, op, data):
    write(self, op, data)
    os._exit(9)  # the journal line is synced; the store's COMMIT never runs
for i in range(start, start + before + 1):
    if i == start + before:
        journaled.Writer.write = write_then_die
    d = decisions.record_decision(con, f"curator{i % 4}", PO, {"Gene": f"GENE{i % 50}", "Variant": "V600E"},
                                  pmids[i % len(pmids)], Grade.PARTIAL)
    print("ack", d.decision_id, flush=True)
"""


def journal_commit_kills(db: Path, kills: int, seed: int = 13) -> dict[str, object]:
    """A writer records 0-5 decisions, then dies after its next decision's journal line was synced and before
    the store's COMMIT, ``kills`` times. After each, the store is opened as the app does: every acknowledged
    decision must be there, the killed one put back, and the notices must say exactly that: one notice of
    kind ``unconfirmed`` naming it "recovered, never confirmed", none saying curators had been told."""
    chooser = random.Random(seed)
    acked: list[int] = []
    lost: set[int] = set()
    trials = []
    con = open_store(db)
    seen = {row[0] for row in con.execute("SELECT decision_id FROM decisions").fetchall()}
    for notice in open_notices(con):  # earlier parts' notices are not this part's
        acknowledge_notice(con, notice.notice_id, "bench")
    con.close()
    for round_ in range(kills):
        child = subprocess.run([sys.executable, "-c", KILLED_BEFORE_COMMIT, str(db), str(50_000_000 + round_ * 100),
                                str(chooser.randint(0, 5))], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                               capture_output=True, text=True, timeout=600)
        acks = [int(line.split()[1]) for line in child.stdout.splitlines() if line.startswith("ack ")]
        acked += acks
        con = open_store(db)
        present = {row[0] for row in con.execute("SELECT decision_id FROM decisions").fetchall()}
        notices = open_notices(con)
        for notice in notices:
            acknowledge_notice(con, notice.notice_id, "bench")
        con.close()
        lost.update(d for d in acked if d not in present)
        restored = sorted(present - seen - set(acks))  # in the store, never acknowledged: the killed one
        seen = present
        told = " ".join(n.message for n in notices)
        true = (child.returncode == 9 and len(restored) == 1 and [n.kind for n in notices] == ["unconfirmed"]
                and f"(decision {restored[0]})" in told and "recovered, never confirmed" in told
                and "had been told" not in told)
        trials.append({"rc": child.returncode, "acked": len(acks), "restored": restored,
                       "notices": [n.kind for n in notices], "message_true": true,
                       **({} if true else {"told": told[:400], "stderr": child.stderr[-400:]})})
    return {"kills": kills, "acknowledged": len(acked), "lost": len(lost),
            "restored_never_confirmed": sum(len(t["restored"]) == 1 for t in trials),
            "messages_true": sum(t["message_true"] for t in trials),
            "messages_wrong": [t for t in trials if not t["message_true"]][:5]}
