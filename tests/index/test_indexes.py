"""Dense (FAISS) and lexical (bm25s) indexes: build, search, save, load, add, and broken files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from curation.records import Document
from index.dense import IDS_FILE, INDEX_FILE, MANIFEST_FILE, DenseConfig, DenseIndex, DenseIndexError
from index.lexical import LexicalIndex, LexicalIndexError


def unit_vectors(n: int, dim: int, seed: int = 0) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)  # (n, dim)


VECTORS = unit_vectors(400, 16)
IDS = [f"doc{i}" for i in range(400)]
CONFIGS = {
    "flat": DenseConfig("flat"),
    "hnsw": DenseConfig("hnsw", hnsw_m=8, ef_construction=40, ef_search=64),
    # 400 vectors → nlist = 400 // 39 = 10 cells; probing all of them leaves only the PQ error.
    "ivfpq": DenseConfig("ivfpq", nlist=10, pq_m=4, pq_bits=8, nprobe=10),
}


@pytest.mark.parametrize("kind", CONFIGS)
def test_dense_build_search_save_load_round_trip(kind, tmp_path):
    index = DenseIndex.build(VECTORS, IDS, model="test-model", config=CONFIGS[kind])
    assert len(index) == 400 and index.dimension == 16
    hits = index.search(VECTORS[:5], k=5)  # each query is a stored vector
    assert [len(h) for h in hits] == [5] * 5
    for i, row in enumerate(hits):
        scores = [s for _, s in row]
        assert scores == sorted(scores, reverse=True)
        if kind == "ivfpq":  # compressed: the document itself is among the first few
            assert f"doc{i}" in [d for d, _ in row]
        else:
            assert row[0][0] == f"doc{i}" and row[0][1] == pytest.approx(1.0, abs=1e-4)
    index.save(tmp_path)
    manifest = json.loads((tmp_path / MANIFEST_FILE).read_text())
    assert manifest["model"] == "test-model" and manifest["documents"] == 400 and manifest["index"]["kind"] == kind
    loaded = DenseIndex.load(tmp_path)
    assert loaded.config == CONFIGS[kind] and loaded.model == "test-model" and loaded.ids == IDS
    assert loaded.search(VECTORS[:5], k=5) == hits


def test_dense_search_checks_dimension_and_caps_k():
    index = DenseIndex.build(VECTORS[:3], IDS[:3], model="m")
    assert len(index.search(VECTORS[:1], k=100)[0]) == 3
    with pytest.raises(DenseIndexError, match="dimension 8 but the index was built with 16"):
        index.search(np.ones((1, 8), dtype=np.float32), k=1)
    with pytest.raises(DenseIndexError, match="2 ids for 3 vectors"):
        DenseIndex.build(VECTORS[:3], IDS[:2], model="m")
    with pytest.raises(DenseIndexError, match="unknown dense index kind 'lsh'"):
        DenseIndex.build(VECTORS[:3], IDS[:3], model="m", config=DenseConfig("lsh"))


def test_dense_add_keeps_old_vectors_and_skips_known_ids():
    index = DenseIndex.build(VECTORS[:3], IDS[:3], model="m")
    before = index.vectors(IDS[:3]).copy()
    added = index.add(VECTORS[2:5], IDS[2:5])  # doc2 is already indexed
    assert added == 2 and len(index) == 5 and index.ids == IDS[:5]
    np.testing.assert_array_equal(index.vectors(IDS[:3]), before)
    assert index.search(VECTORS[4:5], k=1)[0][0][0] == "doc4"
    assert index.add(VECTORS[:2], IDS[:2]) == 0


def test_adding_documents_encodes_only_the_new_ones():
    # The encoder is called for the new documents alone; old rows are not re-embedded.
    calls: list[list[str]] = []

    def encode(texts: list[str]) -> np.ndarray:
        calls.append(list(texts))
        return unit_vectors(len(texts), 16, seed=len(calls))

    old = ["a", "b", "c"]
    index = DenseIndex.build(encode(old), old, model="m")
    new = [d for d in ["c", "d", "e"] if d not in set(index.ids)]
    index.add(encode(new), new)
    assert calls == [["a", "b", "c"], ["d", "e"]]
    assert len(index) == 5


def _saved(tmp_path) -> DenseIndex:
    index = DenseIndex.build(VECTORS[:10], IDS[:10], model="m")
    index.save(tmp_path)
    return index


@pytest.mark.parametrize("missing", [INDEX_FILE, IDS_FILE, MANIFEST_FILE])
def test_dense_load_names_the_missing_file(tmp_path, missing):
    _saved(tmp_path)
    (tmp_path / missing).unlink()
    with pytest.raises(DenseIndexError, match=f"incomplete: {missing} is missing"):
        DenseIndex.load(tmp_path)


@pytest.mark.parametrize("broken", [INDEX_FILE, IDS_FILE, MANIFEST_FILE])
def test_dense_load_reports_corrupted_files(tmp_path, broken):
    _saved(tmp_path)
    (tmp_path / broken).write_bytes(b"\x00not what it should be{")
    with pytest.raises(DenseIndexError, match="corrupted"):
        DenseIndex.load(tmp_path)


def test_dense_load_rejects_inconsistent_or_foreign_files(tmp_path):
    _saved(tmp_path)
    (tmp_path / IDS_FILE).write_text(json.dumps(IDS[:9]))
    with pytest.raises(DenseIndexError, match="inconsistent: 10 vectors, 9 ids"):
        DenseIndex.load(tmp_path)
    (tmp_path / IDS_FILE).write_text(json.dumps(IDS[:10]))
    manifest = json.loads((tmp_path / MANIFEST_FILE).read_text())
    (tmp_path / MANIFEST_FILE).write_text(json.dumps({**manifest, "format_version": 99}))
    with pytest.raises(DenseIndexError, match="has format 99"):
        DenseIndex.load(tmp_path)


DOCS = [
    Document("1", "BRAF V600E in melanoma", "Vemurafenib inhibits mutant BRAF kinase."),
    Document("2", "EGFR in lung cancer", "Gefitinib and erlotinib target EGFR mutations."),
    Document("3", "", "KRAS G12C tumours respond to sotorasib ."),  # HoC style: no title
    Document("4", "Cisplatin nephrotoxicity", "Cisplatin caused renal injury in rats."),
]


def test_lexical_search_ranks_and_drops_zero_scores():
    index = LexicalIndex.build(DOCS)
    hits = index.search(["vemurafenib BRAF", "sotorasib", "unknownword"], k=3)
    assert hits[0][0][0] == "1" and len(hits[0]) == 1  # only document 1 has either word
    assert [d for d, _ in hits[1]] == ["3"]
    assert hits[2] == []
    assert index.search([], k=3) == []


def test_lexical_save_load_round_trip_with_mmap(tmp_path):
    index = LexicalIndex.build(DOCS)
    queries = ["EGFR gefitinib", "cisplatin renal", "BRAF"]
    expected = index.search(queries, k=4)
    index.save(tmp_path)
    loaded = LexicalIndex.load(tmp_path, mmap=True)
    assert isinstance(loaded.retriever.scores["data"], np.memmap)
    assert loaded.ids == ["1", "2", "3", "4"] and loaded.config == index.config
    assert loaded.search(queries, k=4) == expected
    assert LexicalIndex.load(tmp_path, mmap=False).search(queries, k=4) == expected


def test_lexical_load_errors(tmp_path):
    LexicalIndex.build(DOCS).save(tmp_path)
    (tmp_path / "ids.json").write_text(json.dumps(["1", "2"]))
    with pytest.raises(LexicalIndexError, match="manifest says 4 documents, ids.json has 2"):
        LexicalIndex.load(tmp_path)
    (tmp_path / "ids.json").unlink()
    with pytest.raises(LexicalIndexError, match="ids.json is missing"):
        LexicalIndex.load(tmp_path)
