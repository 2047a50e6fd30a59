"""The store the page tests run against: the hand-written CIViC and PubTator fixtures."""

from __future__ import annotations

import pytest

from curation.store.opening import open_store
from curation.workflows.ingestion import ingest_corpus, ingest_kb


@pytest.fixture
def loaded_db(tmp_path, fixtures, monkeypatch):
    """A store with the fixture KB and corpus, and the app pointed at it (models in an empty folder)."""
    db = tmp_path / "app.duckdb"
    con = open_store(db)
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    con.close()
    monkeypatch.setenv("CURATION_DB", str(db))
    monkeypatch.setenv("CURATION_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("CURATION_CACHE_DIR", str(tmp_path / "cache"))  # the dictionaries' cached exclusions
    return db
