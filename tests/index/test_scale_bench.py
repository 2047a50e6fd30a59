"""bench/scale.py end to end on a tiny size: the JSON it writes and the invariants of its figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "scale.py"


@pytest.mark.slow
def test_scale_bench_tiny_run(tmp_path):
    out = tmp_path / "scale.json"
    subprocess.run(
        [sys.executable, str(SCRIPT), "--vectors", "3000", "--documents", "400", "--queries", "30", "--out", str(out)],
        check=True, capture_output=True, text=True, timeout=600,
    )
    report = json.loads(out.read_text())

    assert {"date", "params", "counts", "systems", "latency_ms", "timings_s", "memory_mb", "goal"} <= set(report)
    assert report["counts"]["vectors"] == 3000 and report["counts"]["dimension"] == 384
    systems = report["systems"]
    # Flat is the ground truth, so its recall is exact; every ANN row has a recall and a latency.
    assert systems["flat"]["recall@50"] == 1.0
    assert {"hnsw_M32_ef64", "ivfpq_nl1024_m48_np16", "ivfpq_nl1024_m48_np16_refine_flat_x4"} <= set(systems)
    for name, system in systems.items():
        if name == "bm25":
            continue
        assert 0.0 <= system["recall@50"] <= 1.0, name
        latency = report["latency_ms"][name]
        assert 0 < latency["p50"] <= latency["p95"], name
    # HNSW recall does not drop when the search widens.
    assert systems["hnsw_M32_ef256"]["recall@50"] >= systems["hnsw_M32_ef32"]["recall@50"]
    # Every PO query names a gene and variant that occur together, so BM25 always finds something,
    # and the memory-mapped index answers exactly as the one just built.
    assert systems["bm25"]["queries_with_hits"] == 1.0
    assert systems["bm25"]["mmap_same_hits"] is True
    assert set(report["goal"]["met_by"]) <= set(systems)
