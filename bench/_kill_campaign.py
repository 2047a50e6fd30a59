"""The backup benchmark's kill -9 part: a writer process killed at random moments.

No acknowledged decision may be lost; every reopen is timed.
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
