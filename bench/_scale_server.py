"""bench/scale.py's Milvus server sections: a real Milvus standalone process on loopback against FAISS flat.

``milvus_server``: the server (:class:`index.milvus_server.LocalMilvus`, the ``milvus`` package's 2.3.5 binary)
started in a temporary folder; every collection is built, sealed and searched through ``index.milvus.MilvusIndex``,
the app's code, over gRPC on loopback, one query per call (a curator waits for one query).

* real corpus (the 3,476 abstracts of bench/scale.py's ``milvus`` section, same vectors and dev PO queries): FLAT
  and HNSW collections against FAISS flat, top-10 overlap and p50/p95;
* synthetic (bench/scale.py's mixture, 384-d) at each ``--server-vectors`` size: HNSW with the parameters the product
  picks for that many documents (``choose_config(kind="hnsw")``), recall@50 against exact search on held-out
  queries, p50/p95, insert and index-build time, and what the collection adds to the server process's resident
  memory and to its data folder (a separate process: unlike Lite's, its memory is measurable). Timings are
  taken once the server reports every row indexed and the collection is loaded again (its searches then run on
  the sealed, indexed segments). The load average of this machine (shared: other work runs beside the benchmark)
  is recorded before and after each timing.

``milvus_server_ci``: the server tests themselves (tests/index/test_milvus.py,
tests/curation/versions/test_milvus_backend.py) run by pytest with ``CURATION_REQUIRE_MILVUS_SERVER`` set, as CI runs
them; their JUnit report is counted: how many server tests passed, failed or were skipped. The goal ``milvus_server_ci``
is 1 only when some passed and none failed or was skipped.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np

from bench._synthetic import percentiles, single_queries

K = 10
RECALL_K = 50
SERVER_TEST_FILES = ("tests/index/test_milvus.py", "tests/curation/versions/test_milvus_backend.py")
#: The server half of those files: tests parametrised ``server`` / ``po-server``, and the server's own tests.
SERVER_TEST = re.compile(r"\[(po-)?server\]|^test_(the|a)_server_")


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _timed(search, queries, k: int) -> tuple[list[list[str]], list[float]]:
    return single_queries(lambda v: search(v, k)[0], queries, warmup=5)


def _overlap(found: list[list[str]], truth: list[list[str]], k: int) -> float:
    return round(float(np.mean([len(set(f[:k]) & set(t[:k])) / k for f, t in zip(found, truth, strict=True)])), 4)


def _sealed(index, timeout_s: float = 3600) -> float:
    """Flush, wait until the server has indexed every row, then reload; the seconds it took."""
    started = time.perf_counter()
    index.seal()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        described = index.client.describe_index(index.collection, "vector")
        if described.get("indexed_rows", 0) >= described.get("total_rows", 1) and not described.get(
                "pending_index_rows", 0):
            break
        time.sleep(2)
    index.client.release_collection(index.collection)
    index.client.load_collection(index.collection)
    return time.perf_counter() - started


def bench_server_real(corpus, uri: str) -> dict:
    """FAISS flat against server FLAT and HNSW collections on the real corpus (top-10 overlap, single-query time)."""
    from index.dense import DenseConfig, DenseIndex
    from index.milvus import MilvusIndex

    queries = list(corpus.query_vectors)
    flat = DenseIndex.build(corpus.vectors, corpus.ids, "minilm", DenseConfig("flat"))
    truth, _ = _timed(flat.search, queries, K)
    out: dict = {"documents": len(corpus.ids), "queries": len(queries), "k": K, "systems": {}}
    for name, config in (("server_flat", DenseConfig("flat")), ("server_hnsw", DenseConfig("hnsw"))):
        t = time.perf_counter()
        index = MilvusIndex.build(corpus.vectors, corpus.ids, "minilm", config, uri=uri, collection=f"real_{name}",
                                  replace_existing=True)
        build_s = time.perf_counter() - t + _sealed(index)
        before = _load()
        found, seconds = _timed(index.search, queries, K)
        out["systems"][name] = {"top10_overlap_with_faiss_flat": _overlap(found, truth, K),
                                "latency_ms": percentiles(seconds), "build_s": round(build_s, 1),
                                "load_average": {"before": before, "after": _load()},
                                "engine_index": index.manifest()["engine_index"]}
        index.drop()
        index.close()
        print(f"  server {name}: overlap {out['systems'][name]['top10_overlap_with_faiss_flat']}", file=sys.stderr)
    out["used_for_top10_overlap"] = "server_hnsw"  # the kind a server runs at scale; FLAT is exact by construction
    return out


def _server_rss_mb(pid: int) -> float:
    """Resident memory of the server process (and any children), MB."""
    import psutil

    process = psutil.Process(pid)
    return round(sum(p.memory_info().rss for p in [process, *process.children(recursive=True)]) / 2**20, 1)


def bench_server_synthetic(vectors: int, queries: int, server) -> dict:
    """HNSW on the server at ``vectors`` synthetic vectors: recall@50 against exact search, single-query p50/p95,
    and the memory and disk the collection adds to the server."""
    from bench._synthetic import Mixture, folder_mb, synthetic_vectors
    from index.dense import choose_config
    from index.milvus import MilvusIndex

    data = synthetic_vectors(vectors + queries, Mixture())
    base, held_out = data[:vectors], data[vectors:]
    del data
    ids = [str(i) for i in range(vectors)]
    scores = held_out @ base.T  # (queries, vectors): exact inner products, the ground truth
    truth = [[ids[j] for j in row[np.argsort(-scores[i, row])]]
             for i, row in enumerate(np.argpartition(-scores, RECALL_K, axis=1)[:, :RECALL_K])]
    del scores
    config, why = choose_config(vectors, base.shape[1], kind="hnsw")
    rss_before, disk_before = _server_rss_mb(server.pid), folder_mb(server.base_dir / "data")
    index = MilvusIndex.create(server.uri, f"synthetic_hnsw_{vectors}", base.shape[1], "synthetic", config,
                               full_text=False, replace_existing=True)
    t = time.perf_counter()
    index.insert(base, ids)
    insert_s = time.perf_counter() - t
    seal_s = _sealed(index)
    before = _load()
    found, seconds = _timed(index.search, list(held_out), RECALL_K)
    after = _load()
    recall = float(np.mean([len(set(f) & set(t)) / RECALL_K for f, t in zip(found, truth, strict=True)]))
    rss_after, disk_after = _server_rss_mb(server.pid), folder_mb(server.base_dir / "data")
    out = {"vectors": vectors, "queries": queries, "k": RECALL_K, "dimension": int(base.shape[1]), "kind": "hnsw",
           "params": {"M": config.hnsw_m, "efConstruction": config.ef_construction, "ef": config.ef_search},
           "chosen_as": why, "recall@50": round(recall, 4), "latency_ms": percentiles(seconds),
           "insert_s": round(insert_s, 1), "seal_and_index_s": round(seal_s, 1),
           "load_average": {"before": before, "after": after},
           # the server's resident memory and data folder before the collection was created and after its searches
           "server_rss_mb": {"before": rss_before, "after": rss_after, "added": round(rss_after - rss_before, 1)},
           "server_data_mb": {"before": round(disk_before, 1), "after": round(disk_after, 1),
                              "added": round(disk_after - disk_before, 1)}}
    index.drop()
    index.close()
    print(f"  server hnsw at {vectors:,}: recall@50 {recall:.4f}, p95 {out['latency_ms']['p95']} ms", file=sys.stderr)
    return out


def bench_server(corpus, sizes: list[int], queries: int, folder: Path) -> dict:
    """The ``milvus_server`` section: one server process for the real corpus and every synthetic size."""
    from index.milvus_server import SERVER_LIMITS, LocalMilvus

    server = LocalMilvus(folder / "milvus-server")
    t = time.perf_counter()
    server.start()
    out: dict = {"server": "milvus 2.3.5 standalone (the milvus package), loopback gRPC",
                 "start_s": round(time.perf_counter() - t, 1), "limits": SERVER_LIMITS}
    try:
        out["real"] = bench_server_real(corpus, server.uri) if corpus is not None else {}
        out["synthetic"] = {str(n): bench_server_synthetic(n, queries, server) for n in sizes}
    finally:
        server.stop()
    return out


def run_server_tests(root: Path) -> dict:
    """The server tests as CI runs them (the server required); counts from pytest's JUnit report."""
    with tempfile.TemporaryDirectory(prefix="server-tests-") as tmp:
        report = Path(tmp) / "junit.xml"
        t = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SERVER_TEST_FILES,
                               f"--junitxml={report}"], cwd=root, capture_output=True, text=True,
                              env={**os.environ, "CURATION_REQUIRE_MILVUS_SERVER": "1"}, timeout=1800)
        seconds = time.perf_counter() - t
        cases = ElementTree.parse(report).getroot().iter("testcase") if report.exists() else []
        counts = {"passed": 0, "failed": 0, "skipped": 0}
        server_seconds = 0.0
        for case in cases:
            if not SERVER_TEST.search(case.get("name", "")):
                continue
            state = "failed" if case.find("failure") is not None or case.find("error") is not None else \
                "skipped" if case.find("skipped") is not None else "passed"
            counts[state] += 1
            server_seconds += float(case.get("time", 0))
    return {**counts, "pytest_exit_code": done.returncode, "run_s": round(seconds, 1),
            "server_tests_s": round(server_seconds, 1), "files": list(SERVER_TEST_FILES),
            "tail": done.stdout.strip().splitlines()[-1:] if done.stdout.strip() else []}
