"""The version's cross-encoder: built by the same job, served only when dev says so, never half-published."""

from __future__ import annotations

import pytest

from curation.learning.build import BuildRequest, build_version
from curation.learning.cross_encoder.stage import FOLDER, served_chooser
from curation.learning.cross_encoder.training import CrossEncoderConfig
from curation.learning.sampling import TrainingSet
from curation.learning.splits import EvalSet
from curation.learning.training import TrainConfig, TrainingPair
from curation.schemas import PO
from curation.training_loop import TrainingCancelled
from index.loading import open_retriever
from tests.curation.learning.tiny_fusion import DOCS

QUERY = "Treatment for gene BRAF?"
TRAINING = TrainingSet(
    (TrainingPair(QUERY, "B", True, 0.0, "pos-1"), TrainingPair(QUERY, "A", False, 0.5, "neg-1"),
     TrainingPair(QUERY, "C", False, 0.5, "random")),
    {"pos-1": 0.0, "neg-1": 0.5, "random": 0.5},
)
DEV = EvalSet({"q": QUERY}, {"q": {"B": 1}}, None, {"q": {"Gene": "BRAF"}})


def _request(version: str, **cross) -> BuildRequest:
    return BuildRequest(schema=PO, version=version,
                        train_config=TrainConfig(max_seq_length=64).with_loop(epochs=1, batch_size=4),
                        cross_encoder=CrossEncoderConfig(max_length=64).with_loop(batch_size=4, **cross))


def test_the_job_builds_a_cross_encoder_and_records_the_dev_decision(setup, tmp_path):
    _, search = setup
    version = build_version(_request("po-ce", epochs=2), {d.pmid: d for d in DOCS}, tmp_path / "models",
                            training=TRAINING, dev=DEV, served=served_chooser(lambda: search))
    served = version.manifest.served
    assert (version.path / FOLDER / "config.json").exists()
    assert served.rerank_k == 50 and set(served.rerank_dev_scores) == {"first_stage", "reranked"}
    assert served.rerank_p95_ms is not None and served.rerank_rule
    # Served exactly when it helped on dev within the budget; the loaded retriever follows the manifest.
    helps = served.rerank_dev_scores["reranked"] > served.rerank_dev_scores["first_stage"]
    assert served.rerank == (helps and served.rerank_p95_ms <= 150)
    engine = open_retriever(version.path)
    assert (engine.reranker is not None) == served.rerank
    assert version.manifest.train_config["cross_encoder"]["steps"] > 0


def test_a_cancelled_cross_encoder_leaves_nothing_published(setup, tmp_path, monkeypatch):
    import curation.learning.cross_encoder.stage as stage

    _, search = setup
    models, cancel = tmp_path / "models", tmp_path / "cancel"
    real_train = stage.train_cross_encoder

    def cancel_then_train(*args, **kwargs):  # the curator presses Cancel as the cross-encoder starts
        cancel.write_text("")
        return real_train(*args, **kwargs)

    monkeypatch.setattr(stage, "train_cross_encoder", cancel_then_train)
    with pytest.raises(TrainingCancelled):
        build_version(_request("po-cancelled"), {d.pmid: d for d in DOCS}, models, training=TRAINING, dev=DEV,
                      served=served_chooser(lambda: search), progress_file=tmp_path / "progress.json",
                      cancel_file=cancel)
    assert not (models / "po-cancelled").exists()
    assert not [p.name for p in models.iterdir()] if models.exists() else True  # no staged or half-written folder
