"""The server's own time per decision, written to a log when ``CURATION_TIMING_LOG`` names one.

A click on a grade button costs the server two things: the button's callback (the decision is
written, :func:`curation.workflows.curate.record_judgement`) and the script run that follows it and
draws the card's "<curator>: <grade>" caption. The browser's click time adds the websocket, the
rerun request waiting for a free thread, and drawing; bench/load.py reads this log to tell the two
apart. Nothing is written, and nothing changes, when the setting is unset.

One JSON line per decision: ``{"event": "decision", "curator", "pmid", "callback_ms", "run_ms",
"server_ms", "at"}`` (``server_ms`` = from the callback's start to the end of that script run).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from curation.config import Settings

_LOCK = threading.Lock()  # sessions run in threads of one server: one line at a time


def clock() -> float:
    """The timer the log's durations are measured with (seconds, monotonic)."""
    return time.perf_counter()


def log_decision(settings: Settings, curator: str, pmid: str, started: float, callback_end: float) -> None:
    """Append one decision's server time (``started``, ``callback_end``: :func:`clock` values) when the log is on.

    Called at the end of the script run that follows the decision's callback.
    """
    if settings.timing_log is None:
        return
    now = clock()
    line = {
        "event": "decision",
        "curator": curator,
        "pmid": pmid,
        "callback_ms": round((callback_end - started) * 1000, 2),
        "run_ms": round((now - callback_end) * 1000, 2),
        "server_ms": round((now - started) * 1000, 2),
        "at": time.time(),
    }
    with _LOCK, open(settings.timing_log, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")


def read_log(path: Path) -> list[dict]:
    """The lines of a timing log (a torn last line, from a killed server, is skipped)."""
    rows = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue
    return rows
