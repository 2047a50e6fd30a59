"""Scale benchmark: FAISS flat vs HNSW vs IVF-PQ on 1M synthetic vectors, and BM25 on 100k abstracts.

Usage::

    python -m bench.scale [--small] [--calibrate] [--out bench/results/scale.json]

Dense: 1M unit-normalised 384-d float32 vectors from a seeded hierarchical mixture (a global
mean direction, 64 topics, 4,000 clusters of log-normal sizes, anisotropic Gaussian noise with
a power-law spectrum in a random rotation). The parameters were chosen so that a 3,476-vector
sample has the statistics of all-MiniLM-L6-v2 embeddings of the 3,476 real abstracts in
../shared/data (mean-vector norm, mean pairwise cosine, nearest-neighbour cosines, share of
variance in the top principal components); ``--calibrate`` re-measures both and writes them
into the JSON. Queries are fresh draws from the same mixture, never in the base set.

Every index is built, saved, loaded and searched through ``index.dense.DenseIndex``, the code
the app uses. Latency is per single-query call (a curator waits for one query), after a
warm-up, with one FAISS OpenMP thread (``--search-threads``; flat and HNSW are re-timed with
``--compare-threads``, default all cores, to show what OpenMP costs one query). Recall@50 is
measured against exact flat search. Rows marked ``refine`` wrap the loaded IVF-PQ index in a
FAISS re-ranking stage (exact fp32 or 8-bit scalar-quantised vectors): DenseIndex does not offer
this yet; they show what that change would give.

Lexical: 100k synthetic abstracts (title + ~220 words, Zipfian vocabulary headed by real
function and biomedical words, plus gene symbols and protein variants), indexed with
``index.lexical.LexicalIndex``; the queries follow the PO template ("Treatment for gene BRAF
and variant V600E?") with a gene and variant that occur together in some document.

Writes one JSON: date, params, counts, systems (recall@50), latency_ms (p50/p95), timings_s,
memory_mb (saved file sizes and resident-memory deltas), goal (which settings meet it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import faiss
import numpy as np

from bench._synthetic import (
    Mixture,
    folder_mb,
    percentiles,
    recall,
    rss_mb,
    single_queries,
    synthetic_vectors,
)
from curation.config import load_settings
from curation.records import Document
from index.dense import DenseConfig, DenseIndex, _set_search_params
from index.lexical import LexicalIndex

K = 50
GOAL_RECALL = 0.95
GOAL_P95_MS = 10.0
MODEL = "synthetic-384d"


@dataclass(frozen=True)
class Sizes:
    vectors: int = 1_000_000
    queries: int = 1000
    flat_latency_queries: int = 200
    documents: int = 100_000
    lexical_queries: int = 1000


SMALL = Sizes(vectors=50_000, queries=300, flat_latency_queries=100, documents=10_000, lexical_queries=300)


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


# --------------------------------------------------------------------------- dense benchmark


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


# --------------------------------------------------------------------------- synthetic abstracts

FUNCTION_WORDS = ("the of and in to a with was were is for that by as on from at be are this we these an or "
                  "which after than not have has been its but between during both").split()
DOMAIN_WORDS = ("cells patients cancer expression effect study activity tumor results increased associated "
                "significantly treatment gene level inhibition group protein dose dna factor showed growth mg "
                "control rats receptor may human mutation suggest response clinical cell induced analysis "
                "therapy risk compared disease mice model survival role function signaling pathway mechanism "
                "variant inhibitor resistance phase trial kinase mutations tumors methods background findings "
                "observed reduced higher lower levels data revealed demonstrated identified").split()
AMINO = "ACDEFGHIKLMNPQRSTVWY"
HEAD_GENES = "TP53 EGFR KRAS BRAF PIK3CA ERBB2 ALK BRCA1 BRCA2 PTEN NRAS KIT IDH1 MET ABL1 FLT3 JAK2 NPM1".split()


def _pseudo_words(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` distinct pronounceable lower-case non-words (2–4 syllables and an optional coda)."""
    onsets = np.array("b c d f g h k l m n p r s t v br cr dr gr pr tr st sp ch ph th".split(), dtype=object)
    vowels = np.array("a e i o u ae io ia ou".split(), dtype=object)
    codas = np.array(["", "", "n", "s", "r", "l", "x", "m", "t"], dtype=object)
    seen: set[str] = set(FUNCTION_WORDS) | set(DOMAIN_WORDS)
    out: list[str] = []
    while len(out) < n:
        m = 2 * (n - len(out))
        syllables = onsets[rng.integers(0, len(onsets), (m, 4))] + vowels[rng.integers(0, len(vowels), (m, 4))]
        ends = codas[rng.integers(0, len(codas), m)]
        for row, count, end in zip(syllables, rng.integers(2, 5, m), ends, strict=True):
            word = "".join(row[:count]) + end
            if word not in seen and len(out) < n:
                seen.add(word)
                out.append(word)
    return out


def synthetic_corpus(n_docs: int, n_queries: int, seed: int = 0, vocabulary: int = 15_000,
                     zipf_s: float = 1.0) -> tuple[list[Document], list[str]]:
    """Abstract-like documents and PO-template queries whose gene and variant co-occur in a document.

    Words: ranks drawn from a Zipf law over function words, common biomedical words, then
    ``vocabulary`` pseudo-words. Each document also names 1–4 genes (Zipfian over 20k symbols),
    each with a protein variant (Zipfian over 5k), repeated 1–3 times. The defaults give, on
    3,476 documents, 20.1k distinct tokens and 156 tokens per document after tokenisation; the
    3,476 real abstracts give 21.4k and 151 (``--calibrate`` re-measures). Past that size the
    synthetic vocabulary grows only through gene and variant names, slower than PubMed's.
    """
    rng = np.random.default_rng(seed)
    words = np.array(FUNCTION_WORDS + DOMAIN_WORDS + _pseudo_words(rng, vocabulary), dtype=object)
    cdf = np.cumsum(1.0 / np.arange(1, len(words) + 1) ** zipf_s)
    cdf /= cdf[-1]
    genes = HEAD_GENES + [f"{''.join(rng.choice(list('ABCDEFGHKLMNPRSTWXZ'), rng.integers(2, 5)))}{i % 97}"
                          for i in range(20_000)]
    gene_cdf = np.cumsum(1.0 / np.arange(1, len(genes) + 1))
    gene_cdf /= gene_cdf[-1]
    variants = [f"{a}{pos}{b}" for a, pos, b in zip(rng.choice(list(AMINO), 5000), rng.integers(2, 1200, 5000),
                                                     rng.choice(list(AMINO), 5000), strict=True)]
    variants[:5] = ["V600E", "L858R", "G12C", "G12D", "T790M"]
    variant_cdf = np.cumsum(1.0 / np.arange(1, len(variants) + 1))
    variant_cdf /= variant_cdf[-1]
    lengths = np.clip(rng.normal(220, 70, n_docs), 60, 450).astype(int)  # real abstracts: mean 219 words
    docs, pairs = [], []
    for i, length in enumerate(lengths):
        tokens = list(words[np.searchsorted(cdf, rng.random(length + 12))])
        for g in np.searchsorted(gene_cdf, rng.random(rng.integers(1, 5))):
            variant = variants[np.searchsorted(variant_cdf, rng.random())]
            pairs.append((genes[g], variant))
            for _ in range(rng.integers(1, 4)):
                tokens[rng.integers(12, len(tokens))] = f"{genes[g]} {variant}"
        docs.append(Document(str(30_000_000 + i), " ".join(tokens[:12]).capitalize() + ".",
                             " ".join(tokens[12:]) + "."))
    picks = rng.choice(len(pairs), n_queries, replace=False)
    queries = [f"Treatment for gene {pairs[p][0]} and variant {pairs[p][1]}?" for p in picks]
    return docs, queries


def token_stats(index: LexicalIndex, documents: Sequence[Document]) -> dict[str, float]:
    tokens = index._tokens([d.text for d in documents])
    return {"documents": len(documents), "vocabulary": len({t for doc in tokens for t in doc}),
            "tokens_per_doc": round(float(np.mean([len(doc) for doc in tokens])), 1)}


def _lexical_queries(index: LexicalIndex, queries: list[str]) -> tuple[list[list[str]], list[float]]:
    return single_queries(lambda q: index.search([q], K)[0], queries)


def bench_lexical(report: dict, sizes: Sizes, folder: Path) -> None:
    t0 = time.perf_counter()
    docs, queries = synthetic_corpus(sizes.documents, sizes.lexical_queries)
    report["timings_s"]["documents_generate"] = round(time.perf_counter() - t0, 2)
    rss_before = rss_mb()
    t0 = time.perf_counter()
    built = LexicalIndex.build(docs)
    report["timings_s"]["bm25_build"] = round(time.perf_counter() - t0, 2)
    print(f"bm25: built in {report['timings_s']['bm25_build']} s", flush=True)
    memory = {"rss_after_build": round(rss_mb() - rss_before, 1)}
    t0 = time.perf_counter()
    built.save(folder / "bm25")
    report["timings_s"]["bm25_save"] = round(time.perf_counter() - t0, 2)
    memory["index_files"] = round(folder_mb(folder / "bm25"), 1)
    sample = token_stats(built, docs[:3476])
    found, seconds = _lexical_queries(built, queries)
    report["latency_ms"]["bm25_in_memory"] = percentiles(seconds)
    del built
    rss_before = rss_mb()
    t0 = time.perf_counter()
    loaded = LexicalIndex.load(folder / "bm25", mmap=True)
    report["timings_s"]["bm25_load_mmap"] = round(time.perf_counter() - t0, 2)
    memory["rss_after_mmap_load"] = round(rss_mb() - rss_before, 1)
    found_mmap, seconds = _lexical_queries(loaded, queries)
    memory["rss_after_mmap_queries"] = round(rss_mb() - rss_before, 1)
    report["latency_ms"]["bm25_mmap"] = percentiles(seconds)
    report["memory_mb"]["bm25"] = memory
    report["systems"]["bm25"] = {
        "index": "bm25", "documents": len(docs),
        "queries_with_hits": round(float(np.mean([bool(f) for f in found])), 4),
        "mmap_same_hits": all(a == b for a, b in zip(found, found_mmap, strict=True)),
        "synthetic_token_stats": sample, "example_query": queries[0],
    }
    print(f"  bm25: mmap p50 {report['latency_ms']['bm25_mmap']['p50']} ms, "
          f"p95 {report['latency_ms']['bm25_mmap']['p95']} ms", flush=True)
    shutil.rmtree(folder / "bm25")


# --------------------------------------------------------------------------- calibration on real abstracts


def calibrate(report: dict, data_dir: Path, mix: Mixture, n: int) -> None:
    """Embed ``n`` real abstracts with the app's encoder and compare their statistics with the mixture's."""
    from curation.ingest.jsonl import read_jsonl
    from curation.ingest.problems import Problems
    from curation.ingest.pubtator import read_pubtator
    from index.encoder import EncoderConfig, encode_documents, load_encoder, model_name

    docs: dict[str, Document] = {}
    for path in sorted((data_dir / "biored").glob("*.PubTator")) + sorted((data_dir / "bc5cdr").glob("*.txt")):
        docs.update({d.pmid: d for d in read_pubtator(path, Problems(path, lenient=True)) if d.pmid not in docs})
    hoc = data_dir / "hoc" / "hoc_abstracts.jsonl"
    docs.update({d.pmid: d for d in read_jsonl(hoc, Problems(hoc, lenient=True)) if d.pmid not in docs})
    real = list(docs.values())
    lexical = LexicalIndex.build(real)
    picked = [real[i] for i in np.random.default_rng(0).permutation(len(real))[:n]]
    model = load_encoder(EncoderConfig(device="cpu"))
    t0 = time.perf_counter()
    vectors = encode_documents(model, picked)
    report["timings_s"]["calibration_encode"] = round(time.perf_counter() - t0, 2)
    report["params"]["calibration"] = {
        "real_abstracts": len(real), "encoder": model_name(model),
        "real_words_per_doc": round(float(np.mean([len(d.text.split()) for d in real])), 1),
        "real_token_stats": token_stats(lexical, real),
        "real_embedding_stats": embedding_stats(vectors, n),
        "synthetic_embedding_stats": embedding_stats(synthetic_vectors(200_000, mix), n),
        "encode_docs_per_s_cpu": round(n / report["timings_s"]["calibration_encode"], 1),
    }


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="50k vectors and 10k documents: a quick run")
    parser.add_argument("--vectors", type=int, help="override the number of base vectors")
    parser.add_argument("--documents", type=int, help="override the number of BM25 documents")
    parser.add_argument("--queries", type=int, help="override the number of dense and BM25 queries")
    # One OpenMP thread by default: on a 2-core machine that other processes share, a second
    # thread made IVF-PQ training 2.5x slower, HNSW building no faster and one flat query 5x slower.
    parser.add_argument("--threads", type=int, default=1, help="FAISS OpenMP threads for building")
    parser.add_argument("--search-threads", type=int, default=1, help="FAISS OpenMP threads for single-query search")
    parser.add_argument("--compare-threads", type=int, default=os.cpu_count() or 1,
                        help="also time flat and HNSW ef64 queries with this many threads")
    parser.add_argument("--calibrate", action="store_true", help="also embed real abstracts (../shared/data)")
    parser.add_argument("--calibration-docs", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results" / "scale.json")
    parser.add_argument("--sections", default="synthetic",
                        help="comma-separated: synthetic (1M vectors, 100k BM25 documents), milvus (Milvus Lite vs "
                             "FAISS on the real corpus), milvus_synthetic (Milvus Lite per index kind at "
                             "--milvus-vectors synthetic vectors), product (the served search at --product-documents), "
                             "ingest (PubMed XML ingestion and encoding throughput); derive alone recomputes the "
                             "figures derived from the others; sections not run keep their last figures in --out, "
                             "each with its own date")
    parser.add_argument("--product-documents", type=lambda v: sorted(int(x) for x in v.split(",")),
                        default=[1_000_000], help="comma-separated corpus sizes for the product section")
    parser.add_argument("--real-queries", type=int, default=200, help="dev PO queries for milvus and product")
    parser.add_argument("--milvus-vectors", type=int, default=200_000)
    parser.add_argument("--ingest-records", type=int, default=30_000)
    parser.add_argument("--encode-docs", type=int, default=500)
    args = parser.parse_args(argv)
    sections = {s.strip() for s in args.sections.split(",") if s.strip()}
    if sections == {"derive"}:  # the per-million figures, the 36M sizing and the goals again, from the JSON
        write_report(args.out, json.loads(args.out.read_text()))
        return 0
    unknown = sections - {"synthetic", *REAL_SECTIONS}
    if unknown:
        parser.error(f"unknown sections: {', '.join(sorted(unknown))}")
    if "synthetic" not in sections:
        return run_real_sections(args, sections)
    sizes = SMALL if args.small else Sizes()
    if args.vectors:
        sizes = replace(sizes, vectors=args.vectors)
    if args.documents:
        sizes = replace(sizes, documents=args.documents)
    if args.queries:
        sizes = replace(sizes, queries=args.queries, lexical_queries=args.queries,
                        flat_latency_queries=min(args.queries, sizes.flat_latency_queries))
    mix = Mixture()
    report: dict = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "params": {"k": K, "goal": {"recall@50": GOAL_RECALL, "p95_ms": GOAL_P95_MS}, "sizes": asdict(sizes),
                   "mixture": asdict(mix), "faiss_omp_threads_build": args.threads,
                   "faiss_omp_threads_search": args.search_threads,
                   "faiss_omp_threads_compared": args.compare_threads, "cpu_count": os.cpu_count(),
                   "load_average_start": [round(x, 2) for x in os.getloadavg()],
                   "latency": "single-query calls through DenseIndex.search / LexicalIndex.search after 10 warm-up "
                              "calls; wall-clock, includes id mapping",
                   "versions": {"faiss": faiss.__version__, "faiss_compile": faiss.get_compile_options(),
                                "numpy": np.__version__, "python": platform.python_version(),
                                "platform": platform.platform()}},
        "counts": {"vectors": sizes.vectors, "dimension": mix.dim, "queries": sizes.queries,
                   "documents": sizes.documents, "lexical_queries": sizes.lexical_queries},
        "systems": {}, "latency_ms": {}, "timings_s": {}, "memory_mb": {},
    }
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="scale-bench-") as tmp:
        if args.calibrate:
            calibrate(report, load_settings().data_dir, mix, args.calibration_docs)
        bench_dense(report, sizes, mix, Path(tmp), args.threads, args.search_threads, args.compare_threads)
        bench_lexical(report, sizes, Path(tmp))
    report["timings_s"]["total"] = round(time.perf_counter() - start, 1)
    report["memory_mb"]["peak_rss_process"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    report["params"]["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    met = [name for name, s in report["systems"].items() if s.get("meets_goal")]
    report["goal"] = {"recall@50": GOAL_RECALL, "p95_ms": GOAL_P95_MS, "met_by": met}
    previous = json.loads(args.out.read_text()) if args.out.exists() else {}
    report.update({k: previous[k] for k in (*REAL_SECTIONS, "product_runs") if k in previous})  # kept, not re-run
    write_report(args.out, report)
    print(f"wrote {args.out}; goal met by: {', '.join(met) or 'none'}")
    return run_real_sections(args, sections - {"synthetic"}) if sections - {"synthetic"} else 0


REAL_SECTIONS = ("milvus", "milvus_synthetic", "product", "ingest")


def scale_goals(report: dict) -> dict:
    """The issue's goals, from whichever sections the JSON holds (a goal whose section never ran is absent)."""
    from bench._benchmark import goal

    goals = {}
    if "milvus" in report:
        system = report["milvus"]["milvus_lite_is_used_for_top10_overlap"]
        goals["milvus_top10_overlap"] = goal(report["milvus"]["systems"][system]["top10_overlap_with_faiss_flat"],
                                             0.99, ">=")
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


def write_report(path: Path, report: dict) -> None:
    for system in report.get("milvus_synthetic", {}).get("systems", {}).values():
        # an earlier version of this script derived it from Lite's process memory, which does not isolate a
        # collection (negative for one kind): dropped wherever it is found
        system.pop("collection_rss_mb", None)
    report["per_million"] = per_million(report)
    report["sizing_36m"] = sizing(report)
    report["goals"] = scale_goals(report)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")


def run_real_sections(args, sections: set[str]) -> int:
    """The milvus / product / ingest sections, merged into ``args.out`` (other sections' figures kept)."""
    from bench._scale_product import RealCorpus, bench_milvus, bench_product

    report = json.loads(args.out.read_text()) if args.out.exists() else {}
    machine = {"cpu_count": os.cpu_count(), "load_average_start": [round(x, 2) for x in os.getloadavg()],
               "platform": platform.platform()}
    data_dir = load_settings().data_dir
    corpus = RealCorpus(data_dir, args.real_queries) if sections & {"milvus", "product"} else None
    with tempfile.TemporaryDirectory(prefix="scale-real-") as tmp:
        if "milvus" in sections:
            report["milvus"] = {"date": datetime.now(UTC).isoformat(timespec="seconds"), **machine,
                                **bench_milvus(corpus, Path(tmp))}
            write_report(args.out, report)
        if "milvus_synthetic" in sections:
            from bench._scale_product import bench_milvus_synthetic

            report["milvus_synthetic"] = {"date": datetime.now(UTC).isoformat(timespec="seconds"), **machine,
                                          **bench_milvus_synthetic(args.milvus_vectors, 200, Path(tmp))}
            write_report(args.out, report)
        if "product" in sections:
            runs = report.setdefault("product_runs", {})
            if "product" in report:  # a run written before runs were kept by size
                runs.setdefault(str(report["product"]["documents"]), report["product"])
            for documents in args.product_documents:  # smallest first: a failure at the largest keeps the others
                runs[str(documents)] = {"date": datetime.now(UTC).isoformat(timespec="seconds"), **machine,
                                        **bench_product(corpus, documents)}
                report["product"] = runs[max(runs, key=int)]  # the goal's figure: the largest corpus measured
                write_report(args.out, report)
        if "ingest" in sections:
            from bench._ingest_scale import measure_ingest_and_encoding

            report["ingest"] = {"date": datetime.now(UTC).isoformat(timespec="seconds"), **machine,
                                **measure_ingest_and_encoding(data_dir, Path(tmp), args.ingest_records,
                                                              args.encode_docs)}
            write_report(args.out, report)
    goals = report.get("goals", {})
    print(f"wrote {args.out}: " + "; ".join(f"{k} {v['value']} ({'met' if v['met'] else 'missed'})"
                                           for k, v in goals.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
