"""The rule that picks a dense index from the corpus size and the machine's memory (index.dense.choose_config)."""

from __future__ import annotations

import pytest

from index.dense import DenseIndexError, choose_config, index_bytes

GIB = 1024**3


def test_small_corpora_get_exact_search():
    config, why = choose_config(3_476, 384, 24 * GIB)
    assert config.kind == "flat" and "3,476 documents" in why


def test_a_million_on_a_24_gib_machine_gets_hnsw():
    config, why = choose_config(1_000_000, 384, 24 * GIB)
    assert (config.kind, config.hnsw_m, config.ef_search) == ("hnsw", 32, 128)
    assert "within half of this machine's 24 GiB" in why


def test_when_hnsw_does_not_fit_ivfpq_with_refine_is_chosen():
    config, why = choose_config(10_000_000, 384, 24 * GIB)
    assert (config.kind, config.refine, config.k_factor) == ("ivfpq", "sq8", 8)
    assert 384 % config.pq_m == 0 and config.nlist >= 4 * 10_000_000**0.5 / 2
    assert index_bytes("ivfpq", 10_000_000, 384, config) <= 12 * GIB < index_bytes("hnsw", 10_000_000, 384)
    assert "HNSW would take" in why


def test_all_of_pubmed_on_a_small_machine_points_at_a_milvus_server():
    with pytest.raises(DenseIndexError, match="use a Milvus server"):
        choose_config(36_000_000, 768, 8 * GIB)


def test_an_asked_kind_is_built_as_asked_and_an_unknown_one_is_refused():
    assert choose_config(100, 384, 24 * GIB, kind="hnsw")[0].kind == "hnsw"
    assert choose_config(100, 384, 24 * GIB, kind="ivfpq")[0].refine == "sq8"
    with pytest.raises(DenseIndexError, match="unknown dense index kind 'annoy'"):
        choose_config(100, 384, 24 * GIB, kind="annoy")
