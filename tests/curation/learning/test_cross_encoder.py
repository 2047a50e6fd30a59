"""Cross-encoder training: graded labels from EDEL pairs, training, publishing, reloading, cancelling."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.errors import CurationError
from curation.learning.cross_encoder.training import (
    COMPLETE_LABEL,
    MANIFEST,
    NEGATIVE_LABEL,
    PARTIAL_LABEL,
    CrossEncoderConfig,
    CrossEncoderExample,
    CrossEncoderUnavailable,
    cross_encoder_examples,
    graded_label,
    label_counts,
    load_base_model,
    train_cross_encoder,
)
from curation.learning.feedback import NOT_RELEVANT_CLASS, PARTIAL_CLASS
from curation.learning.training import TrainingPair
from curation.training_loop import TrainingCancelled
from index.hits import Hit
from index.rerank import CrossEncoderReranker

QUERY_BRAF = "BRAF V600E melanoma"
QUERY_EGFR = "EGFR L858R lung cancer"
DOCS = {
    "1": "BRAF V600E mutation predicts response to vemurafenib in melanoma patients.",
    "2": "Dabrafenib treatment of BRAF V600E positive metastatic melanoma.",
    "3": "EGFR L858R mutant lung cancer responds to erlotinib.",
    "4": "Osimertinib in EGFR L858R non-small cell lung cancer.",
    "5": "Rainfall patterns in northern Europe during the last century.",
    "6": "A survey of medieval castle architecture in Wales.",
    "7": "BRAF V600E in colorectal cancer with poor prognosis.",
}


def test_graded_labels_follow_the_grades_and_edel_classes():
    assert graded_label(TrainingPair("q", "1", True, 0.0, "pos-1")) == COMPLETE_LABEL
    assert graded_label(TrainingPair("q", "1", True, 0.6, PARTIAL_CLASS, "decision")) == PARTIAL_LABEL == 0.5
    assert graded_label(TrainingPair("q", "1", True, 0.2, "pos-2")) == pytest.approx(0.9)
    assert graded_label(TrainingPair("q", "1", True, 1.2, "pos-6")) == PARTIAL_LABEL  # never below partial
    for name in ("neg-3", "bm25", "random", NOT_RELEVANT_CLASS):
        assert graded_label(TrainingPair("q", "1", False, 1.0, name)) == NEGATIVE_LABEL


def test_examples_add_random_negatives_and_keep_whole_queries_under_the_cap():
    pairs = [TrainingPair(QUERY_BRAF, "1", True, 0.0, "pos-1"), TrainingPair(QUERY_BRAF, "7", False, 0.8, "neg-4"),
             TrainingPair(QUERY_BRAF, "1", False, 1.0, "bm25"),  # a duplicate (query, document): first label kept
             TrainingPair(QUERY_EGFR, "3", True, 0.6, PARTIAL_CLASS, "decision")]
    examples = cross_encoder_examples(pairs, sorted(DOCS), CrossEncoderConfig(random_negatives=2))
    braf = [e for e in examples if e.query == QUERY_BRAF]
    assert [(e.pmid, e.label) for e in braf[:2]] == [("1", 1.0), ("7", 0.0)]
    randoms = [e for e in braf if e.source == "cross-encoder"]
    assert len(randoms) == 2 and all(e.label == 0.0 and e.pmid not in {"1", "7"} for e in randoms)
    assert label_counts(examples)["0.50"] == 1
    capped = cross_encoder_examples(pairs, sorted(DOCS), CrossEncoderConfig(random_negatives=2, max_pairs=3))
    assert len({e.query for e in capped}) == 1 and len(capped) <= 4


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """One torch thread: on a shared 2-core machine, two spinning threads make training ~10x slower."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def training_examples() -> list[CrossEncoderExample]:
    pairs = []
    for query, positives, negatives in [(QUERY_BRAF, "12", "3456"), (QUERY_EGFR, "34", "1256")]:
        pairs += [TrainingPair(query, p, True, 0.0, "pos-1") for p in positives]
        pairs += [TrainingPair(query, n, False, 1.0, "neg-3") for n in negatives]
    return cross_encoder_examples(pairs)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("ce") / "cross-encoder"
    progress = out.parent / "progress.json"
    config = CrossEncoderConfig(max_length=64).with_loop(epochs=6, batch_size=4, learning_rate=1e-4, device="cpu",
                                                         seed=3)
    result = train_cross_encoder(training_examples(), DOCS, out, config, progress_file=progress)
    return out, result, progress


def test_training_publishes_a_folder_that_reloads_and_ranks_relevant_first(trained):
    out, result, progress = trained
    assert result.steps == 6 * 3 and result.device == "cpu" and len(result.losses) == result.steps
    assert sum(result.losses[-3:]) < sum(result.losses[:3])  # it learned something
    assert (out / MANIFEST).exists() and (out / "config.json").exists()
    assert not list(out.parent.glob(".*.tmp"))
    assert '"cross-encoder trained"' in progress.read_text()
    reranker = CrossEncoderReranker.load(out, device="cpu")
    hits = [Hit(p, r, 1.0, None, None) for r, p in enumerate(["5", "3", "1", "6"], start=1)]
    ranked = [h.pmid for h in reranker.rerank(QUERY_BRAF, hits, DOCS, k=4)]
    assert ranked.index("1") < ranked.index("3") and ranked.index("1") < ranked.index("5")
    scores = reranker.score_pairs([(QUERY_EGFR, DOCS["4"]), (QUERY_EGFR, DOCS["2"])])
    assert scores[0] > scores[1]


def test_publishing_never_overwrites_and_needs_documents(trained, tmp_path: Path):
    out, _, _ = trained
    with pytest.raises(CurationError, match="already exists"):
        train_cross_encoder(training_examples(), DOCS, out, CrossEncoderConfig().with_loop(device="cpu"))
    with pytest.raises(CurationError, match="PMID 1"):
        train_cross_encoder(training_examples(), {}, tmp_path / "x", CrossEncoderConfig().with_loop(device="cpu"))
    with pytest.raises(CurationError, match="no cross-encoder training examples"):
        train_cross_encoder([], DOCS, tmp_path / "x", CrossEncoderConfig().with_loop(device="cpu"))
    assert not (tmp_path / "x").exists()


def test_cancel_leaves_no_folder(tmp_path: Path):
    cancel = tmp_path / "cancel"
    cancel.write_text("")
    out = tmp_path / "models" / "cross-encoder"
    with pytest.raises(TrainingCancelled):
        train_cross_encoder(training_examples(), DOCS, out,
                            CrossEncoderConfig(max_length=32).with_loop(device="cpu"), cancel_file=cancel)
    assert not out.exists()
    assert not list(out.parent.glob("*")) if out.parent.exists() else True


def test_a_crash_while_saving_leaves_no_folder(tmp_path: Path, monkeypatch):
    model = load_base_model("", "cpu", 32)

    def broken_save(path: str, *args, **kwargs):
        Path(path).mkdir(parents=True)
        (Path(path) / "config.json").write_text("{}")  # half written
        raise OSError("disk full")

    monkeypatch.setattr(model, "save", broken_save)
    out = tmp_path / "cross-encoder"
    with pytest.raises(OSError, match="disk full"):
        train_cross_encoder(training_examples()[:4], DOCS, out,
                            CrossEncoderConfig(max_length=32).with_loop(device="cpu"), model=model)
    assert list(tmp_path.iterdir()) == []


def test_an_unreachable_hub_model_is_a_clear_error(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(CrossEncoderUnavailable, match="MedCPT-Cross-Encoder.*unreachable"):
        load_base_model("ncbi/MedCPT-Cross-Encoder", "cpu", 32)
    with pytest.raises(CrossEncoderUnavailable, match="does not exist"):
        load_base_model(str(tmp_path / "absent"), "cpu", 32)
