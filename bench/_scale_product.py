"""bench/scale.py's real-corpus sections: Milvus Lite against FAISS, and the product's query path at 1M documents.

``milvus``: the 3,476 real abstracts of ../shared/data (BioRED + BC5CDR + HoC, benchmark v2's corpus) encoded
once with the offline MiniLM; FAISS flat (exact) against Milvus Lite collections (FLAT and HNSW) built by
``index.milvus.MilvusIndex`` with the same vectors; queries are the dev split's PO values rendered with the PO
template and encoded by the same model. Top-10 overlap with FAISS flat, p50/p95 per single query (wall clock,
through each index's ``search``), build and load times. Also the engine's own BM25 (Milvus's BM25 function)
against the app's bm25s index on the same query texts (top-10 overlap: how alike two BM25 implementations are).

``product``: the served search (``search_relation``: link the typed values → concept postings + expanded BM25 +
mention check → dense share over the candidates → fusion → highlights of the shown hits) at ``documents``
abstracts. The corpus is the real one replicated with new PMIDs (each copy keeps its abstract, its
annotations and a slightly perturbed vector), so postings lists, BM25 postings and candidate sets grow as a
real corpus of that size would for the same concepts; the text is not new, so ranking quality is not measured
here, only time and memory. ``postings="store"`` reads the concept postings as the app does, from a DuckDB store's
``annotations`` table (``StorePostings``, written through the store's own ``replace_annotations``), instead of from
memory (``MemoryPostings``, what the benchmark otherwise reads).
"""

from __future__ import annotations

import gc
import resource
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from bench._synthetic import percentiles, single_queries
from curation.entities.postings import MemoryPostings
from curation.records import Document
from curation.retrieval.relation_search import SearchOptions, search_relation
from curation.schemas import PO
from index.dense import DenseConfig, DenseIndex
from index.encoder import encode_documents, encode_queries, load_encoder
from index.lexical import LexicalIndex
from index.search import Retriever

K = 10


def _rss_mb() -> float:
    """This process's peak resident memory so far, MB."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _timed(search, queries) -> tuple[list[list[str]], list[float]]:
    """bench/scale.py's single-query timing, after 5 warm-up calls."""
    return single_queries(search, queries, warmup=5)


def _overlap(a: list[list[str]], b: list[list[str]], k: int = K) -> float:
    shared = [len(set(x[:k]) & set(y[:k])) / max(1, min(k, len(y[:k]))) for x, y in zip(a, b, strict=True) if y]
    return round(float(np.mean(shared)), 4) if shared else 0.0


CACHE = Path.home() / ".cache" / "curation-bench"


def _cached_vectors(model, documents: list[Document]) -> np.ndarray:
    """The corpus vectors, encoded once per corpus and model (kept outside the repository, keyed by both)."""
    import hashlib

    key = hashlib.sha256("\n".join(f"{d.pmid}\t{d.title}\t{d.abstract}" for d in documents).encode())
    key.update(str(getattr(model, "model_card_data", "")).encode() + str(model.max_seq_length).encode())
    path = CACHE / f"vectors-{key.hexdigest()[:16]}.npy"
    if path.exists():
        return np.load(path)
    vectors = encode_documents(model, documents, batch_size=32)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


class RealCorpus:
    """The benchmark's corpus, its dev PO values, the offline model and the corpus vectors (encoded once)."""

    def __init__(self, data_dir: Path, queries: int) -> None:
        from bench._benchmark import load_benchmark
        from bench._concepts import build as build_concepts
        from bench._concepts import po_values

        started = time.perf_counter()
        self.benchmark = load_benchmark(data_dir)
        self.values = po_values(self.benchmark, "dev", queries)
        self.texts = [PO.render_query(v) for v in self.values]
        self.model = load_encoder()
        t = time.perf_counter()
        self.vectors = _cached_vectors(self.model, list(self.benchmark.corpus))
        self.encode_s = time.perf_counter() - t
        self.query_vectors = encode_queries(self.model, self.texts)
        self.concepts = build_concepts(self.benchmark, data_dir, time.perf_counter)
        self.ids = [d.pmid for d in self.benchmark.corpus]
        self.seconds = round(time.perf_counter() - started, 1)
        print(f"real corpus: {len(self.ids)} abstracts encoded in {self.encode_s:.0f} s, {len(self.texts)} queries",
              file=sys.stderr)


def bench_milvus(corpus: RealCorpus, folder: Path) -> dict:
    """Milvus Lite (FLAT, HNSW) against FAISS flat on the real corpus, same vectors and queries."""
    from index.milvus import MilvusIndex
    from index.milvus_schema import collection_name

    out: dict = {"documents": len(corpus.ids), "queries": len(corpus.texts), "k": K, "systems": {}}
    flat = DenseIndex.build(corpus.vectors, corpus.ids, "minilm", DenseConfig("flat"))
    truth, seconds = _timed(lambda v: flat.search(v, K)[0], list(corpus.query_vectors))
    out["systems"]["faiss_flat"] = {"latency_ms": percentiles(seconds), "top10_overlap_with_faiss_flat": 1.0}
    texts = [f"{d.title}\n{d.abstract}" for d in corpus.benchmark.corpus]
    for name, config in (("milvus_lite_flat", DenseConfig("flat")), ("milvus_lite_hnsw", DenseConfig("hnsw"))):
        t = time.perf_counter()
        built = MilvusIndex.build(corpus.vectors, corpus.ids, "minilm", config, uri=str(folder / name / "milvus.db"),
                                  collection=collection_name(name), texts=texts)
        built.save(folder / name)
        build_s = time.perf_counter() - t
        built.close()
        t = time.perf_counter()
        index = MilvusIndex.load(folder / name)
        load_s = time.perf_counter() - t
        found, seconds = _timed(lambda v, index=index: index.search(v, K)[0], list(corpus.query_vectors))
        out["systems"][name] = {"latency_ms": percentiles(seconds), "top10_overlap_with_faiss_flat":
                                _overlap(found, truth), "build_s": round(build_s, 1), "load_s": round(load_s, 2)}
        if name == "milvus_lite_flat":
            lexical = LexicalIndex.build(list(corpus.benchmark.corpus))
            ours, _ = _timed(lambda q, lexical=lexical: lexical.search([q], K)[0], corpus.texts)
            engine, seconds = _timed(lambda q, index=index: index.search_text([q], K)[0], corpus.texts)
            out["engine_bm25"] = {"top10_overlap_with_bm25s": _overlap(engine, ours), "latency_ms":
                                  percentiles(seconds)}
        index.close()
        print(f"  {name}: overlap {out['systems'][name]['top10_overlap_with_faiss_flat']}", file=sys.stderr)
    out["milvus_lite_is_used_for_top10_overlap"] = "milvus_lite_flat"
    return out


def _replicated(corpus: RealCorpus, documents: int, seed: int = 0) -> tuple[list[Document], np.ndarray]:
    """``documents`` abstracts: the real corpus repeated with new PMIDs, each copy's vector slightly perturbed."""
    rng = np.random.default_rng(seed)
    base = list(corpus.benchmark.corpus)
    copies = -(-documents // len(base))
    docs = [d if i < len(base) else replace(d, pmid=f"{90_000_000 + i}", mentions=(), relations=())
            for i, d in zip(range(documents), (d for _ in range(copies) for d in base), strict=False)]
    vectors = np.vstack([corpus.vectors] * copies)[:documents]
    vectors += rng.normal(scale=0.02, size=vectors.shape).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return docs, vectors


def _store_postings(docs: list[Document], found: list, folder: Path):
    """The replicated corpus's annotations in a store, one copy of the corpus a transaction, then put in concept order
    as the annotation job does after a large run; its StorePostings, and one concept's read time (p50 ms over the
    20 most mentioned genes) before and after the sort, and per document after it."""
    from curation.entities.postings import StorePostings
    from curation.store.annotations import (
        AnnotationRow,
        list_annotated_concepts,
        replace_annotations,
        sort_concept_index,
    )
    from curation.store.opening import open_store

    con = open_store(folder / "store.duckdb")
    for begin in range(0, len(docs), len(found)):
        chunk = docs[begin: begin + len(found)]
        rows = [AnnotationRow(d.pmid, a.start, a.end, a.text, a.type, a.concept_id, a.canonical, a.confidence,
                              a.source, "bench") for d, mentions in zip(chunk, found, strict=False) for a in mentions]
        con.execute("BEGIN")
        replace_annotations(con, "bench", {d.pmid: len(d.text) for d in chunk}, rows)
        con.execute("COMMIT")
    con.execute("CHECKPOINT")
    source = StorePostings(con)
    genes = [c for c, _ in list_annotated_concepts(con, "gene")[:20]]

    def read_ms() -> float:
        _, seconds = single_queries(lambda c: [(p.pmid, 0.0) for p in source.postings("gene", [c])], genes, 2)
        return percentiles(seconds)["p50"]

    def per_document_ms() -> float:  # what concept_query reads: grouped per document in SQL
        _, seconds = single_queries(lambda c: [(p, 0.0) for p in source.documents("gene", [c]).spans], genes, 2)
        return percentiles(seconds)["p50"]

    unsorted = read_ms()
    con.execute("BEGIN")
    sort_concept_index(con)  # as the annotation job does after a run of this size (relations.concept_index)
    con.execute("COMMIT")
    con.execute("CHECKPOINT")
    return source, con, {"unsorted": unsorted, "sorted": read_ms(), "sorted_per_document": per_document_ms(),
                         "rows": int(
        con.execute("SELECT count(*) FROM annotations").fetchone()[0])}


def bench_product(corpus: RealCorpus, documents: int, postings: str = "memory", folder: Path | None = None) -> dict:
    """The served search plus the shown hits' highlights, per query, at ``documents`` abstracts.

    ``postings``: "memory" (``MemoryPostings``) or "store" (``StorePostings`` over a store in ``folder``).
    """
    from curation.entities.annotation import Annotator
    from curation.retrieval.passages import best_sentences, shift
    from curation.retrieval.result_rows import kinded_spans
    from pages.parts.highlight import to_html

    t = time.perf_counter()
    docs, vectors = _replicated(corpus, documents)
    by_pmid = {d.pmid: d for d in docs}
    found = Annotator(corpus.concepts.matcher).annotate([d.text for d in corpus.benchmark.corpus])
    annotations = {d.pmid: found[i % len(found)] for i, d in enumerate(docs)}
    source, store = MemoryPostings(annotations), None
    replicate_s = time.perf_counter() - t
    if postings == "store":
        t = time.perf_counter()
        source, store, read_ms = _store_postings(docs, found, folder)
        store_s = time.perf_counter() - t
    rss_before = _rss_mb()
    t = time.perf_counter()
    lexical = LexicalIndex.build(docs)
    lexical_s = time.perf_counter() - t
    t = time.perf_counter()
    dense = DenseIndex.build(vectors, [d.pmid for d in docs], "minilm", DenseConfig("flat"))
    dense_s = time.perf_counter() - t
    del vectors
    engine = Retriever(lexical=lexical, dense=dense, encoder=corpus.model, version="scale")
    matcher = corpus.concepts.matcher

    def one(values) -> int:
        result = search_relation(engine, corpus.concepts.linker, matcher, source,
                                 lambda pmids: {p: by_pmid[p] for p in pmids if p in by_pmid}, PO, values,
                                 SearchOptions())
        marked = {c.slot: (c.canonical if c.linked and c.how != "codon" else c.typed) for c in result.concepts}
        for hit in result.hits:  # what the Curate page draws for each shown abstract
            doc = by_pmid[hit.pmid]
            spans = [s for _, s in kinded_spans(matcher, PO, marked, doc, annotations.get(hit.pmid, ()))]
            offset = len(doc.title) + 1 if doc.title else 0
            in_abstract = shift(spans, offset, len(doc.abstract))
            to_html(doc.abstract, in_abstract)
            best_sentences(doc.abstract, in_abstract, result.query, ("query",), "answer")
        return len(result.hits)

    for values in corpus.values[:5]:
        one(values)
    seconds, shown = [], []
    for values in corpus.values:
        t = time.perf_counter()
        shown.append(one(values))
        seconds.append(time.perf_counter() - t)
    if store is not None:
        store.close()
    return {"documents": len(docs), "queries": len(corpus.values), "latency_ms": percentiles(seconds),
            "queries_with_results": int(sum(1 for s in shown if s)), "postings": postings,
            "build_s": {"replicate_and_postings": round(replicate_s, 1), "bm25": round(lexical_s, 1),
                        "dense_flat": round(dense_s, 1),
                        **({"store_annotations": round(store_s, 1)} if store is not None else {})},
            **({"store_concept_read_ms": read_ms} if store is not None else {}),
            "peak_rss_mb": _rss_mb(), "rss_before_indexes_mb": rss_before,
            "path": "search_relation (QueryLinker → concept postings + expanded BM25 (bm25s) + mention check → "
                    "dense share over the candidates → fusion), then each shown hit's spans, HTML and best "
                    "sentences as the Curate page makes them; one query per call, wall clock, after 5 warm-up queries"}


def _process_rss_mb() -> float:
    """Resident memory of this process and its children, now (Milvus Lite 3 serves from a thread of this process;
    older versions ran a child process): the engine's share is the change across a build."""
    import psutil

    me = psutil.Process()
    total = me.memory_info().rss
    for child in me.children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.Error:
            continue
    return round(total / 2**20, 1)


def bench_milvus_synthetic(vectors: int, queries: int, folder: Path) -> dict:
    """Milvus Lite at ``vectors`` synthetic vectors (bench/scale.py's mixture), per index kind.

    Build (insert + index + seal) time, the Lite file's size, the process's resident memory (observed only: see
    below), single-query
    p50 / p95 through ``MilvusIndex.search`` and recall@50 against exact search (numpy) on held-out queries.
    """
    from bench._synthetic import Mixture, folder_mb, synthetic_vectors
    from index.milvus import MilvusIndex
    from index.milvus_schema import collection_name

    k = 50
    data = synthetic_vectors(vectors + queries, Mixture())
    base, held_out = data[:vectors], data[vectors:]
    ids = [str(i) for i in range(vectors)]
    truth = [[ids[j] for j in np.argsort(-(base @ q))[:k]] for q in held_out]
    out: dict = {"vectors": vectors, "queries": queries, "k": k, "dimension": int(base.shape[1]), "systems": {}}
    from index.dense import choose_config

    # the parameters the product builds for this many documents (ivfpq is IVF_SQ8 on Milvus: index/milvus.py)
    configs = {name: choose_config(vectors, base.shape[1], kind=kind)[0]
               for name, kind in (("flat", "flat"), ("hnsw", "hnsw"), ("ivf_sq8", "ivfpq"))}
    for name, config in configs.items():
        path = folder / f"milvus-synthetic-{name}"
        t = time.perf_counter()
        index = MilvusIndex.create(str(path / "milvus.db"), collection_name(name), base.shape[1], "synthetic", config,
                                   full_text=False)
        gc.collect()
        rss_empty = _process_rss_mb()  # with the collection still empty (observed only: see the docstring)
        index.insert(base, ids)
        index.client.load_collection(index.collection)
        build_s = time.perf_counter() - t
        found, seconds = _timed(lambda v, index=index: index.search(v, k)[0], list(held_out))
        recall = float(np.mean([len(set(f) & set(t)) / k for f, t in zip(found, truth, strict=True)]))
        gc.collect()
        engine_mb = _process_rss_mb()
        index.close()
        out["systems"][f"milvus_lite_{name}"] = {
            "params": asdict(config), "build_s": round(build_s, 1),
            "file_mb": round(folder_mb(path), 1),
            # Lite serves from this process and memory freed by an earlier kind is not given back to the system, so
            # the difference of these two is not the collection's memory: kept as observed, not used for sizing
            "process_rss_mb": {"empty_collection": rss_empty, "after_searches": engine_mb},
            "recall@50": round(recall, 4), "latency_ms": percentiles(seconds),
        }
        print(f"  milvus lite {name} at {vectors:,}: recall@50 {recall:.4f}, build {build_s:.0f} s", file=sys.stderr)
    out["sealing"] = _sealing(base[:SEALING_VECTORS], ids[:SEALING_VECTORS], held_out[:20], folder / "sealing")
    return out


SEALING_VECTORS = 50_000


def _sealing(base: np.ndarray, ids: list[str], queries: np.ndarray, folder: Path) -> dict:
    """HNSW search latency with the rows still in growing segments (inserted, not flushed) and after sealing."""
    from index.dense import choose_config
    from index.milvus import MilvusIndex
    from index.milvus_schema import collection_name

    index = MilvusIndex.create(str(folder / "milvus.db"), collection_name("sealing"), base.shape[1], "synthetic",
                               choose_config(len(ids), base.shape[1], kind="hnsw")[0], full_text=False)
    index.insert(base, ids)
    index.client.load_collection(index.collection)
    _, growing = _timed(lambda v: index.search(v, 50)[0], list(queries))
    index.seal()
    _, sealed = _timed(lambda v: index.search(v, 50)[0], list(queries))
    index.close()
    return {"vectors": len(ids), "kind": "hnsw", "growing_ms": percentiles(growing),
            "sealed_ms": percentiles(sealed)}
