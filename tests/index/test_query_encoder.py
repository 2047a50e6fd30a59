"""The numpy query encoder against sentence-transformers on the packaged MiniLM: the same vectors, the same order."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from index.encoder import EncoderConfig, default_model_path, embedding_dimension, encode_queries, load_encoder
from index.query_encoder import QueryEncoder, UnsupportedEncoder, load_query_encoder

QUERIES = [
    "Treatment for gene BRAF and variant V600E?",
    "Treatment for gene EGFR and variant L858R?",
    "Treatment for gene KRAS and variant G12C?",
    "BCR::ABL1 fusion in chronic myeloid leukaemia (CML) treated with imatinib",
    "5-fluorouracil (5-FU) and cisplatin: Ser473 phosphorylation of AKT1",
    "TGFβ1 signalling — Müller cells, naïve T cells, 37 °C",
    "",
    "kinase " * 300,  # longer than the 256 tokens both truncate at
]
DOCUMENTS = [
    "BRAF V600E in melanoma. Vemurafenib inhibits the mutant BRAF kinase in patients with metastatic melanoma.",
    "EGFR L858R in lung cancer. Gefitinib targets activating EGFR kinase mutations.",
    "KRAS G12C mutations in lung tumours respond to sotorasib.",
    "Cisplatin nephrotoxicity: cisplatin caused renal injury in 12 patients.",
    "Melanoma surveillance: skin examinations detect thin lesions early.",
    "Imatinib in chronic myeloid leukaemia with the BCR-ABL1 fusion.",
]


@pytest.fixture(scope="module")
def models():
    folder = default_model_path()
    return load_query_encoder(folder), load_encoder(EncoderConfig(model=str(folder), device="cpu"))


def test_vectors_agree_with_sentence_transformers(models):
    light, full = models
    ours, theirs = encode_queries(light, QUERIES), encode_queries(full, QUERIES)  # (n, 384) each
    assert ours.shape == theirs.shape == (len(QUERIES), 384) and ours.dtype == np.float32
    assert np.abs(ours - theirs).max() < 2e-6  # float32 rounding; measured ~2e-7
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)
    assert embedding_dimension(light) == embedding_dimension(full) == 384
    assert light.tokenizer.sep_token == "[SEP]"


def test_a_query_alone_or_in_a_batch_is_the_same_vector(models):
    light, _ = models
    batch = encode_queries(light, QUERIES)
    alone = np.vstack([encode_queries(light, [q]) for q in QUERIES])
    assert np.abs(batch - alone).max() < 1e-6


def test_documents_are_ranked_alike(models):
    light, full = models
    documents = full.encode(DOCUMENTS, normalize_embeddings=True, convert_to_numpy=True)  # (n_docs, 384)
    ours = encode_queries(light, QUERIES[:5]) @ documents.T  # (n_queries, n_docs)
    theirs = encode_queries(full, QUERIES[:5]) @ documents.T
    assert (np.argsort(-ours, axis=1) == np.argsort(-theirs, axis=1)).all()
    assert np.abs(ours - theirs).max() < 2e-6


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    shutil.copytree(default_model_path(), folder, ignore=shutil.ignore_patterns("model.safetensors"))
    (folder / "model.safetensors").symlink_to(default_model_path() / "model.safetensors")
    return folder


@pytest.mark.parametrize("change, reason", [
    (("1_Pooling/config.json", {"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False}), "pooling"),
    (("config.json", {"hidden_act": "gelu_new"}), "hidden_act"),
    (("config.json", {"model_type": "roberta"}), "model_type"),
    (("config_sentence_transformers.json", {"default_prompt_name": "query"}), "prompt"),
    (("modules.json", None), "modules"),
    (("tokenizer.json", None), "tokenizer.json"),
])
def test_another_shape_is_refused_with_its_reason(tmp_path, change, reason):
    folder = _copy(tmp_path)
    name, values = change
    path = folder / name
    if values is None:
        path.unlink()
    else:
        data = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps({**data, **values}))
    with pytest.raises(UnsupportedEncoder, match=reason):
        load_query_encoder(folder)


def test_the_served_retriever_encodes_queries_without_torch(tmp_path):
    """A version folder opens with the numpy encoder, in a process that never imports torch."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from index.loading import _query_encoder\n"
        "from pathlib import Path\n"
        f"model = _query_encoder(Path({str(tmp_path)!r}), '')\n"
        "print(type(model).__name__, model.encode(['BRAF V600E']).shape, 'torch' in sys.modules)\n"
    )
    (tmp_path / "model").symlink_to(default_model_path())
    done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [QueryEncoder.__name__, "(1,", "384)", "False"]
