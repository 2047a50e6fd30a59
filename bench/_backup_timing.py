"""Helpers shared by the backup benchmark's parts: one timed decision, and a summary of many timings."""

from __future__ import annotations

import math
import statistics
import time

from curation.grades import Grade
from curation.schemas import PO
from curation.store.decisions import record_decision


def timed_decision(con, i: int, pmids: list[str]) -> float:
    """Milliseconds of the ``i``-th synthetic decision (every other one complete with an answer)."""
    answer = f"drug{i}" if i % 2 == 0 else ""
    started = time.perf_counter()
    record_decision(con, f"curator{i % 4}", PO, {"Gene": f"GENE{i % 50}", "Variant": "V600E"},
                    pmids[i % len(pmids)], Grade.COMPLETE if answer else Grade.PARTIAL, answer=answer)
    return (time.perf_counter() - started) * 1000


def ms_summary(values: list[float]) -> dict[str, float]:
    """n, p50, p95 (nearest rank) and max of timings, in their unit (milliseconds here; seconds for restarts)."""
    ordered = sorted(values)
    if not ordered:
        return {"n": 0}
    return {
        "n": len(ordered),
        "p50": round(statistics.median(ordered), 2),
        "p95": round(ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)], 2),  # nearest rank
        "max": round(ordered[-1], 2),
    }
