"""A model version on the Milvus backend (Milvus Lite here) serves what the same version on FAISS serves.

Real data: the BioRED dev abstracts (100) and the CIViC KB. Two zero-shot versions of the offline MiniLM
are built from the same corpus, one keeping its vectors in FAISS files, one in a Milvus Lite collection;
the served search (the Curate page's) must return the same abstracts in the same order for real queries,
activation must swap between them, and an engine that is down must leave the served version in place
with a message that names the engine.
"""

from __future__ import annotations

import json

import pytest

from curation.config import load_settings
from curation.errors import CurationError
from curation.learning.build import BuildRequest, IndexChoice, build_version
from curation.learning.training import TrainConfig
from curation.schemas import PO
from curation.store.corpus import iter_documents
from curation.store.opening import open_store
from curation.versions import catalog, serving
from curation.workflows import results
from curation.workflows import versions as catalogue
from curation.workflows.ingestion import ingest_corpus, ingest_kb
from index.milvus import MilvusIndex
from index.search import Mode

pytest.importorskip("milvus_lite")

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
    documents = {d.pmid: d for d in iter_documents(con)}
    config = TrainConfig(max_seq_length=128)
    for name, backend in (("po-faiss", "faiss"), ("po-milvus", "milvus")):
        version = build_version(BuildRequest(schema=PO, version=name, train=False, train_config=config,
                                             index=IndexChoice(kind="flat", backend=backend)),
                                documents, root / "models")
        catalog.register_version(con, version)
    yield con, root / "models"
    con.close()


def test_the_milvus_version_records_its_backend_and_collection(built):
    _, models = built
    manifest = json.loads((models / "po-milvus" / "manifest.json").read_text())
    assert manifest["dense"]["backend"] == "milvus" and manifest["dense"]["kind"] == "flat"
    dense = json.loads((models / "po-milvus" / "dense" / "manifest.json").read_text())
    assert dense["collection"] == "curation_po_milvus" and dense["documents"] == 100
    assert not (models / "po-milvus" / "dense" / "dense.faiss").exists()  # the vectors are in the engine


def test_served_search_is_the_same_on_both_backends(built):
    con, models = built
    from curation.workflows import serving as app_serving

    matcher = app_serving.build_matcher(con)
    linker = results.default_linker(con, matcher, app_serving.build_normaliser(matcher))
    engines = {name: serving.open_version(models / name) for name in ("po-faiss", "po-milvus")}
    assert isinstance(engines["po-milvus"].dense, MilvusIndex)
    compared = 0
    for query in QUERIES:
        orders = {name: [row.pmid for row in results.curate_search(con, engine, matcher, PO, query,
                                                                    linker=linker).rows]
                  for name, engine in engines.items()}
        assert orders["po-faiss"] == orders["po-milvus"], query
        compared += bool(orders["po-faiss"])
        dense = {name: [h.pmid for h in engine.search(PO, query, mode=Mode.DENSE, k=10).hits]
                 for name, engine in engines.items()}
        assert dense["po-faiss"] == dense["po-milvus"], query
    assert compared >= 3  # the queries find something: the comparison is not of empty lists
    for engine in engines.values():
        engine.close()


def test_activation_swaps_between_backends(built):
    con, models = built
    for name in ("po-faiss", "po-milvus", "po-faiss"):
        catalogue.activate(con, name)
        served = serving.open_served(con, models, serving.serving_key(con, "PO"))
        assert served.version == name
        assert isinstance(served.dense, MilvusIndex) == (name == "po-milvus")
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
