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

import os
import resource
import tempfile
import time
from dataclasses import asdict, replace
from pathlib import Path

import faiss
import numpy as np

from bench import _scaffold as scaffold
from bench._scale_config import GOAL_P95_MS, GOAL_RECALL, SMALL, K, Sizes
from bench._scale_dense import bench_dense, embedding_stats
from bench._scale_lexical import (
    bench_lexical,
    token_stats,
)
from bench._scale_sizing import per_million, scale_goals, sizing
from bench._synthetic import (
    Mixture,
    synthetic_vectors,
)
from curation.config import load_settings
from curation.records import Document
from index.lexical import LexicalIndex

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
    parser = scaffold.parser(__doc__, "scale")
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
    parser.add_argument("--sections", default="synthetic",
                        help="comma-separated: synthetic (1M vectors, 100k BM25 documents), milvus (Milvus Lite vs "
                             "FAISS on the real corpus), milvus_synthetic (Milvus Lite per index kind at "
                             "--milvus-vectors synthetic vectors), product (the served search at --product-documents), "
                             "ingest (PubMed XML ingestion and encoding throughput), milvus_server (a Milvus server "
                             "process: the real corpus, and HNSW at --server-vectors), milvus_server_ci (the server "
                             "tests as CI runs them, counted); derive alone recomputes the "
                             "figures derived from the others; sections not run keep their last figures in --out, "
                             "each with its own date")
    parser.add_argument("--product-documents", type=lambda v: sorted(int(x) for x in v.split(",")),
                        default=[1_000_000], help="comma-separated corpus sizes for the product section")
    parser.add_argument("--product-postings", choices=("memory", "store"), default="memory",
                        help="the product section's concept postings: from memory, or from a store's annotations "
                             "table as the app reads them (kept apart: product_store_runs)")
    parser.add_argument("--real-queries", type=int, default=200, help="dev PO queries for milvus and product")
    parser.add_argument("--milvus-vectors", type=int, default=200_000)
    parser.add_argument("--server-vectors", type=lambda v: sorted(int(x) for x in v.split(",")), default=[200_000],
                        help="comma-separated synthetic sizes for the milvus_server section")
    parser.add_argument("--ingest-records", type=int, default=30_000)
    parser.add_argument("--encode-docs", type=int, default=500)
    args = parser.parse_args(argv)
    sections = {s.strip() for s in args.sections.split(",") if s.strip()}
    if sections == {"derive"}:  # the per-million figures, the 36M sizing and the goals again, from the JSON
        write_report(args.out, scaffold.read(args.out))
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
        "date": scaffold.now(),
        "params": {"k": K, "goal": {"recall@50": GOAL_RECALL, "p95_ms": GOAL_P95_MS}, "sizes": asdict(sizes),
                   "mixture": asdict(mix), "faiss_omp_threads_build": args.threads,
                   "faiss_omp_threads_search": args.search_threads,
                   "faiss_omp_threads_compared": args.compare_threads, **scaffold.machine("cpu_count"),
                   "load_average_start": [round(x, 2) for x in os.getloadavg()],
                   "latency": "single-query calls through DenseIndex.search / LexicalIndex.search after 10 warm-up "
                              "calls; wall-clock, includes id mapping",
                   "versions": {"faiss": faiss.__version__, "faiss_compile": faiss.get_compile_options(),
                                "numpy": np.__version__, **scaffold.machine("python", "platform")}},
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
    previous = scaffold.read(args.out)
    kept = (*REAL_SECTIONS, "product_runs", "product_store_runs")  # sections not re-run keep their figures
    report.update({k: previous[k] for k in kept if k in previous})
    write_report(args.out, report)
    print(f"goal met by: {', '.join(met) or 'none'}")
    return run_real_sections(args, sections - {"synthetic"}) if sections - {"synthetic"} else 0


REAL_SECTIONS = ("milvus", "milvus_synthetic", "product", "ingest", "milvus_server", "milvus_server_ci")


def write_report(path: Path, report: dict) -> None:
    for system in report.get("milvus_synthetic", {}).get("systems", {}).values():
        # an earlier version of this script derived it from Lite's process memory, which does not isolate a
        # collection (negative for one kind): dropped wherever it is found
        system.pop("collection_rss_mb", None)
    report["per_million"] = per_million(report)
    report["sizing_36m"] = sizing(report)
    report["goals"] = scale_goals(report)
    scaffold.write(path, report)


def run_real_sections(args, sections: set[str]) -> int:
    """The milvus / product / ingest sections, merged into ``args.out`` (other sections' figures kept)."""
    from bench._scale_product import RealCorpus, bench_milvus, bench_product

    report = scaffold.read(args.out)
    machine = {**scaffold.machine("cpu_count"), "load_average_start": [round(x, 2) for x in os.getloadavg()],
               **scaffold.machine("platform")}
    data_dir = load_settings().data_dir
    corpus = RealCorpus(data_dir, args.real_queries) if sections & {"milvus", "product", "milvus_server"} else None
    with tempfile.TemporaryDirectory(prefix="scale-real-") as tmp:
        if "milvus" in sections:
            report["milvus"] = {"date": scaffold.now(), **machine,
                                **bench_milvus(corpus, Path(tmp))}
            write_report(args.out, report)
        if "milvus_synthetic" in sections:
            from bench._scale_product import bench_milvus_synthetic

            report["milvus_synthetic"] = {"date": scaffold.now(), **machine,
                                          **bench_milvus_synthetic(args.milvus_vectors, 200, Path(tmp))}
            write_report(args.out, report)
        if "product" in sections and args.product_postings == "store":
            runs = report.setdefault("product_store_runs", {})
            for documents in args.product_documents:
                runs[str(documents)] = {"date": scaffold.now(), **machine,
                                        **bench_product(corpus, documents, "store", Path(tmp)),
                                        "load_average_end": [round(x, 2) for x in os.getloadavg()]}
                write_report(args.out, report)
        elif "product" in sections:
            runs = report.setdefault("product_runs", {})
            if "product" in report:  # a run written before runs were kept by size
                runs.setdefault(str(report["product"]["documents"]), report["product"])
            for documents in args.product_documents:  # smallest first: a failure at the largest keeps the others
                runs[str(documents)] = {"date": scaffold.now(), **machine,
                                        **bench_product(corpus, documents)}
                report["product"] = runs[max(runs, key=int)]  # the goal's figure: the largest corpus measured
                write_report(args.out, report)
        if "milvus_server" in sections:
            from bench._scale_server import bench_server

            runs = report.get("milvus_server", {}).get("synthetic", {})  # sizes not run again keep their figures
            report["milvus_server"] = {"date": scaffold.now(), **machine,
                                       **bench_server(corpus, args.server_vectors, 200, Path(tmp))}
            report["milvus_server"]["synthetic"] = {**runs, **report["milvus_server"]["synthetic"]}
            write_report(args.out, report)
        if "milvus_server_ci" in sections:
            from bench._scale_server import run_server_tests

            report["milvus_server_ci"] = {"date": scaffold.now(), **machine,
                                          **run_server_tests(Path(__file__).resolve().parents[1])}
            write_report(args.out, report)
        if "ingest" in sections:
            from bench._ingest_scale import measure_ingest_and_encoding

            report["ingest"] = {"date": scaffold.now(), **machine,
                                **measure_ingest_and_encoding(data_dir, Path(tmp), args.ingest_records,
                                                              args.encode_docs)}
            write_report(args.out, report)
    goals = report.get("goals", {})
    print(f"wrote {args.out}: " + "; ".join(f"{k} {v['value']} ({'met' if v['met'] else 'missed'})"
                                           for k, v in goals.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
