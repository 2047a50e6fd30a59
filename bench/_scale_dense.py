"""The scale benchmark's dense section: FAISS flat, HNSW and IVF-PQ on synthetic vectors (recall, latency, memory)."""

from __future__ import annotations

import shutil
import time
from dataclasses import replace
from pathlib import Path

import faiss
import numpy as np

from bench._scale_config import GOAL_P95_MS, GOAL_RECALL, MODEL, K, Sizes
from bench._synthetic import (
    Mixture,
    percentiles,
    recall,
    rss_mb,
    single_queries,
    synthetic_vectors,
)
from index.dense import DenseConfig, DenseIndex, _set_search_params


def embedding_stats(vectors: np.ndarray, n: int = 3476, seed: int = 0) -> dict[str, float]:
    """Shape statistics of ``n`` sampled unit vectors (compare real and synthetic at the same n)."""
    rng = np.random.default_rng(seed)
    x = vectors[rng.permutation(len(vectors))[:n]].astype(np.float64)
    sims = x @ x.T  # (n, n)
    pairs = sims[np.triu_indices(len(x), 1)]
    np.fill_diagonal(sims, -2.0)
    ranked = -np.sort(-sims, axis=1)
    centred = x - x.mean(0)
    eig = np.linalg.eigvalsh(centred.T @ centred / len(x))[::-1]
    return {
        "n": len(x),
        "mean_vector_norm": round(float(np.linalg.norm(x.mean(0))), 3),
        "pair_cos_mean": round(float(pairs.mean()), 3),
        "pair_cos_std": round(float(pairs.std()), 3),
        "nn1_cos": round(float(ranked[:, 0].mean()), 3),
        "nn10_cos": round(float(ranked[:, 9].mean()), 3),
        "nn50_cos": round(float(ranked[:, 49].mean()), 3),
        "var_top10_pcs": round(float(eig[:10].sum() / eig.sum()), 3),
        "var_top50_pcs": round(float(eig[:50].sum() / eig.sum()), 3),
    }


def _index_memory(dense: DenseIndex, folder: Path, name: str, report: dict, rss_before: float) -> DenseIndex:
    """Save, drop and reload an index (the app's path); record sizes and times. Returns the loaded index."""
    t0 = time.perf_counter()
    dense.save(folder / name)
    report["timings_s"][f"{name}_save"] = round(time.perf_counter() - t0, 2)
    report["memory_mb"][name] = {
        "rss_after_build": round(rss_mb() - rss_before, 1),
        "index_file": round((folder / name / "dense.faiss").stat().st_size / 2**20, 1),
        "ids_file": round((folder / name / "ids.json").stat().st_size / 2**20, 1),
    }
    del dense
    rss_before = rss_mb()
    t0 = time.perf_counter()
    loaded = DenseIndex.load(folder / name)
    report["timings_s"][f"{name}_load"] = round(time.perf_counter() - t0, 2)
    report["memory_mb"][name]["rss_after_load"] = round(rss_mb() - rss_before, 1)
    shutil.rmtree(folder / name)
    return loaded


def _measure(report: dict, system: str, index_name: str, dense: DenseIndex, queries: np.ndarray,
             truth: list[list[str]], settings: dict, threads: int) -> None:
    faiss.omp_set_num_threads(threads)
    found, seconds = single_queries(lambda q: dense.search(q[None, :], K)[0], queries)
    settings = {**settings, "search_omp_threads": threads}
    lat = percentiles(seconds)
    report["systems"][system] = {"index": index_name, **settings, "recall@50": recall(found, truth),
                                 "meets_goal": recall(found, truth) >= GOAL_RECALL and lat["p95"] <= GOAL_P95_MS}
    report["latency_ms"][system] = lat
    print(f"  {system}: recall@50 {report['systems'][system]['recall@50']}, p50 {lat['p50']} ms, p95 {lat['p95']} ms",
          flush=True)


def bench_dense(report: dict, sizes: Sizes, mix: Mixture, folder: Path, threads: int, search_threads: int,
                compare_threads: int) -> None:
    """Flat, HNSW and IVF-PQ (+ re-ranking) rows; ``compare_threads`` re-times flat and HNSW ef64 with that many."""
    t0 = time.perf_counter()
    data = synthetic_vectors(sizes.vectors + sizes.queries, mix)
    base, queries = data[: sizes.vectors], data[sizes.vectors :]
    ids = [str(10_000_000 + i) for i in range(sizes.vectors)]
    report["timings_s"]["vectors_generate"] = round(time.perf_counter() - t0, 2)
    report["params"]["synthetic_stats"] = embedding_stats(base, min(3476, sizes.vectors))

    def build(name: str, config: DenseConfig) -> DenseIndex:
        faiss.omp_set_num_threads(threads)
        rss_before = rss_mb()
        t0 = time.perf_counter()
        dense = DenseIndex.build(base, ids, MODEL, config)
        report["timings_s"][f"{name}_build"] = round(time.perf_counter() - t0, 2)
        print(f"{name}: built in {report['timings_s'][f'{name}_build']} s", flush=True)
        return _index_memory(dense, folder, name, report, rss_before)

    # Exact flat: the ground truth (one batched search) and the single-query baseline.
    flat = build("flat", DenseConfig(kind="flat"))
    t0 = time.perf_counter()
    truth = [[doc_id for doc_id, _ in hits] for hits in flat.search(queries, K)]
    report["timings_s"]["flat_ground_truth_batch"] = round(time.perf_counter() - t0, 2)
    top = np.array([[s for _, s in hits] for hits in flat.search(queries[:200], K)])  # (200, K)
    report["params"]["synthetic_query_neighbours"] = {"nn1_cos": round(float(top[:, 0].mean()), 3),
                                                      "nn50_cos": round(float(top[:, -1].mean()), 3)}
    n = sizes.flat_latency_queries
    _measure(report, "flat", "flat", flat, queries[:n], truth[:n], {"kind": "flat"}, search_threads)
    if compare_threads != search_threads:  # what OpenMP does to one query
        _measure(report, f"flat_omp{compare_threads}", "flat", flat, queries[: n // 2], truth[: n // 2],
                 {"kind": "flat"}, compare_threads)
    del flat

    hnsw_config = DenseConfig(kind="hnsw", hnsw_m=32, ef_construction=80)
    hnsw = build("hnsw_M32", hnsw_config)
    for ef in (32, 64, 128, 256):
        _set_search_params(hnsw.index, replace(hnsw_config, ef_search=ef))
        _measure(report, f"hnsw_M32_ef{ef}", "hnsw_M32", hnsw, queries, truth,
                 {"kind": "hnsw", "M": 32, "ef_construction": 80, "ef_search": ef}, search_threads)
    if compare_threads != search_threads:
        _set_search_params(hnsw.index, replace(hnsw_config, ef_search=64))
        _measure(report, f"hnsw_M32_ef64_omp{compare_threads}", "hnsw_M32", hnsw, queries, truth,
                 {"kind": "hnsw", "M": 32, "ef_construction": 80, "ef_search": 64}, compare_threads)
    del hnsw

    for pq_m, nprobes in ((96, (16, 64)), (48, (8, 16, 64))):
        config = DenseConfig(kind="ivfpq", nlist=1024, pq_m=pq_m, pq_bits=8)
        name = f"ivfpq_nl1024_m{pq_m}"
        ivf = build(name, config)
        nlist = faiss.extract_index_ivf(ivf.index).nlist  # DenseIndex caps nlist at n/39
        for nprobe in nprobes:
            _set_search_params(ivf.index, replace(config, nprobe=nprobe))
            _measure(report, f"{name}_np{nprobe}", name, ivf, queries, truth,
                     {"kind": "ivfpq", "nlist": nlist, "pq_m": pq_m, "pq_bits": 8, "nprobe": nprobe}, search_threads)
    # ivf is now the m48 index: re-rank its candidates (not in DenseIndex yet; a suggested change).
    _set_search_params(ivf.index, replace(config, nprobe=16))
    for store_name, store in (("flat", faiss.IndexFlatIP(mix.dim)),
                              ("sq8", faiss.IndexScalarQuantizer(mix.dim, faiss.ScalarQuantizer.QT_8bit,
                                                                 faiss.METRIC_INNER_PRODUCT))):
        faiss.omp_set_num_threads(threads)
        t0 = time.perf_counter()
        store.train(base)
        store.add(base)
        report["timings_s"][f"refine_{store_name}_build"] = round(time.perf_counter() - t0, 2)
        report["memory_mb"][f"refine_store_{store_name}"] = {"codes": round(store.ntotal * store.code_size / 2**20, 1)}
        refined = faiss.IndexRefine(ivf.index, store)
        wrapped = DenseIndex(refined, ivf.ids, ivf.config, MODEL)
        for k_factor in (2, 4, 8) if store_name == "flat" else (4, 8):
            refined.k_factor = k_factor
            system = f"ivfpq_nl1024_m48_np16_refine_{store_name}_x{k_factor}"
            settings = {"kind": "ivfpq+refine (not in DenseIndex)", "nlist": nlist, "pq_m": 48, "nprobe": 16,
                        "refine": store_name, "k_factor": k_factor}
            _measure(report, system, f"{name}+refine_store_{store_name}", wrapped, queries, truth, settings,
                     search_threads)
        del wrapped, refined, store
