"""Fixtures that the test folders of more than one curation package share: the recogniser's tiny corpora
(entities/, jobs/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.learning.recogniser.data import BC5CDR, BIORED
from tests.curation.entities.tiny_recogniser import _corpus, _pubtator


@pytest.fixture
def corpora(tmp_path) -> Path:
    """A data directory laid out as BioRED + BC5CDR, each file a few tiny documents of its own."""
    root = tmp_path / "data"
    for offset, relative in enumerate((*BIORED, *BC5CDR)):
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_pubtator(_corpus(12 if offset in (0, 3) else 4, offset=100 * offset)))
    return root
