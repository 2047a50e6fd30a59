"""Synthetic abstracts for the scale benchmark's BM25 section, drawn to match the real corpus's token statistics."""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bench._scale_config import K, Sizes
from bench._synthetic import (
    folder_mb,
    percentiles,
    rss_mb,
    single_queries,
)
from curation.records import Document
from index.lexical import LexicalIndex

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
