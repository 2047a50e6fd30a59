"""Multi-process encoding (sentence-transformers' pool) and the resumable shard encoder."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest

from index.encoder import encode_documents, pool_devices
from index.shards import ShardFolderMismatch, encode_shards, load_shards

Doc = SimpleNamespace

DOCS = [
    Doc(pmid="1", title="BRAF V600E in melanoma", abstract="Vemurafenib inhibits the BRAF kinase."),
    Doc(pmid="2", title="EGFR in lung cancer", abstract="Gefitinib targets EGFR kinase mutations."),
    Doc(pmid="3", title="", abstract="KRAS mutations in lung tumours."),
    Doc(pmid="4", title="Cisplatin nephrotoxicity", abstract="Cisplatin caused renal injury in 12 patients."),
    Doc(pmid="5", title="Melanoma surveillance", abstract="Skin examinations for melanoma detect thin lesions."),
]


POOLED = """
import numpy as np
from types import SimpleNamespace
from index.encoder import EncoderConfig, encode_documents, load_encoder
DOCS = [SimpleNamespace(**d) for d in {docs!r}]
model = load_encoder(EncoderConfig(device="cpu"))
alone = encode_documents(model, DOCS)
pooled = encode_documents(model, DOCS, processes=2)
assert pooled.shape == alone.shape == (5, 384) and pooled.dtype == np.float32, (pooled.shape, pooled.dtype)
assert np.allclose(pooled, alone, atol=1e-5)
assert not np.allclose(pooled[0], pooled[1], atol=1e-2)  # not one vector repeated
assert str(model.device) == "cpu"
"""


def test_two_cpu_processes_give_the_vectors_of_one():
    """Run in a fresh interpreter: a spawned pool started from a long-lived test worker (hundreds of threads and the
    state of every test before it) was seen to lose its child at start and block for ever; the product starts its
    pools from a command's own process, which is what this reproduces."""
    import subprocess
    import sys
    from pathlib import Path

    code = POOLED.format(docs=[vars(d) for d in DOCS])
    done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


def test_which_devices_the_workers_run_on(monkeypatch):
    import torch

    cpu, cuda = SimpleNamespace(device="cpu"), SimpleNamespace(device="cuda:0")
    assert pool_devices(cpu) is None and pool_devices(cpu, 1) is None
    assert pool_devices(cpu, 3) == ["cpu", "cpu", "cpu"]
    with pytest.raises(ValueError, match="processes must be 1 or more"):
        pool_devices(cpu, 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert pool_devices(cuda) is None
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert pool_devices(cuda) == ["cuda:0", "cuda:1"]
    assert pool_devices(cuda, 1) is None
    assert pool_devices(cuda, 3) == ["cuda:0", "cuda:1", "cuda:0"]


VOCABULARY = ("braf", "melanoma", "egfr", "lung", "kras", "cisplatin", "kinase")


class KeywordEncoder:
    """Embeds a text as the unit indicator vector of VOCABULARY words in it; counts its calls."""

    tokenizer = SimpleNamespace(sep_token="[SEP]")
    device = "cpu"

    def __init__(self, dimension: int = len(VOCABULARY), fail_at: int = 0) -> None:
        self.dimension, self.fail_at, self.calls = dimension, fail_at, 0

    def get_embedding_dimension(self) -> int:
        return self.dimension

    def encode(self, texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False):
        self.calls += 1
        if self.calls == self.fail_at:
            raise KeyboardInterrupt  # stands for a kill in the middle of a run
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)  # (n_texts, dimension)
        for row, text in enumerate(texts):
            words = set(re.findall(r"\w+", text.lower()))
            vectors[row, : len(VOCABULARY)] = [float(w in words) for w in VOCABULARY][: self.dimension]
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)


def test_shards_are_written_once_and_a_killed_run_goes_on_where_it_stopped(tmp_path):
    folder = tmp_path / "vectors"
    killed = KeywordEncoder(fail_at=2)
    with pytest.raises(KeyboardInterrupt):
        encode_shards(killed, DOCS, folder, shard_size=2)
    assert sorted(p.name for p in folder.glob("shard-*")) == ["shard-00000.ids", "shard-00000.npy"]
    assert not list(folder.glob(".*.tmp"))  # nothing half-written left behind
    model = KeywordEncoder()
    run = encode_shards(model, iter(DOCS), folder, shard_size=2)
    assert (run.encoded, run.kept, run.documents, model.calls) == (2, 1, 5, 2)
    ids, vectors = load_shards(folder)
    assert ids == ["1", "2", "3", "4", "5"]
    assert np.allclose(vectors, encode_documents(KeywordEncoder(), DOCS))
    assert encode_shards(model, DOCS, folder, shard_size=2).encoded == 0 and model.calls == 2
    # Other documents in a shard's place are encoded again; a shorter corpus drops the old tail.
    changed = [DOCS[0], DOCS[2], DOCS[1]]
    run = encode_shards(model, changed, folder, shard_size=2)
    assert (run.encoded, run.kept) == (2, 0)
    assert load_shards(folder)[0] == ["1", "3", "2"]


def test_a_shard_folder_of_another_encoder_is_refused(tmp_path):
    encode_shards(KeywordEncoder(), DOCS, tmp_path, shard_size=2)
    with pytest.raises(ShardFolderMismatch, match="encoded by .* \\(7 dimensions\\), not .* \\(5\\)"):
        encode_shards(KeywordEncoder(dimension=5), DOCS, tmp_path, shard_size=2)
