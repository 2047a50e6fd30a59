"""The tiny spaCy recogniser the recogniser's tests share, trained once per module."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.entities.recogniser import CorpusPart, train_recogniser
from tests.curation.entities.tiny_recogniser import _corpus


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("recognisers") / "tiny"
    train_recogniser([CorpusPart("train", _corpus(24))], CorpusPart("dev", _corpus(6, offset=100)), out,
                     width=32, max_epochs=8)
    return out
