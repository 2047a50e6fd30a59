"""Weighted-term BM25 (term_weights, weighted_scores, search_weighted, doc_term_matrix) and RM3."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from index.expansion import RM3Config, rm3
from index.lexical import LexicalConfig, LexicalIndex, LexicalIndexError


@dataclass(frozen=True)
class Doc:
    pmid: str
    title: str
    abstract: str

    @property
    def text(self) -> str:
        return f"{self.title} {self.abstract}"


CORPUS = [
    Doc("1", "ERBB2 amplification in breast cancer", "ERBB2 amplified breast tumours respond to trastuzumab."),
    Doc("2", "HER2 positive breast cancer", "HER2 overexpression predicts trastuzumab response in breast tumours."),
    Doc("3", "BRAF V600E in melanoma", "BRAF V600E mutant melanoma responds to vemurafenib."),
    Doc("4", "Epidermal growth factor receptor mutations in lung cancer", "EGFR exon 19 deletions and gefitinib."),
    Doc("5", "KRAS G12C in colorectal cancer", "Sotorasib targets KRAS G12C."),
    Doc("6", "Growth factor signalling", "Growth factors regulate cell growth."),
    Doc("7", "Melanoma immunotherapy", "Checkpoint inhibitors in advanced melanoma."),
    Doc("8", "Trastuzumab cardiotoxicity", "Cardiac events during trastuzumab therapy."),
]


@pytest.fixture(scope="module")
def index() -> LexicalIndex:
    return LexicalIndex.build(CORPUS)


def term(index: LexicalIndex, token: str) -> int:
    return int(index.retriever.vocab_dict[token])


def dense_term_scores(index: LexicalIndex) -> np.ndarray:
    """(n_docs, vocabulary) BM25(t, d), asked of bm25s one token at a time: the reference."""
    n_terms = len(index.retriever.scores["indptr"]) - 1
    out = np.zeros((len(index), n_terms))
    for token, column in index.retriever.vocab_dict.items():
        if column < n_terms:  # bm25s adds an empty token "" past the matrix's columns
            out[:, column] = index.retriever.get_scores([token])
    return out


# --- term_weights -------------------------------------------------------------------------------


def test_term_weights_stem_like_the_index_and_take_the_max_share_over_forms(index):
    weights = index.term_weights([
        ("epidermal growth factor receptors", 1.0),  # four tokens: 0.25 each; "receptors" → "receptor"
        ("growth", 0.5),  # one token: its whole weight beats the 0.25 share
        ("EGFR", 0.8),
        ("the EGFR", 0.3),  # stop word removed; smaller than 0.8, so 0.8 stays
    ])
    assert weights == pytest.approx({
        term(index, "epiderm"): 0.25,
        term(index, "growth"): 0.5,
        term(index, "factor"): 0.25,
        term(index, "receptor"): 0.25,
        term(index, "egfr"): 0.8,
    })


def test_term_weights_drop_unknown_tokens_empty_forms_and_non_positive_weights(index):
    assert index.term_weights([("ALK fusion", 1.0)]) == {}
    # The unknown word still counts in the form's length: BRAF gets half the weight.
    assert index.term_weights([("BRAF zebrafish", 1.0)]) == {term(index, "braf"): pytest.approx(0.5)}
    assert index.term_weights([("", 1.0), ("   ", 1.0), ("of the", 1.0), ("BRAF", 0.0), ("KRAS", -1.0)]) == {}
    assert index.term_weights([]) == {}


# --- weighted_scores ----------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["lucene", "robertson", "bm25l", "bm25+"])
def test_weighted_scores_with_unit_weights_equal_bm25s(method):
    index = LexicalIndex.build(CORPUS, LexicalConfig(method=method))
    tokens = ["breast", "trastuzumab", "melanoma", "growth", "v600e"]
    scores = index.weighted_scores({term(index, t): 1.0 for t in tokens})
    assert scores.shape == (len(CORPUS),) and scores.dtype == np.float32
    np.testing.assert_allclose(scores, index.retriever.get_scores(tokens), rtol=1e-6, atol=1e-6)
    assert scores[0] > 0 and scores[4] == pytest.approx(index.retriever.get_scores(tokens)[4])


def test_weighted_scores_are_linear_in_the_weights(index):
    a, b = term(index, "breast"), term(index, "trastuzumab")
    expected = 2.0 * index.weighted_scores({a: 1.0}) + 0.5 * index.weighted_scores({b: 1.0})
    np.testing.assert_allclose(index.weighted_scores({a: 2.0, b: 0.5}), expected, rtol=1e-6)
    np.testing.assert_array_equal(index.weighted_scores({}), np.zeros(len(CORPUS), dtype=np.float32))


def test_weighted_scores_reject_a_token_id_from_another_vocabulary(index):
    with pytest.raises(LexicalIndexError, match="token id 99999 is not in this BM25 index"):
        index.weighted_scores({99999: 1.0})


def test_a_synonym_form_finds_the_document_that_only_uses_the_synonym(index):
    her2_only = 1  # row of doc "2", which writes HER2 and never ERBB2
    assert index.weighted_scores(index.term_weights([("ERBB2", 1.0)]))[her2_only] == 0
    scores = index.weighted_scores(index.term_weights([("ERBB2", 1.0), ("HER2", 1.0)]))
    assert scores[her2_only] > 0 and scores[0] > 0
    assert np.count_nonzero(scores) == 2


# --- search_weighted ----------------------------------------------------------------------------


def test_search_weighted_ranks_by_score_and_leaves_out_zero_scores(index):
    weights = index.term_weights([("trastuzumab", 1.0), ("breast", 0.5)])
    scores = index.weighted_scores(weights)
    hits = index.search_weighted(weights, k=10)
    assert {d for d, _ in hits} == {"1", "2", "8"}  # the only documents with either word
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    assert all(s == pytest.approx(float(scores[int(d) - 1])) for d, s in hits)
    assert index.search_weighted(weights, k=2) == hits[:2]
    assert index.search_weighted(weights, k=0) == []
    assert index.search_weighted({}, k=5) == []


def test_search_weighted_breaks_ties_by_doc_id_not_row():
    twins = [Doc(pmid, "BRAF melanoma", "") for pmid in ("c", "b", "a")] + [Doc("z", "KRAS", "")]
    index = LexicalIndex.build(twins)
    weights = index.term_weights([("BRAF", 1.0)])
    assert [d for d, _ in index.search_weighted(weights, k=1)] == ["a"]
    assert [d for d, _ in index.search_weighted(weights, k=5)] == ["a", "b", "c"]


# --- doc_term_matrix ----------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["lucene", "bm25l"])
def test_doc_term_matrix_holds_bm25_term_scores_per_document(method):
    index = LexicalIndex.build(CORPUS, LexicalConfig(method=method))
    matrix = index.doc_term_matrix()
    assert matrix.format == "csr" and matrix.shape == (len(CORPUS), len(index.retriever.scores["indptr"]) - 1)
    reference = dense_term_scores(index)  # (n_docs, vocabulary)
    contains = (matrix != 0).toarray()  # the (document, term) pairs where the term occurs
    np.testing.assert_allclose(matrix.toarray()[contains], reference[contains], rtol=1e-6)
    if method == "lucene":  # BM25L gives absent terms a score too, which the matrix leaves out
        assert not reference[~contains].any()
    assert index.doc_term_matrix() is matrix  # built once


# --- RM3 ----------------------------------------------------------------------------------------


def reference_rm3(index: LexicalIndex, weights: dict[int, float], config: RM3Config) -> dict[int, float]:
    """RM3 written out in plain loops over bm25s's own per-token scores."""
    token_of = {column: token for token, column in index.retriever.vocab_dict.items()}
    first = sum(w * index.retriever.get_scores([token_of[t]]).astype(np.float64) for t, w in weights.items())
    doc_models = dense_term_scores(index)  # (n_docs, vocabulary)
    order = sorted((row for row in range(len(index)) if first[row] > 0), key=lambda r: -first[r])[: config.fb_docs]
    total = sum(first[r] for r in order)
    relevance: dict[int, float] = {}
    for row in order:
        length = doc_models[row].sum()
        for t in np.flatnonzero(doc_models[row]):
            relevance[int(t)] = relevance.get(int(t), 0.0) + first[row] / total * doc_models[row, t] / length
    kept = sorted(relevance, key=lambda t: (-relevance[t], t))[: config.fb_terms]
    kept_total = sum(relevance[t] for t in kept)
    q_total = sum(weights.values())
    out = {t: config.original_weight * w / q_total for t, w in weights.items()}
    for t in kept:
        out[t] = out.get(t, 0.0) + (1 - config.original_weight) * relevance[t] / kept_total
    return out


def test_rm3_adds_terms_of_the_top_documents_and_keeps_weights_summing_to_1(index):
    weights = {term(index, "breast"): 1.0}
    assert index.weighted_scores(weights)[7] == 0  # doc "8": trastuzumab, never "breast"
    expanded = rm3(index, weights)  # the two breast-cancer documents are the feedback
    assert sum(expanded.values()) == pytest.approx(1.0)
    assert expanded[term(index, "breast")] >= 0.5
    # trastuzumab co-occurs with "breast" in both feedback documents; melanoma in neither.
    assert expanded.get(term(index, "trastuzumab"), 0.0) > 0
    assert term(index, "melanoma") not in expanded
    assert index.weighted_scores(expanded)[7] > 0  # so the expanded query now finds doc "8"
    fewer = rm3(index, weights, RM3Config(fb_terms=3))
    assert len(fewer) <= 1 + 3 and sum(fewer.values()) == pytest.approx(1.0)


# fb_terms above the vocabulary size: ties at the cut would make the kept set depend on tie order.
@pytest.mark.parametrize("config", [RM3Config(fb_terms=1000), RM3Config(fb_docs=2, fb_terms=1000, original_weight=0.3)])
def test_rm3_matches_a_plain_reference(index, config):
    weights = {term(index, "melanoma"): 1.0, term(index, "braf"): 0.5}
    expected = reference_rm3(index, weights, config)
    got = rm3(index, weights, config)
    assert got.keys() == expected.keys()
    assert got == pytest.approx(expected, rel=1e-5)


def test_rm3_returns_the_weights_unchanged_when_nothing_matches(index):
    weights = {term(index, "braf"): 2.0}
    assert rm3(index, weights, first=np.zeros(len(CORPUS), dtype=np.float32)) == weights
    assert rm3(index, {}) == {}
    assert rm3(index, index.term_weights([("ALK fusion", 1.0)])) == {}


def test_rm3_uses_the_given_first_pass_and_checks_its_shape(index):
    weights = {term(index, "braf"): 1.0}
    # A first pass that (wrongly) prefers doc "5" feeds back KRAS terms.
    first = np.zeros(len(CORPUS), dtype=np.float32)
    first[4] = 1.0
    assert term(index, "kras") in rm3(index, weights, first=first)
    with pytest.raises(ValueError, match="one score per document"):
        rm3(index, weights, first=np.ones(3, dtype=np.float32))


def test_rm3_config_is_checked():
    with pytest.raises(ValueError, match="at least one feedback document"):
        RM3Config(fb_docs=0)
    with pytest.raises(ValueError, match="original_weight must lie in"):
        RM3Config(original_weight=1.5)


# --- after save / load ----------------------------------------------------------------------------


def test_weighted_search_and_rm3_work_on_a_memory_mapped_index(index, tmp_path):
    index.save(tmp_path)
    loaded = LexicalIndex.load(tmp_path, mmap=True)
    assert isinstance(loaded.retriever.scores["data"], np.memmap)
    forms = [("ERBB2", 1.0), ("HER2", 1.0), ("breast cancer", 0.5)]
    weights = loaded.term_weights(forms)
    assert weights == index.term_weights(forms)
    np.testing.assert_array_equal(loaded.weighted_scores(weights), index.weighted_scores(weights))
    assert loaded.search_weighted(weights, k=5) == index.search_weighted(weights, k=5)
    assert (loaded.doc_term_matrix() != index.doc_term_matrix()).nnz == 0
    assert rm3(loaded, weights) == pytest.approx(rm3(index, weights))
