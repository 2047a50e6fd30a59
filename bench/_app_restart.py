"""kill -9 of the app server and its restart, timed in a real browser (bench/backup.py's ``app_kill_9``).

:func:`app_kill_campaign`: a real ``streamlit run app.py`` on a store; headless Chromium records decisions
on the Curate page (each acknowledged when its card shows it); the server's process group is SIGKILLed
and a new server spawned at once. Timed from that spawn: the server answering HTTP (``health_s``), the
**first page** (``first_page_s``: Curate's title drawn and its script finished, nothing stale), and the
**first search** (``first_search_s``: BRAF V600E typed, its results shown). The store is opened only at
the end (each restart replays the WAL the killed server left) and every acknowledged decision looked up.
"""

from __future__ import annotations

import os
import random
import signal
import time
from pathlib import Path

from bench._backup_timing import ms_summary
from curation.grades import Grade
from curation.store.opening import open_store

RESTART_QUERY = ("BRAF", "V600E")  # the first search after each restart
FIRST_PAGE_TARGET_S = 5.0  # the goal: the first page within 5 s of a restart (p95)


def app_kill_campaign(db: Path, work: Path, kills: int, seed: int = 17) -> dict[str, object]:
    """``kills`` rounds of: decisions on the Curate page, kill -9 of the server, a timed restart.

    Round 0 is the first start (reported apart as ``first_start_s``, not counted): it fills what a restart
    reuses, the dictionaries' measured exclusions under ``CURATION_CACHE_DIR``. Each round clicks "Complete
    evidence" on 1–4 results (each waited for on its card) before the kill. The last server stops normally.
    """
    from bench._browser import CHROMIUM, chromium, decide, open_app, result_pmids, search, set_curator
    from bench._server import _launch, _stop, _wait_healthy, free_port

    if not CHROMIUM.exists():
        return {"skipped": f"no Chromium at {CHROMIUM}"}
    chooser = random.Random(seed)
    (work / "app-models").mkdir(exist_ok=True)  # empty: BM25 alone, as bench/app.py
    env = {**os.environ, "CURATION_DB": str(db), "CURATION_MODELS_DIR": str(work / "app-models"),
           "CURATION_JOBS_DIR": str(work / "app-jobs"), "CURATION_CACHE_DIR": str(work / "app-cache"),
           "CURATION_BACKUPS_DIR": str(work / "app-backups")}
    acked: list[tuple[str, str]] = []  # (curator, pmid) of every decision a page confirmed
    times: dict[str, list[float]] = {"health_s": [], "first_page_s": [], "first_search_s": [], "search_s": []}
    first_start: dict[str, float] = {}
    loads: list[float] = []
    with chromium(work / "app-profile") as context:
        for round_ in range(kills + 1):
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            log = work / f"app-server-{round_}.log"
            loads.append(os.getloadavg()[0])
            spawned = time.perf_counter()
            server = _launch(port, env, log)
            try:
                if not _wait_healthy(server, url, log, 300):
                    raise SystemExit(f"port {port} was taken; run again")
                healthy = time.perf_counter()
                page = context.new_page()
                open_app(page, url, timeout_s=300)
                drawn = time.perf_counter()
                curator = f"kill{round_}"
                set_curator(page, curator)
                shown: list[float] = []
                search_s = search(page, *RESTART_QUERY, timeout_s=300, shown_at=shown)
                measured = {"health_s": healthy - spawned, "first_page_s": drawn - spawned,
                            "first_search_s": shown[0] - spawned, "search_s": search_s}
                for pmid in result_pmids(page)[: chooser.randint(1, 4)]:
                    decide(page, pmid, curator, timeout_s=120)
                    acked.append((curator, pmid))
                page.close()
                if round_ < kills:
                    os.killpg(server.pid, signal.SIGKILL)  # no shutdown, no checkpoint: the WAL holds them
                    server.wait(timeout=30)
            finally:
                _stop(server)
            if round_ == 0:
                first_start = {name: round(value, 2) for name, value in measured.items()}
            else:
                for name, value in measured.items():
                    times[name].append(value)
            print(f"app round {round_}: " + ", ".join(f"{k} {v:.2f}" for k, v in measured.items()), flush=True)
    con = open_store(db)
    try:
        present = set(con.execute(
            "SELECT curator, pmid FROM decisions WHERE curator LIKE 'kill%' AND grade = ?", [str(Grade.COMPLETE)]
        ).fetchall())
    finally:
        con.close()
    lost = [a for a in acked if a not in present]
    return {
        "kills": kills,
        "query": " ".join(RESTART_QUERY),
        "acknowledged": len(acked),
        "lost": len(lost),
        "lost_decisions": lost[:20],
        "first_start_s": first_start,
        **{name: ms_summary(values) for name, values in times.items()},  # seconds from the new server's spawn
        "per_kill_columns": list(times),
        "per_kill_s": [[round(times[k][i], 2) for k in times] for i in range(len(times["health_s"]))],
        "load_average_1min": {"min": round(min(loads), 2), "max": round(max(loads), 2)},
    }
