"""The Milvus backend (index.milvus) on Milvus Lite and on a Milvus server process: the same answers as FAISS,
a clear error when it cannot serve.

The server (the ``milvus`` package's 2.3.5 standalone: ``milvus_server`` in tests/conftest.py) is one process for the
session, and a build there takes seconds (create, flush, load): its tests share one flat collection (``served``) and
build only what differs between the engines, the index kinds. A server restart under a served version is
tests/curation/versions/test_milvus_backend.py's.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid

import numpy as np
import pytest

from index.dense import DenseConfig, DenseIndex, DenseIndexError
from index.loading import load_dense
from index.milvus import MilvusIndex, MilvusUnavailable, connect
from index.milvus_schema import collection_name

pytest.importorskip("milvus_lite")
pytestmark = pytest.mark.milvus_server

RNG = np.random.default_rng(7)
VECTORS = RNG.normal(size=(300, 16)).astype(np.float32)
VECTORS /= np.linalg.norm(VECTORS, axis=1, keepdims=True)
IDS = [str(10_000_000 + i) for i in range(len(VECTORS))]
TEXTS = [f"gene G{i % 17} variant V{i}E in tumour type T{i % 5}" for i in range(len(VECTORS))]


def _milvus(tmp_path, config=DenseConfig("flat"), texts=TEXTS, name="v1", uri="") -> MilvusIndex:
    return MilvusIndex.build(VECTORS, IDS, "m", config, uri=uri or str(tmp_path / "dense" / "milvus.db"),
                             collection=collection_name(name), texts=texts)


@pytest.fixture(scope="module")
def served(milvus_server, tmp_path_factory):
    """One flat collection of the vectors (texts given) on the server, and its saved version folder."""
    folder = tmp_path_factory.mktemp("served") / "dense"
    milvus = _milvus(None, name=f"shared_{uuid.uuid4().hex[:8]}", uri=milvus_server.uri)
    milvus.save(folder)
    milvus.close()
    return folder


@pytest.fixture(params=["lite", "server"])
def flat(request, tmp_path) -> MilvusIndex:
    """A flat collection of the vectors with their texts: a new Milvus Lite file, or the server's shared one."""
    milvus = _milvus(tmp_path) if request.param == "lite" else MilvusIndex.load(request.getfixturevalue("served"))
    yield milvus
    milvus.close()


def test_flat_collection_returns_faiss_flat_answers(flat):
    milvus = flat
    faiss = DenseIndex.build(VECTORS, IDS, "m", DenseConfig("flat"))
    queries = VECTORS[:20] + 0.05 * RNG.normal(size=(20, 16)).astype(np.float32)
    for ours, theirs in zip(milvus.search(queries, 10), faiss.search(queries, 10), strict=True):
        assert [d for d, _ in ours] == [d for d, _ in theirs]
        assert np.allclose([s for _, s in ours], [s for _, s in theirs], atol=1e-4)
    assert len(milvus) == len(IDS) and milvus.dimension == 16
    assert sorted(milvus.ids) == sorted(IDS)


@pytest.mark.parametrize("config", [DenseConfig("hnsw", hnsw_m=8, ef_construction=40, ef_search=64),
                                    DenseConfig("ivfpq", nlist=8, pq_m=4, nprobe=8, refine="sq8")])
def test_approximate_kinds_find_each_vector_itself(tmp_path, config):
    milvus = _milvus(tmp_path, config, texts=None)
    hits = milvus.search(VECTORS[:30], 1)
    assert sum(h[0][0] == doc for h, doc in zip(hits, IDS[:30], strict=True)) >= 28


@pytest.mark.parametrize("config, engine_type", [
    (DenseConfig("hnsw", hnsw_m=8, ef_construction=40, ef_search=64), "HNSW"),
    (DenseConfig("ivfpq", nlist=8, pq_m=4, nprobe=8, refine=""), "IVF_PQ"),  # the kind Lite cannot build
])
def test_the_server_builds_the_approximate_kinds(milvus_server, config, engine_type):
    milvus = _milvus(None, config, texts=None, name=f"kind_{uuid.uuid4().hex[:8]}", uri=milvus_server.uri)
    described = milvus.client.describe_index(milvus.collection, "vector")
    assert described["index_type"] == engine_type and milvus.manifest()["engine_index"]["type"] == engine_type
    hits = milvus.search(VECTORS[:30], 1)
    assert sum(h[0][0] == doc for h, doc in zip(hits, IDS[:30], strict=True)) >= 28
    milvus.drop()
    milvus.close()


def test_the_server_keeps_no_texts_and_says_why(served, milvus_server):
    """The 2.3.5 server has no BM25 function (Milvus 2.5): a build keeps the vectors and names what it left out."""
    manifest = json.loads((served / "manifest.json").read_text())
    assert manifest["full_text"] is False and manifest["engine"] == "v2.3.5-lite"
    assert "has no BM25 function" in manifest["full_text_note"]
    milvus = MilvusIndex.load(served)
    with pytest.raises(DenseIndexError, match="without texts; it has no BM25 .*Milvus v2.3.5-lite has no BM25"):
        milvus.search_text(["variant V42E"], 3)
    with pytest.raises(MilvusUnavailable, match="cannot keep texts .*has no BM25 function"):
        MilvusIndex.create(milvus_server.uri, "never_made", 16, "m", full_text=True)
    assert not milvus.client.has_collection("never_made")
    milvus.close()


def test_vectors_and_known(flat):
    assert np.allclose(flat.vectors([IDS[5], IDS[2]]), VECTORS[[5, 2]], atol=1e-6)
    assert flat.known([IDS[0], "nope"]) == {IDS[0]}
    with pytest.raises(DenseIndexError, match="not in collection"):
        flat.vectors(["nope"])


def test_add_skips_known_ids(tmp_path):
    milvus = _milvus(tmp_path)
    new = RNG.normal(size=(2, 16)).astype(np.float32)
    assert milvus.add(new, [IDS[0], "20000000"], ["old", "new text"]) == 1  # the known id is skipped
    assert len(milvus) == len(IDS) + 1


def test_engine_bm25_ranks_the_document_that_says_the_words(tmp_path):
    milvus = _milvus(tmp_path)
    top = milvus.search_text(["variant V42E"], 3)[0]
    assert top[0][0] == IDS[42] and top[0][1] > 0
    no_text = _milvus(tmp_path / "other", texts=None)
    with pytest.raises(DenseIndexError, match="without texts"):
        no_text.search_text(["x"], 3)


def test_saved_folder_loads_back_through_the_backend_switch(tmp_path):
    milvus = _milvus(tmp_path)
    milvus.save(tmp_path / "dense")
    milvus.close()
    manifest = json.loads((tmp_path / "dense" / "manifest.json").read_text())
    assert manifest["backend"] == "milvus" and manifest["documents"] == len(IDS)
    loaded = load_dense(tmp_path / "dense")
    assert isinstance(loaded, MilvusIndex)
    assert loaded.search(VECTORS[:1], 1)[0][0][0] == IDS[0]
    # A FAISS folder still loads as FAISS through the same switch.
    DenseIndex.build(VECTORS, IDS, "m").save(tmp_path / "faiss")
    assert isinstance(load_dense(tmp_path / "faiss"), DenseIndex)


def test_missing_collection_and_unreachable_server_are_named(tmp_path):
    milvus = _milvus(tmp_path)
    milvus.save(tmp_path / "dense")
    milvus.drop()
    milvus.close()
    with pytest.raises(MilvusUnavailable, match="has no collection curation_v1"):
        MilvusIndex.load(tmp_path / "dense")
    with pytest.raises(MilvusUnavailable, match="does not answer"):
        connect("http://127.0.0.1:9", timeout=2)


def test_the_server_names_a_missing_collection_and_a_moved_server(served, tmp_path):
    manifest = json.loads((served / "manifest.json").read_text())
    shutil.copytree(served, tmp_path / "dense")
    (tmp_path / "dense" / "manifest.json").write_text(json.dumps({**manifest, "collection": "curation_gone"}))
    with pytest.raises(MilvusUnavailable, match=f"Milvus at {manifest['uri']} has no collection curation_gone"):
        MilvusIndex.load(tmp_path / "dense")
    # A server that moved: the URI given at load (the app's CURATION_MILVUS_URI) wins over the recorded one.
    (tmp_path / "dense" / "manifest.json").write_text(json.dumps({**manifest, "uri": "http://127.0.0.1:9"}))
    moved = load_dense(tmp_path / "dense", manifest["uri"])
    assert moved.uri == manifest["uri"] and moved.search(VECTORS[:1], 1)[0][0][0] == IDS[0]
    moved.close()


def test_a_lite_file_another_process_holds_is_read_from_a_copy(tmp_path):
    milvus = _milvus(tmp_path)
    milvus.save(tmp_path / "dense")
    # This process keeps the file open; a second process reads the version anyway.
    code = ("import sys; from index.loading import load_dense; d = load_dense(sys.argv[1]); "
            "print(len(d), d.uri != sys.argv[1] + '/milvus.db')")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "dense")], capture_output=True, text=True,
                         timeout=120, cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == [str(len(IDS)), "True"]


def test_a_build_seals_its_rows_and_records_the_engine_index(tmp_path, monkeypatch):
    """Rows left in growing segments are searched without the index (at 50k vectors Lite took seconds a query):
    a build and an add flush them; the compressed kind is one Lite can build (it refuses IVF_PQ at sealing)."""
    from pymilvus import MilvusClient

    flushed = []
    real_flush = MilvusClient.flush
    monkeypatch.setattr(MilvusClient, "flush", lambda self, name, **kw: (flushed.append(name),
                                                                         real_flush(self, name, **kw))[1])
    milvus = _milvus(tmp_path, DenseConfig("ivfpq", nlist=8, nprobe=8), texts=None)
    assert flushed == [milvus.collection]
    described = milvus.client.describe_index(milvus.collection, "vector")
    assert described["index_type"] == "IVF_SQ8" and described["indexed_rows"] == len(IDS)
    assert milvus.manifest()["engine_index"]["type"] == "IVF_SQ8"
    milvus.add(RNG.normal(size=(1, 16)).astype(np.float32), ["30000000"])
    assert flushed == [milvus.collection] * 2
    assert milvus.search(milvus.vectors(["30000000"]), 1)[0][0][0] == "30000000"


def test_a_load_that_meets_a_half_written_index_file_is_retried(tmp_path, monkeypatch):
    """Milvus Lite writes a flushed segment's index in a background thread; a load meanwhile reads it half-written."""
    import index.milvus as milvus_module

    monkeypatch.setattr(milvus_module, "LOAD_RETRY_WAITS_S", (0.0, 0.0))
    milvus = _milvus(tmp_path, texts=None)
    real_load = milvus.client.load_collection
    calls = []

    def flaky_load(collection, *args, **kwargs):
        calls.append(collection)
        if len(calls) == 1:
            raise RuntimeError("No data left in file")
        return real_load(collection, *args, **kwargs)

    monkeypatch.setattr(milvus.client, "load_collection", flaky_load)
    milvus.seal()
    assert len(calls) == 2
    assert milvus.search(VECTORS[:1], 1)[0][0][0] == IDS[0]

    def broken_load(collection, *args, **kwargs):
        calls.append(collection)
        raise RuntimeError("No data left in file")

    monkeypatch.setattr(milvus.client, "load_collection", broken_load)
    calls.clear()
    with pytest.raises(MilvusUnavailable, match="failed to load in collection .*No data left in file"):
        milvus.seal()
    assert len(calls) == 3  # two retries, then the named failure
