"""The search entry point with a keyword one-hot fake encoder (no model needed)."""

from __future__ import annotations

import numpy as np
import pytest

from curation.records import Document
from curation.schemas import PO
from index.dense import DenseIndex
from index.encoder import encode_documents
from index.hits import Hit, SearchResult
from index.lexical import LexicalIndex
from index.search import FusionConfig, Retriever, SearchError
from tests.index.keyword_encoder import KeywordEncoder

DOCS = [
    Document("1", "BRAF V600E in melanoma", "Vemurafenib inhibits the BRAF kinase."),
    Document("2", "EGFR in lung cancer", "Gefitinib targets EGFR kinase mutations."),
    Document("3", "", "KRAS mutations in lung tumours ."),
    Document("4", "Cisplatin nephrotoxicity", "Cisplatin caused renal injury."),
    Document("5", "Melanoma surveillance", "Skin examinations for melanoma detect thin lesions early."),
]


@pytest.fixture(scope="module")
def encoder() -> KeywordEncoder:
    return KeywordEncoder()


@pytest.fixture(scope="module")
def retriever(encoder) -> Retriever:
    vectors = encode_documents(encoder, DOCS)  # (5, vocabulary)
    return Retriever(
        lexical=LexicalIndex.build(DOCS),
        dense=DenseIndex.build(vectors, [d.pmid for d in DOCS], model="keyword"),
        encoder=encoder,
    )


def cosine(encoder: KeywordEncoder, query: str, document: Document) -> float:
    q = encoder.encode([query])[0]
    d = encode_documents(encoder, [document])[0]
    return float(q @ d)


def test_hybrid_hits_carry_each_component_score(retriever, encoder):
    result = retriever.search_text("BRAF V600E melanoma", "hybrid", k=5)
    assert isinstance(result, SearchResult) and result.query == "BRAF V600E melanoma"
    assert all(isinstance(h, Hit) for h in result.hits)
    assert [h.rank for h in result.hits] == list(range(1, len(result.hits) + 1))
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)
    assert result.hits[0].pmid == "1"  # first for both BM25 and dense
    lexical = dict(retriever.lexical.search(["BRAF V600E melanoma"], 100)[0])
    by_pmid = {h.pmid: h for h in result.hits}
    assert by_pmid["1"].bm25 == pytest.approx(lexical["1"])
    assert by_pmid["1"].dense == pytest.approx(cosine(encoder, "BRAF V600E melanoma", DOCS[0]))
    # Document 5 shares only "melanoma": BM25 finds it, and dense scores it 1/sqrt(3) · 1/1.
    assert by_pmid["5"].bm25 == pytest.approx(lexical["5"])
    assert by_pmid["5"].dense == pytest.approx(1 / np.sqrt(3), abs=1e-5)
    # Document 4 has no query word: BM25 leaves it out (None); dense still ranks it, at cosine 0.
    assert by_pmid["4"].bm25 is None and by_pmid["4"].dense == pytest.approx(0.0)


def test_single_component_modes_leave_the_other_score_empty(retriever):
    bm25 = retriever.search_text("gefitinib lung", "bm25", k=3)
    assert bm25.hits[0].pmid == "2" and all(h.dense is None and h.bm25 == h.score for h in bm25.hits)
    dense = retriever.search_text("gefitinib lung", "dense", k=3)
    assert dense.hits[0].pmid == "2" and all(h.bm25 is None and h.dense == h.score for h in dense.hits)
    assert len(dense.hits) == 3


def test_run_returns_the_one_hit_shape_cut_to_k(retriever):
    queries = {"q1": "BRAF melanoma", "q2": "cisplatin"}
    for mode in ("bm25", "dense", "hybrid"):
        run = retriever.run(queries, mode, k=2)
        assert set(run) == {"q1", "q2"}
        assert all(isinstance(hits, dict) and len(hits) <= 2 for hits in run.values())
        assert all(isinstance(d, str) and isinstance(s, float) for hits in run.values() for d, s in hits.items())
    assert next(iter(sorted(retriever.run(queries, "bm25", 2)["q2"].items(), key=lambda x: -x[1])))[0] == "4"


@pytest.mark.parametrize("method", ["rrf", "slate", "weighted", "rerank"])
def test_every_fusion_method_runs_and_ranks_the_obvious_document_first(retriever, method):
    fused = Retriever(retriever.lexical, retriever.dense, retriever.encoder, FusionConfig(method))
    hits = fused.search_text("EGFR gefitinib lung kinase", "hybrid", k=3).hits
    assert hits[0].pmid == "2"
    assert len({h.pmid for h in hits}) == len(hits)


def test_rerank_with_full_mix_orders_bm25_candidates_by_dense(retriever, encoder):
    query = "melanoma kinase"
    reranked = Retriever(retriever.lexical, retriever.dense, encoder, FusionConfig("rerank", depth=10, mix=1.0))
    hits = reranked.search_text(query, "hybrid", k=5).hits
    candidates = [d for d, _ in retriever.lexical.search([query], 10)[0]]
    head = [h.pmid for h in hits[: len(candidates)]]
    assert set(head) == set(candidates)
    cosines = [cosine(encoder, query, DOCS[int(p) - 1]) for p in head]
    assert cosines == sorted(cosines, reverse=True)


def test_search_renders_the_schema_query(retriever):
    result = retriever.search(PO, {"Gene": "BRAF", "Variant": "V600E"}, "bm25", k=2)
    assert result.query == "Treatment for gene BRAF and variant V600E?"
    assert result.hits[0].pmid == "1"


@pytest.mark.parametrize("query", ["", "   \n\t ", "x" * 10_000])
def test_empty_and_overlong_queries_are_refused(retriever, query):
    with pytest.raises(SearchError, match="empty|limit"):
        retriever.search_text(query, "hybrid")


def test_missing_indexes_are_reported():
    with pytest.raises(SearchError, match="no BM25 index"):
        Retriever().search_text("BRAF", "bm25")
    with pytest.raises(SearchError, match="no dense index or encoder"):
        Retriever(lexical=LexicalIndex.build(DOCS)).search_text("BRAF", "hybrid")


def test_unknown_mode_or_fusion_fails_early(retriever):
    with pytest.raises(ValueError):
        retriever.search_text("BRAF", "semantic")
    with pytest.raises(ValueError):
        FusionConfig("borda")
