"""Shared fixtures: small hand-written files, and the real data folder when it is there."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.config import load_settings
from curation.store.opening import open_store

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True)
def _private_jobs_dir(tmp_path, monkeypatch):
    """Retraining jobs of a test write under its own folder, never the project's data/jobs."""
    monkeypatch.setenv("CURATION_JOBS_DIR", str(tmp_path / "jobs"))


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture
def data_dir() -> Path:
    """The shared real data; tests that need it are skipped cleanly when it is absent."""
    path = load_settings().data_dir
    if not (path / "README.md").exists():
        pytest.skip(f"real data not found at {path} (set CURATION_DATA_DIR)")
    return path


@pytest.fixture
def con(tmp_path):
    connection = open_store(tmp_path / "test.duckdb")
    yield connection
    connection.close()
