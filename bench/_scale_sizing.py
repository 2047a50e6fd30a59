"""The scale benchmark's goals and its per-million and all-of-PubMed sizing, computed from the measured sections."""

from __future__ import annotations

import numpy as np


def scale_goals(report: dict) -> dict:
    """The issue's goals, from whichever sections the JSON holds (a goal whose section never ran is absent)."""
    from bench._benchmark import goal

    goals = {}
    if "milvus" in report:
        system = report["milvus"]["milvus_lite_is_used_for_top10_overlap"]
        goals["milvus_top10_overlap"] = goal(report["milvus"]["systems"][system]["top10_overlap_with_faiss_flat"],
                                             0.99, ">=")
    server = report.get("milvus_server", {})
    if server.get("real"):
        real = server["real"]
        goals["milvus_server_top10_overlap"] = goal(
            real["systems"][real["used_for_top10_overlap"]]["top10_overlap_with_faiss_flat"], 0.99, ">=")
    million = server.get("synthetic", {}).get(str(1_000_000))
    if million:
        goals["milvus_server_p95_ms_1m"] = goal(million["latency_ms"]["p95"], 50, "<=")
        goals["milvus_server_recall50_1m"] = goal(million["recall@50"], 0.95, ">=")
    if "milvus_server_ci" in report:
        ci = report["milvus_server_ci"]
        goals["milvus_server_ci"] = goal(int(ci["passed"] > 0 and not ci["failed"] and not ci["skipped"]), 1, ">=")
    store_runs = report.get("product_store_runs", {})
    if str(1_000_000) in store_runs:
        goals["product_path_1m_store_p95_ms"] = goal(store_runs[str(1_000_000)]["latency_ms"]["p95"], 300, "<=")
    if "product" in report and report["product"]["documents"] >= 1_000_000:
        goals["product_path_1m_p95_ms"] = goal(report["product"]["latency_ms"]["p95"], 300, "<=")
    if report.get("counts", {}).get("vectors", 0) >= 10_000_000:  # only from a run at 10M (a GPU machine's memory)
        approximate = {n: s for n, s in report["systems"].items() if s.get("kind") != "flat"}
        fast = [n for n in approximate if report["latency_ms"][n]["p95"] <= 10] or list(approximate)
        best = max(fast, key=lambda n: approximate[n]["recall@50"])
        goals["ann_10m_recall50"] = goal(approximate[best]["recall@50"], 0.95, ">=")
        goals["ann_10m_p95_ms"] = goal(report["latency_ms"][best]["p95"], 10, "<=")
    return goals


PUBMED = 36_000_000
MACHINE_GIB = 128  # a query node's RAM in the sizing table; half of it for the index, the rest for the process
DAY = 86_400


def per_million(report: dict) -> dict:
    """Measured figures scaled to one million abstracts, per backend and index kind (linear scaling: see SCALING.md).

    FAISS kinds come from the synthetic section (1M vectors: no scaling), Milvus Lite from ``milvus_synthetic``
    (its file and build time; Lite serves inside this process, so no memory figure), BM25 from the 100k documents.
    """
    out: dict = {}
    if "memory_mb" in report and report.get("counts", {}).get("vectors"):
        scale = 1e6 / report["counts"]["vectors"]
        mem, times, lat, systems = report["memory_mb"], report["timings_s"], report["latency_ms"], report["systems"]
        ids = mem["flat"]["ids_file"]
        kinds = {
            "faiss_flat": ("flat", "flat", 0.0, "flat_build", None),
            "faiss_hnsw": ("hnsw_M32", "hnsw_M32_ef128", 0.0, "hnsw_M32_build", None),
            "faiss_ivfpq_sq8_refine": ("ivfpq_nl1024_m48", "ivfpq_nl1024_m48_np16_refine_sq8_x8",
                                       mem.get("refine_store_sq8", {}).get("codes", 0.0), "ivfpq_nl1024_m48_build",
                                       "refine_sq8_build"),
        }
        for name, (index, system, extra, build, build_extra) in kinds.items():
            if index not in mem or system not in lat:
                continue
            out[name] = {
                "ram_mb": round((mem[index]["rss_after_load"] + extra) * scale, 1),
                "disk_mb": round((mem[index]["index_file"] + ids + extra) * scale, 1),
                "build_s": round((times[build] + (times.get(build_extra, 0.0) if build_extra else 0.0)) * scale, 1),
                "p95_ms_at_measured_size": lat[system]["p95"], "recall@50": systems[system]["recall@50"],
                "measured_at": report["counts"]["vectors"], "system": system,
            }
    if "milvus_synthetic" in report:
        m = report["milvus_synthetic"]
        scale = 1e6 / m["vectors"]
        for name, sys_ in m["systems"].items():
            out[name] = {
                "disk_mb": round(sys_["file_mb"] * scale, 1),  # its memory is not separable from the process's
                "build_s": round(sys_["build_s"] * scale, 1), "p95_ms_at_measured_size": sys_["latency_ms"]["p95"],
                "recall@50": sys_["recall@50"], "measured_at": m["vectors"], "system": name,
            }
    runs = report.get("milvus_server", {}).get("synthetic", {})
    if runs:  # the largest size measured on the server process: its memory and data folder are its own
        m = runs[max(runs, key=int)]
        scale = 1e6 / m["vectors"]
        out["milvus_server_hnsw"] = {
            "ram_mb": round(m["server_rss_mb"]["added"] * scale, 1),
            "disk_mb": round(m["server_data_mb"]["added"] * scale, 1),
            "build_s": round((m["insert_s"] + m["seal_and_index_s"]) * scale, 1),
            "p95_ms_at_measured_size": m["latency_ms"]["p95"], "recall@50": m["recall@50"],
            "measured_at": m["vectors"], "system": "milvus_server_hnsw"}
    if "memory_mb" in report and "bm25" in report["memory_mb"] and report.get("counts", {}).get("documents"):
        scale = 1e6 / report["counts"]["documents"]
        out["bm25s"] = {"disk_mb": round(report["memory_mb"]["bm25"]["index_files"] * scale, 1),
                        "build_s": round(report["timings_s"]["bm25_build"] * scale, 1),
                        "p95_ms_at_measured_size": report["latency_ms"].get("bm25_mmap", {}).get("p95"),
                        "measured_at": report["counts"]["documents"], "system": "bm25s (mmap)"}
    return out


def sizing(report: dict, documents: int = PUBMED) -> dict:
    """All of PubMed from the per-million figures: memory, disk, build time, machines; each an estimate (linear)."""
    millions = documents / 1e6
    rows = {}
    for name, f in per_million(report).items():
        row = {"disk_gb": round(f["disk_mb"] * millions / 1024, 1), "build_hours_one_core":
               round(f["build_s"] * millions / 3600, 1)}
        if "ram_mb" in f:
            ram_gb = f["ram_mb"] * millions / 1024
            row.update(ram_gb=round(ram_gb, 1), machines_of_128_gib=max(1, int(-(-ram_gb // (MACHINE_GIB / 2)))))
        if name == "faiss_flat":  # exact search reads every vector: linear in the corpus
            row["p95_ms_est"] = round(f["p95_ms_at_measured_size"] * documents / f["measured_at"], 1)
        rows[name] = row
    out: dict = {"documents": documents, "dimension": report.get("counts", {}).get("dimension", 384),
                 "machine_gib": MACHINE_GIB, "rows": rows}
    runs = report.get("product_runs", {})
    if len(runs) >= 2:  # the served path's p95 against corpus size: a straight line through the measured sizes
        sizes = np.array([float(n) for n in runs])
        p95 = np.array([r["latency_ms"]["p95"] for r in runs.values()])
        slope, intercept = np.polyfit(sizes, p95, 1)
        out["product_p95_ms_est"] = round(float(intercept + slope * documents), 0)
        out["product_p95_ms_per_million"] = round(float(slope * 1e6), 1)
    ingest = report.get("ingest")
    if ingest:
        per_s = ingest["ingestion"]["phases"]["ingest_lenient"]["records_per_s"]
        out["ingest_hours"] = round(documents / per_s / 3600, 1)
        cpu = ingest["encoding"]["runs"]
        best = max(r["abstracts_per_s"] for r in cpu.values())
        out["encode_days_this_cpu"] = round(documents / best / DAY, 0)
        if any(name.startswith("cuda") for name in cpu):
            gpu = max(r["abstracts_per_s"] for n, r in cpu.items() if n.startswith("cuda"))
            out["encode_hours_one_gpu"] = round(documents / gpu / 3600, 1)
    return out
