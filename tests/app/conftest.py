"""The stores the page tests run against: the hand-written CIViC and PubTator fixtures, and for the real-browser
tests the real data's (built once per test session, each test served its own copy)."""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import pytest

from bench._server import build_store
from curation.store.opening import open_store
from curation.workflows.ingestion import ingest_corpus, ingest_kb


@pytest.fixture(scope="session", autouse=True)
def _component_manifests_scanned_once():
    """Each AppTest's first run scans every installed distribution for Streamlit component manifests (~0.4 s,
    ~100 AppTests here); the installed packages do not change during a test run, so the first scan's
    answer serves every AppTest."""
    from streamlit.components.v2 import manifest_scanner

    scan = functools.cache(manifest_scanner.scan_component_manifests)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(manifest_scanner, "scan_component_manifests", lambda: list(scan()))
        yield


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


@pytest.fixture(scope="session")
def _real_store_built(tmp_path_factory, data_dir) -> Path:
    """The real data's store (:func:`bench._server.build_store`: CIViC's current export, BioRED and BC5CDR),
    built once per test session; tests get copies (:func:`real_store`), never this file."""
    db = tmp_path_factory.mktemp("real-store") / "store.duckdb"
    build_store(db, data_dir)
    return db


@pytest.fixture
def real_store(_real_store_built, tmp_path) -> tuple[Path, Path]:
    """A copy of the real data's store in this test's folder, which the test may write, and an empty models
    folder (the app ranks with BM25 alone); returns both paths, as :func:`bench._server.real_data_app` does."""
    db, models = tmp_path / "store.duckdb", tmp_path / "models"
    for source in _real_store_built.parent.glob(_real_store_built.name + "*"):  # the file, and a WAL if one is left
        shutil.copyfile(source, tmp_path / source.name)
    models.mkdir()
    return db, models
