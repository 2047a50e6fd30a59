"""The curator's path measured through the page's own code, on a real store.

* :func:`sample_store`: ``python -m curation quickstart`` into a fresh folder (the sample of the data
  directory, annotated at ingest: the concept index the page searches).
* :func:`curator_latency`: :func:`curation.retrieval.result_rows.curate_search` (link → concept search →
  highlighted top 20, what pages/curate.py calls) per query, p50 / p95 of the best of ``repeats`` runs.
* :func:`first_search_after_start`: a fresh process does what a restarted server does before its first
  answer: open the store, build the matcher and the query linker, open the served retriever, search.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

_FIRST_SEARCH = r"""
import json, sys, time
t0 = time.perf_counter()
from pathlib import Path
from curation.store.base import list_schemas
from curation.store.opening import open_store
from curation.workflows import serving
from curation.retrieval.result_rows import curate_search, default_linker
from curation.versions.serving import serving_key
t1 = time.perf_counter()
con = open_store(sys.argv[1], read_only=True)
schema = next(s for s in list_schemas(con) if s.name == "PO")
matcher = serving.build_matcher(con)
t2 = time.perf_counter()
linker = default_linker(con, matcher)
engine = serving.open_served(con, Path(sys.argv[2]), serving_key(con, "PO"))
result = curate_search(con, engine, matcher, schema, {"Gene": "BRAF", "Variant": "V600E"}, linker=linker)
t3 = time.perf_counter()
print(json.dumps({"imports_s": t1 - t0, "matcher_s": t2 - t1, "first_search_s": t3 - t1,
                  "rows": len(result.rows)}))
"""


def _env(folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"CURATION_DB": str(folder / "store.duckdb"), "CURATION_MODELS_DIR": str(folder / "models"),
                "CURATION_JOBS_DIR": str(folder / "jobs"), "CURATION_CACHE_DIR": str(folder / "cache"),
                "CURATION_BACKUPS_DIR": str(folder / "backups"), "PYTHONPATH": str(ROOT)})
    return env


def sample_store(data_dir: Path, folder: Path) -> tuple[Path, float]:
    """(the store, seconds): the sample loaded by ``python -m curation quickstart``."""
    folder.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "curation", "quickstart", "--data-dir", str(data_dir)], cwd=ROOT,
                   env=_env(folder), check=True, capture_output=True, text=True)
    return folder / "store.duckdb", time.perf_counter() - start


def first_search_after_start(folder: Path) -> dict[str, float]:
    """Seconds a fresh process takes from having imported the app's modules to the first ranked, highlighted
    page (store opened, matcher and linker built, served retriever opened)."""
    out = subprocess.run([sys.executable, "-c", _FIRST_SEARCH, str(folder / "store.duckdb"), str(folder / "models")],
                         cwd=ROOT, env=_env(folder), check=True, capture_output=True, text=True)
    return {k: round(float(v), 3) for k, v in json.loads(out.stdout.strip().splitlines()[-1]).items()}


def curator_latency(folder: Path, queries: Sequence[Mapping[str, str]], repeats: int = 3,
                    warmup: int = 3) -> dict[str, object]:
    """p50 / p95 milliseconds of curate_search (top 20, hybrid mode as the page's default) over ``queries``."""
    from curation.retrieval.result_rows import curate_search, default_linker
    from curation.store.base import list_schemas
    from curation.store.opening import open_store
    from curation.workflows import serving
    from curation.workflows.serving import serving_key

    con = open_store(folder / "store.duckdb", read_only=True)
    schema = next(s for s in list_schemas(con) if s.name == "PO")
    matcher = serving.build_matcher(con)
    linker = default_linker(con, matcher)
    engine = serving.open_served(con, folder / "models", serving_key(con, "PO"))

    def one(values: Mapping[str, str]) -> int:
        return len(curate_search(con, engine, matcher, schema, values, k=20, linker=linker).rows)

    for values in queries[:warmup]:
        one(values)
    best, rows = [], []
    for values in queries:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            n = one(values)
            times.append((time.perf_counter() - start) * 1000)
        best.append(min(times))
        rows.append(n)
    con.close()
    return {"p50": round(float(np.percentile(best, 50)), 2), "p95": round(float(np.percentile(best, 95)), 2),
            "queries": len(queries), "mean_rows": round(float(np.mean(rows)), 2), "engine": engine.version}
