"""The Train & evaluate page's view and the sidebar's: what the pages draw, gathered without Streamlit."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from curation.config import load_settings
from curation.entities.dictionaries import build_lexicon
from curation.entities.matching import Matcher
from curation.grades import Grade
from curation.retrieval.result_rows import default_linker
from curation.schemas import PO
from curation.store.base import list_schemas, stats
from curation.store.corpus import iter_documents
from curation.store.decisions import record_decision
from curation.workflows.ingestion import ingest_corpus, ingest_kb
from curation.workflows.session import sidebar_view
from curation.workflows.train_view import compare_versions, open_train
from index.lexical import LexicalIndex
from index.search import Retriever

BRAF = {"Gene": "BRAF", "Variant": "V600E"}


@pytest.fixture
def loaded(con, fixtures):
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    record_decision(con, "ana", PO, BRAF, "1000001", Grade.COMPLETE, answer="Vemurafenib")
    record_decision(con, "ben", PO, BRAF, "1000001", Grade.NOT_RELEVANT)
    return con


def test_open_train_gathers_the_decisions_jobs_and_versions(loaded, tmp_path):
    settings = replace(load_settings(), models_dir=tmp_path / "models", jobs_dir=tmp_path / "jobs")
    view = open_train(loaded, settings, "PO")
    assert view.schema == "PO" and not view.running
    assert view.decision_line == "PO: 2 active decisions (1 complete, 0 partial, 1 not relevant)"
    assert view.active is None and view.base_model == ""
    assert view.history == [] and view.training is None
    assert view.versions == [] and view.models_dir == tmp_path / "models"
    assert "auto" in view.index_kinds and "faiss" in view.index_backends
    assert view.scorer  # the relation scorer's line: active, or how to train one
    # Without a choice in the sidebar: the store's first schema.
    assert open_train(loaded, settings, None).schema == view.schemas[0].name


def test_compare_versions_says_which_version_cannot_serve_and_compares_those_that_do(loaded):
    matcher = Matcher(build_lexicon(loaded))
    lexical = LexicalIndex.build(list(iter_documents(loaded)))
    linker = default_linker(loaded, matcher)
    engines = {"v1": Retriever(lexical=lexical, version="v1"), "v2": Retriever(lexical=lexical, version="v1")}
    refused = compare_versions(loaded, engines, matcher, linker, PO, BRAF, "v1", "v2")
    assert refused.shifts is None and len(refused.problems) == 1 and refused.problems[0].startswith("v2 does not")
    engines["v2"] = Retriever(lexical=lexical, version="v2")
    same = compare_versions(loaded, engines, matcher, linker, PO, BRAF, "v1", "v2")
    assert same.problems == () and [s.describe() for s in same.shifts] == ["same"] * len(same.shifts)
    assert same.shifts and same.summary.startswith(f"0 of {len(same.shifts)} abstracts changed place")
    assert {line["version"] for line in same.lines} == {"before: v1", "after: v2"}


def test_sidebar_view_counts_the_store_and_names_what_serves(loaded, tmp_path, monkeypatch):
    monkeypatch.setenv("CURATION_MODELS_DIR", str(tmp_path / "models"))
    view = sidebar_view(loaded, None)
    assert view.schemas == tuple(s.name for s in list_schemas(loaded)) and "PO" in view.schemas
    counts = stats(loaded)
    assert view.store_line == (f"Store: {counts['kb_records']} KB records · {counts['documents']} abstracts · "
                               f"{counts['decisions']} decisions")
    assert view.model_line == "Model: BM25 alone (no model version built for PO covers this store's abstracts)"
    assert view.job_line == ""


def _publish(models, version, schema, trained, documents):
    """A version with empty parts, registered in the store (the policy never loads it here)."""
    from curation.versions import registry
    from curation.versions.manifest import Manifest

    tmp = registry.staging(models, version)
    for part in ("model", "dense", "lexical"):
        (tmp / part).mkdir()
    return registry.publish(models, version, Manifest(schema=schema, documents=documents, trained=trained))


def test_a_schema_without_a_version_is_served_by_an_untrained_version_and_the_sidebar_says_whose(
        loaded, tmp_path, monkeypatch):
    from curation.store.base import content_counts
    from curation.versions import catalog
    from curation.versions.serving import planned_version, serving_key

    models = tmp_path / "models"
    monkeypatch.setenv("CURATION_MODELS_DIR", str(models))
    documents = content_counts(loaded)[0]
    base = _publish(models, "po-base", "PO", trained=False, documents=documents)
    catalog.register_version(loaded, base)
    # A version's untrained encoder learned nothing from PO: it serves the schema that has none of its own.
    assert planned_version(loaded, models, serving_key(loaded, "Gene-Disease")) == "po-base"
    line = sidebar_view(loaded, "Gene-Disease").model_line
    assert line.startswith("Model: po-base (the untrained base encoder, built for PO; none built for Gene-Disease")
    assert sidebar_view(loaded, "PO").model_line == "Model: po-base (the newest version built for PO; none activated)"
    # A trained PO version is PO's alone: Gene-Disease keeps the untrained one, and a key that names it.
    time.sleep(1.1)  # published a second later: the newest (the registry's times are in seconds)
    trained = _publish(models, "po-edel", "PO", trained=True, documents=documents)
    catalog.register_version(loaded, trained)
    assert planned_version(loaded, models, serving_key(loaded, "Gene-Disease")) == "po-base"
    assert serving_key(loaded, "Gene-Disease").active == ("newest:po-base",)
    assert planned_version(loaded, models, serving_key(loaded, "PO")) == "po-edel"


def test_the_sidebar_names_what_serves_the_schema_it_shows(loaded, tmp_path, monkeypatch):
    monkeypatch.setenv("CURATION_MODELS_DIR", str(tmp_path / "models"))
    first = sidebar_view(loaded, None)
    # An address naming a schema this store has not: the sidebar shows the first, and its model line is that one's.
    assert sidebar_view(loaded, "No-Such-Schema").model_line == first.model_line
    assert "No-Such-Schema" not in first.model_line
