"""Per-epoch dev evaluation in training: the best epoch is kept, patience stops it, no dev trains every epoch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from curation.errors import CurationError
from curation.learning.retrain_request import RetrainRequest
from curation.learning.training import (
    CPU_DEFAULTS,
    GPU_DEFAULTS,
    DevPool,
    TrainConfig,
    TrainingPair,
    device_defaults,
    pool_evaluator,
    train,
)
from curation.records import Document

WORDS = ["braf", "egfr", "kras", "vemurafenib", "osimertinib", "sotorasib", "melanoma", "lung"]


class TinyEncoder(nn.Module):
    """A bag-of-words encoder with trainable word vectors, shaped like a SentenceTransformer for train()."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embedding = nn.EmbeddingBag(len(WORDS) + 1, 8, mode="mean")
        self.max_seq_length = 16

    def tokenize(self, texts: list[str]) -> dict[str, torch.Tensor]:
        ids = [[WORDS.index(w) + 1 if w in WORDS else 0 for w in t.lower().split()] or [0] for t in texts]
        width = max(len(row) for row in ids)
        return {"ids": torch.tensor([row + [0] * (width - len(row)) for row in ids])}

    def forward(self, features: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return {"sentence_embedding": self.embedding(features["ids"])}


TEXTS = {
    "1": "braf melanoma vemurafenib",
    "2": "egfr lung osimertinib",
    "3": "kras lung sotorasib",
}
PAIRS = [
    TrainingPair("braf vemurafenib", "1", True, 0.0, "pos-1"),
    TrainingPair("braf vemurafenib", "2", False, 1.0, "neg-5"),
    TrainingPair("egfr osimertinib", "2", True, 0.0, "pos-1"),
    TrainingPair("egfr osimertinib", "3", False, 1.0, "neg-5"),
]
CONFIG = TrainConfig().with_loop(epochs=10, batch_size=2, learning_rate=0.05, warmup_ratio=0.0, device="cpu",
                                 patience=2)


class ScriptedDev:
    """A dev evaluator whose scores are given in advance; it keeps a copy of the weights it saw each epoch."""

    def __init__(self, scores: list[float]) -> None:
        self.scores = scores
        self.weights: list[torch.Tensor] = []

    def __call__(self, model) -> dict[str, float]:
        self.weights.append(model.embedding.weight.detach().clone())
        return {"ndcg@10": self.scores[len(self.weights) - 1]}


def test_best_epoch_is_kept_and_patience_stops_training():
    model, dev = TinyEncoder(), ScriptedDev([0.1, 0.3, 0.2, 0.1, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9])
    result = train(model, PAIRS, TEXTS, CONFIG, evaluate_epoch=dev)
    assert result.epochs_run == 4 and result.stopped_early
    assert [m["ndcg@10"] for m in result.epoch_metrics] == [0.1, 0.3, 0.2, 0.1]
    assert result.best_epoch == 2
    assert result.steps == 4 * 2  # two batches per epoch
    assert torch.equal(model.embedding.weight, dev.weights[1])  # epoch 2's weights restored
    assert not torch.equal(model.embedding.weight, dev.weights[3])  # the weights did move after epoch 2


def test_without_dev_every_epoch_is_trained():
    model = TinyEncoder()
    result = train(model, PAIRS, TEXTS, CONFIG)
    assert result.epochs_run == 10 and not result.stopped_early
    assert result.steps == 20 and result.epoch_metrics == [] and result.best_epoch == 0


def test_patience_zero_trains_every_epoch_and_still_keeps_the_best():
    model, dev = TinyEncoder(), ScriptedDev([0.1, 0.5, 0.2, 0.1])
    result = train(model, PAIRS, TEXTS, CONFIG.with_loop(epochs=4, patience=0),
                   evaluate_epoch=dev)
    assert result.epochs_run == 4 and not result.stopped_early and result.best_epoch == 2
    assert torch.equal(model.embedding.weight, dev.weights[1])


def test_the_last_epoch_best_keeps_the_last_weights():
    model, dev = TinyEncoder(), ScriptedDev([0.1, 0.2, 0.3])
    result = train(model, PAIRS, TEXTS, CONFIG.with_loop(epochs=3), evaluate_epoch=dev)
    assert result.best_epoch == 3 and torch.equal(model.embedding.weight, dev.weights[2])


def test_training_config_is_checked():
    with pytest.raises(CurationError, match="patience"):
        TrainConfig().with_loop(patience=-1)


def test_device_defaults_train_longer_on_the_gpu():
    assert device_defaults(True) == GPU_DEFAULTS and device_defaults(False) == CPU_DEFAULTS
    assert GPU_DEFAULTS.epochs >= 10 > CPU_DEFAULTS.epochs  # 10 epochs beat 5 on the H100 (issue 16)
    gpu, cpu = RetrainRequest("PO").for_device(True), RetrainRequest("PO").for_device(False)
    assert (gpu.epochs, gpu.batch_size, gpu.max_seq_length) == (10, 32, 256)
    assert (cpu.epochs, cpu.batch_size, cpu.max_seq_length) == (1, 16, 128)
    assert RetrainRequest("PO", epochs=3).for_device(True).epochs == 3  # an explicit choice wins


# --- the dev pool -----------------------------------------------------------------------------------


class KeywordEncoder:
    """One-hot keyword vectors: a fake SentenceTransformer for encode_documents / encode_queries."""

    class tokenizer:  # noqa: N801 (the attribute name sentence-transformers uses)
        sep_token = "[SEP]"

    def __init__(self) -> None:
        self.encoded: list[int] = []

    def encode(self, texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False):
        self.encoded.append(len(texts))
        vectors = np.array([[float(w in t.lower().split()) for w in WORDS] for t in texts], dtype=np.float32) + 1e-3
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    def get_sentence_embedding_dimension(self) -> int:
        return len(WORDS)


DOCS = {
    pmid: Document(pmid, title, abstract)
    for pmid, title, abstract in [
        ("1", "braf", "melanoma vemurafenib"),
        ("2", "egfr", "lung osimertinib"),
        ("3", "kras", "lung sotorasib"),
        ("4", "braf", "melanoma"),
        ("5", "unrelated", "text"),
    ]
}


def test_dev_pool_is_the_first_stage_plus_the_relevant_documents():
    def first_stage(queries, k):
        return [[("4", 2.0), ("2", 1.0)][:k] for _ in queries]

    pool = DevPool.from_first_stage(
        {"q1": "braf vemurafenib", "q2": "nothing relevant in the corpus"},
        {"q1": {"1": 1}, "q2": {"99": 1}},
        first_stage, DOCS, depth=2,
    )
    assert list(pool.queries) == ["q1"]  # q2's relevant document is not in the corpus
    assert pool.candidates["q1"] == ("4", "2", "1")
    assert pool.documents() == ["1", "2", "4"]


def test_pool_evaluator_encodes_only_the_pool():
    pool = DevPool({"q1": "braf vemurafenib", "q2": "kras sotorasib"}, {"q1": {"1": 1}, "q2": {"3": 1}},
                   {"q1": ("4", "1", "2"), "q2": ("2", "3")})
    model = KeywordEncoder()
    metrics = pool_evaluator(pool, DOCS)(model)
    assert metrics["ndcg@10"] == pytest.approx(1.0)  # the keyword encoder ranks each relevant document first
    assert model.encoded == [4, 2]  # documents 1–4 once (not 5), then the two queries


# --- the build chain wires it -------------------------------------------------------------------------


@pytest.mark.parametrize(("epochs", "evaluated"), [(3, True), (1, False)])
def test_build_evaluates_each_epoch_on_the_dev_pool_only_when_there_are_epochs_to_choose(
    tmp_path, monkeypatch, epochs, evaluated
):
    import curation.learning.build as build
    from curation.learning.sampling import TrainingSet
    from curation.learning.splits import EvalSet
    from curation.learning.training import TrainResult
    from curation.schemas import PO

    class SavableKeywordEncoder(KeywordEncoder):
        def save(self, folder: str) -> None:
            from pathlib import Path

            Path(folder).mkdir(parents=True)

    seen = {}

    def fake_train(model, pairs, texts, config, progress_file=None, cancel_file=None, evaluate_epoch=None):
        seen["evaluate_epoch"] = evaluate_epoch
        seen["metrics"] = evaluate_epoch(model) if evaluate_epoch else None
        return TrainResult(steps=1, seconds=0.0, device="cpu")

    monkeypatch.setattr(build, "load_encoder", lambda config: SavableKeywordEncoder())
    monkeypatch.setattr(build, "train", fake_train)
    dev = EvalSet({"q": "braf vemurafenib melanoma"}, {"q": {"1": 1}})
    request = build.BuildRequest(schema=PO, version="po-pool", choose_fusion=False,
                                 train_config=TrainConfig().with_loop(epochs=epochs, device="cpu"))
    training = TrainingSet((PAIRS[0],), {"pos-1": 0.0})
    build.build_version(request, DOCS, tmp_path / "models", training=training, dev=dev)
    assert (seen["evaluate_epoch"] is not None) == evaluated
    if evaluated:
        assert seen["metrics"]["ndcg@10"] == pytest.approx(1.0)
