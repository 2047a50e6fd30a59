"""bench/scale.py end to end on a tiny size: the JSON it writes and the invariants of its figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_scale_bench_tiny_run(tmp_path):
    out = tmp_path / "scale.json"
    subprocess.run(
        [sys.executable, "-m", "bench.scale", "--vectors", "3000", "--documents", "400", "--queries", "30",
         "--out", str(out)],
        cwd=ROOT, check=True, capture_output=True, text=True, timeout=600,
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
    # the per-million and 36M figures are computed from the run's own measurements
    flat = report["per_million"]["faiss_flat"]
    assert flat["measured_at"] == 3000 and flat["ram_mb"] > 0 and flat["recall@50"] == 1.0
    rows = report["sizing_36m"]["rows"]
    assert rows["faiss_flat"]["ram_gb"] == pytest.approx(flat["ram_mb"] * 36 / 1024, rel=0.01)
    assert rows["faiss_ivfpq_sq8_refine"]["ram_gb"] < rows["faiss_flat"]["ram_gb"]


def test_sizing_scales_measured_figures_and_extrapolates_the_product_path():
    from bench._scale_sizing import scale_goals, sizing

    report = {
        "milvus_synthetic": {"vectors": 200_000, "systems": {"milvus_lite_hnsw": {
            "file_mb": 400.0, "build_s": 100.0,
            "latency_ms": {"p95": 3.0}, "recall@50": 0.97}}},
        "product_runs": {"200000": {"latency_ms": {"p95": 100.0}}, "1000000": {"latency_ms": {"p95": 180.0}}},
        "product": {"documents": 1_000_000, "latency_ms": {"p95": 180.0}},
    }
    out = sizing(report, documents=36_000_000)
    hnsw = out["rows"]["milvus_lite_hnsw"]
    # a 400 MB file per 200k = 2,000 MB per million, × 36; Lite's memory is not measured, so no machines either
    assert hnsw["disk_gb"] == pytest.approx(2000 * 36 / 1024, abs=0.1) and "ram_gb" not in hnsw
    assert hnsw["build_hours_one_core"] == pytest.approx(100 * 5 * 36 / 3600, abs=0.1)
    # p95 = 80 + 100 ms per million: a straight line through the two sizes
    assert out["product_p95_ms_per_million"] == 100.0 and out["product_p95_ms_est"] == 3680
    goals = scale_goals(report)
    assert goals["product_path_1m_p95_ms"]["met"] and "ann_10m_recall50" not in goals  # no 10M run, no 10M goal


def test_server_goals_come_from_the_server_sections_and_count_skips_as_missed():
    from bench._scale_server import SERVER_TEST
    from bench._scale_sizing import scale_goals

    server = {"real": {"used_for_top10_overlap": "server_hnsw",
                       "systems": {"server_hnsw": {"top10_overlap_with_faiss_flat": 0.995}}},
              "synthetic": {"200000": {"latency_ms": {"p95": 4.0}, "recall@50": 0.99}}}
    goals = scale_goals({"milvus_server": server, "milvus_server_ci": {"passed": 12, "failed": 0, "skipped": 0}})
    assert goals["milvus_server_top10_overlap"]["met"] and goals["milvus_server_ci"]["value"] == 1
    assert "milvus_server_p95_ms_1m" not in goals  # measured at 200k only: no 1M goal is claimed
    server["synthetic"]["1000000"] = {"latency_ms": {"p95": 60.0}, "recall@50": 0.97}
    goals = scale_goals({"milvus_server": server, "milvus_server_ci": {"passed": 12, "failed": 0, "skipped": 3}})
    assert not goals["milvus_server_p95_ms_1m"]["met"] and goals["milvus_server_recall50_1m"]["met"]
    assert goals["milvus_server_ci"]["value"] == 0  # a skipped server test is not a server test that ran
    # which tests of the two files are the server half
    assert SERVER_TEST.search("test_flat_collection_returns_faiss_flat_answers[server]")
    assert SERVER_TEST.search("test_activation_swaps_between_backends[po-server]")
    assert SERVER_TEST.search("test_a_server_that_stops_is_refused_then_recovers")
    assert not SERVER_TEST.search("test_missing_collection_and_unreachable_server_are_named")
    assert not SERVER_TEST.search("test_activation_swaps_between_backends[po-milvus]")
