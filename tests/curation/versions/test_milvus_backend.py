"""A model version on the Milvus backend (Milvus Lite, and a Milvus server process) serves what the same version
on FAISS serves.

Real data: the BioRED dev abstracts (100) and the CIViC KB. Zero-shot versions of the offline MiniLM are built from
the same corpus, one keeping its vectors in FAISS files, one in a Milvus Lite collection and one on the session's
Milvus server (``milvus_server``, tests/conftest.py; where it cannot start, the Lite half still runs and the server
half says why); the served search (the Curate page's) must return the same abstracts in the same order for real
queries, activation must swap between them, and an engine that is down must leave the served version in place with
a message that names the engine; a server that restarts under a served version answers again once it is back.
"""

from __future__ import annotations

import json

import pytest

from curation.config import load_settings
from curation.errors import USER_ERRORS, CurationError
from curation.learning.build import BuildRequest, IndexChoice, build_version
from curation.learning.training import TrainConfig
from curation.retrieval import result_rows as results
from curation.schemas import PO
from curation.store.corpus import iter_documents
from curation.store.opening import open_store
from curation.versions import catalog, serving
from curation.workflows import versions as catalogue
from curation.workflows.ingestion import ingest_corpus, ingest_kb
from index.milvus import MilvusIndex
from index.search import Mode

pytest.importorskip("milvus_lite")
pytestmark = pytest.mark.milvus_server

QUERIES = [{"Gene": "BRCA1"}, {"Gene": "TP53"}, {"Gene": "EGFR", "Variant": "L858R"}, {"Gene": "APOE"}]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    data_dir = load_settings().data_dir
    if not (data_dir / "README.md").exists():
        pytest.skip(f"real data not found at {data_dir} (set CURATION_DATA_DIR)")
    root = tmp_path_factory.mktemp("milvus")
    con = open_store(root / "store.duckdb")
    ingest_corpus(con, "pubtator", data_dir / "biored" / "Dev.PubTator")
    ingest_kb(con, "civic", data_dir / "civic" / "civic_evidence_2026-05.tsv")
    for name, backend in (("po-faiss", "faiss"), ("po-milvus", "milvus")):
        _build(con, root / "models", name, IndexChoice(kind="flat", backend=backend))
    yield con, root / "models"
    con.close()


def _build(con, models, name: str, index: IndexChoice) -> None:
    documents = {d.pmid: d for d in iter_documents(con)}
    version = build_version(BuildRequest(schema=PO, version=name, train=False, index=index,
                                         train_config=TrainConfig(max_seq_length=128)), documents, models)
    catalog.register_version(con, version)


@pytest.fixture(scope="module")
def on_server(built, milvus_server):
    """The same version built on the Milvus server process (``CURATION_MILVUS_URI`` as a lab would set it)."""
    con, models = built
    _build(con, models, "po-server", IndexChoice(kind="flat", backend="milvus", milvus_uri=milvus_server.uri))
    return milvus_server


@pytest.fixture(params=["po-milvus", "po-server"])
def milvus_version(request, built) -> str:
    """Each Milvus-backed version: on Milvus Lite, and on the server."""
    if request.param == "po-server":
        request.getfixturevalue("on_server")
    return request.param


def test_the_milvus_version_records_its_backend_and_collection(built, milvus_version):
    _, models = built
    manifest = json.loads((models / milvus_version / "manifest.json").read_text())
    assert manifest["dense"]["backend"] == "milvus" and manifest["dense"]["kind"] == "flat"
    dense = json.loads((models / milvus_version / "dense" / "manifest.json").read_text())
    assert dense["collection"] == f"curation_{milvus_version.replace('-', '_')}" and dense["documents"] == 100
    assert not (models / milvus_version / "dense" / "dense.faiss").exists()  # the vectors are in the engine
    # Milvus Lite keeps the texts with its BM25 function; the 2.3.5 server has none, and the manifest says so.
    assert dense["full_text"] == (milvus_version == "po-milvus")
    assert milvus_version == "po-milvus" or "has no BM25 function" in dense["full_text_note"]


@pytest.fixture(scope="module")
def curate(built):
    """The Curate page's matcher and linker over the store (built once: they take seconds)."""
    from curation.workflows import serving as app_serving

    matcher = app_serving.build_matcher(built[0])
    return matcher, results.default_linker(built[0], matcher, app_serving.build_normaliser(matcher))


def _served_orders(con, engine, matcher, linker, query) -> tuple[list[str], list[str]]:
    """The Curate page's order of abstracts for ``query``, and the dense top 10."""
    rows = results.curate_search(con, engine, matcher, PO, query, linker=linker).rows
    return [row.pmid for row in rows], [h.pmid for h in engine.search(PO, query, mode=Mode.DENSE, k=10).hits]


def test_served_search_is_the_same_on_both_backends(built, curate, milvus_version):
    con, models = built
    matcher, linker = curate
    engines = {name: serving.open_version(models / name) for name in ("po-faiss", milvus_version)}
    assert isinstance(engines[milvus_version].dense, MilvusIndex)
    compared = 0
    for query in QUERIES:
        faiss, milvus = (_served_orders(con, engine, matcher, linker, query) for engine in engines.values())
        assert faiss == milvus, query
        compared += bool(faiss[0])
    assert compared >= 3  # the queries find something: the comparison is not of empty lists
    for engine in engines.values():
        engine.close()


def test_activation_swaps_between_backends(built, milvus_version):
    con, models = built
    for name in ("po-faiss", milvus_version, "po-faiss"):
        catalogue.activate(con, name)
        served = serving.open_served(con, models, serving.serving_key(con, "PO"))
        assert served.version == name
        assert isinstance(served.dense, MilvusIndex) == (name == milvus_version)
        served.close()


def test_a_server_that_stops_is_refused_then_recovers(built, curate, on_server):
    """The server goes down under a served version: its searches say which engine and what to do, activating it is
    refused with the active version left in place; once it is back (same folder and port), the same served
    retriever answers as before, without being reopened."""
    con, models = built
    matcher, linker = curate
    catalogue.activate(con, "po-server")
    served = serving.open_served(con, models, serving.serving_key(con, "PO"))
    before = _served_orders(con, served, matcher, linker, QUERIES[0])
    catalogue.activate(con, "po-faiss")
    on_server.stop()
    try:
        with pytest.raises(USER_ERRORS, match=rf"Milvus at {on_server.uri} failed to .* start it"):
            _served_orders(con, served, matcher, linker, QUERIES[0])
        with pytest.raises(CurationError, match=rf"cannot activate po-server: Milvus at {on_server.uri} does not "
                                                r"answer .*start it.*the active version keeps serving"):
            catalogue.activate(con, "po-server")
        assert catalog.active_version(con, "PO").version == "po-faiss"
    finally:
        on_server.start()
    assert _served_orders(con, served, matcher, linker, QUERIES[0]) == before
    catalogue.activate(con, "po-server")  # the engine answers again: activation goes through
    assert catalog.active_version(con, "PO").version == "po-server"
    catalogue.activate(con, "po-faiss")
    served.close()


def test_an_engine_that_is_down_leaves_the_served_version_in_place(built, tmp_path):
    con, models = built
    catalogue.activate(con, "po-faiss")
    # The same version, as if built on a Milvus server that is now down.
    manifest_path = models / "po-milvus" / "dense" / "manifest.json"
    original = manifest_path.read_text()
    manifest_path.write_text(json.dumps({**json.loads(original), "uri": "http://127.0.0.1:9"}))
    try:
        with pytest.raises(CurationError, match=r"cannot activate po-milvus: .*Milvus server at http://127.0.0.1:9 "
                                                r"does not answer.*the active version keeps serving"):
            catalogue.activate(con, "po-milvus")
        assert catalog.active_version(con, "PO").version == "po-faiss"
        served = serving.open_served(con, models, serving.serving_key(con, "PO"))
        assert served.version == "po-faiss"
        assert "does not answer" in serving.load_problem(models / "po-milvus")
    finally:
        manifest_path.write_text(original)
