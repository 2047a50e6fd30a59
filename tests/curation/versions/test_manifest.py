"""The model-version manifest: one typed form, read and written in one module, old files still read."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest

from curation.versions import registry
from curation.versions.manifest import (
    FORMAT,
    DevMetrics,
    Fusion,
    Manifest,
    PairCounts,
    RegistryError,
    read_manifest,
    write_manifest,
)
from index.loading import manifest_fusion
from index.search import FusionConfig, FusionMethod

# What build_version wrote when the registry came (b368564): no format, no fusion choice, feedback or report.
FIRST = {
    "schema": "PO", "base_model": "all-MiniLM-L6-v2", "trained": True,
    "train_config": {"epochs": 1, "batch_size": 16, "learning_rate": 2e-05, "warmup_ratio": 0.1,
                     "max_seq_length": 256, "weight_decay": 0.01, "seed": 13, "device": "", "mixed_precision": True,
                     "max_steps": 0},
    "sampling": {"per_class": 2, "bm25_negatives": 2, "random_negatives": 2, "bm25_depth": 100,
                 "candidate_pool": 200, "seed": 13, "ablation": "full"},
    "dense": {"kind": "flat", "hnsw_m": 32},
    "fusion": {"method": "rerank", "rrf_k": 60.0, "weights": [1.0, 1.0], "depth": 100, "mix": 0.0},
    "snapshot": "ab12", "training_pairs": 3,
    "training_classes": {"pos-1": {"positive": 2, "negative": 0}, "bm25": {"positive": 0, "negative": 1}},
    "training_sources": {"kb": 3}, "device": "cpu", "train_seconds": 1.5, "train_steps": 2,
    "loss_curve": [0.9, 0.7], "timings_s": {"encode_corpus_s": 0.3}, "total_seconds": 4.2,
    "metrics": {"ndcg@10": 0.5}, "metrics_hybrid": {"ndcg@10": 0.6}, "documents": 8, "python": "3.12.3",
    "version": "po-edel-1", "published_at": "2026-11-22T10:00:00+00:00",
}
# ...and since the feedback loop (73ba5b5), still without a format key.
SECOND = {
    **FIRST,
    "fusion": {"method": "rerank", "rrf_k": 60.0, "weights": [1.0, 1.0], "depth": 50, "mix": 0.2},
    "fusion_chosen_on_dev": "rerank_mix0.2",
    "fusion_dev_scores": {"bm25_order": 0.5, "rerank_mix0.2": 0.6},
    "feedback": {"partial_margin": 0.6, "not_relevant_margin": 1.0, "conflicts": "exclude", "repeat": 1},
    "training_report": {"kb": {"pos-1": {"positive": 2, "negative": 0}}, "decision": {"decision-neg":
                                                                                      {"positive": 0, "negative": 1}}},
}


def _write(tmp_path, data) -> object:
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_a_manifest_reads_back_as_written(tmp_path):
    manifest = Manifest(
        version="po-1", schema="PO", trained=True, fusion=Fusion(method="weighted", weights=(0.7, 0.3)),
        training_classes={"pos-1": PairCounts(2, 0)}, training_report={"kb": {"pos-1": PairCounts(2, 0)}},
        loss_curve=(0.9, 0.5), metrics={"ndcg@10": 0.4}, metrics_hybrid={"ndcg@10": 0.5}, documents=8,
    )
    write_manifest(tmp_path / "manifest.json", manifest)
    assert read_manifest(tmp_path / "manifest.json") == manifest
    assert json.loads((tmp_path / "manifest.json").read_text())["format"] == FORMAT
    assert manifest.dev == DevMetrics(dense={"ndcg@10": 0.4}, hybrid={"ndcg@10": 0.5})
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]  # no temporary file left


@pytest.mark.parametrize("legacy", [FIRST, SECOND], ids=["registry", "feedback-loop"])
def test_manifests_written_by_older_code_read_as_format_1(tmp_path, legacy):
    manifest = read_manifest(_write(tmp_path, legacy))
    assert manifest.format == 1 and manifest.version == "po-edel-1" and manifest.documents == 8
    assert manifest.training_classes["pos-1"] == PairCounts(positive=2, negative=0)
    assert manifest.loss_curve == (0.9, 0.7) and manifest.metrics_hybrid == {"ndcg@10": 0.6}
    assert manifest.fusion_chosen_on_dev == legacy.get("fusion_chosen_on_dev", "")
    assert (manifest.training_report == {}) is (legacy is FIRST)
    write_manifest(tmp_path / "again.json", manifest)  # and write back in the current format
    assert read_manifest(tmp_path / "again.json") == manifest


@pytest.mark.parametrize(
    "change, message",
    [
        ({"surprise": 1}, "unknown field 'surprise'"),
        ({"schema": None}, "field 'schema' must be a string, got null"),
        ({"documents": "8"}, "field 'documents' must be an integer, got a string"),
        ({"documents": True}, "field 'documents' must be an integer, got a boolean"),
        ({"trained": 1}, "field 'trained' must be true or false"),
        ({"loss_curve": [0.9, "x"]}, r"field 'loss_curve\[1\]' must be a number"),
        ({"metrics": {"ndcg@10": "high"}}, "field 'metrics.ndcg@10' must be a number"),
        ({"fusion": {**FIRST["fusion"], "method": "vote"}}, "field 'fusion.method' must be one of"),
        ({"fusion": {**FIRST["fusion"], "weights": [1.0]}}, "field 'fusion.weights' must be a list of 2 items"),
        ({"fusion": {**FIRST["fusion"], "extra": 1}}, "unknown field 'fusion.extra'"),
        ({"training_classes": {"pos-1": {"positive": 2}}}, "field 'training_classes.pos-1.negative' is missing"),
        ({"format": 2}, "manifest format 2 was written by a newer version of the app"),
        ({"format": "1"}, "field 'format' must be a positive integer"),
    ],
)
def test_a_manifest_that_does_not_fit_is_an_error_naming_file_and_field(tmp_path, change, message):
    path = _write(tmp_path, {**SECOND, **change})
    with pytest.raises(RegistryError, match=message) as caught:
        read_manifest(path)
    assert str(caught.value).startswith(f"{path}: ")


@pytest.mark.parametrize("key", ["schema", "documents", "metrics", "published_at", "fusion"])
def test_a_missing_field_is_an_error_naming_it(tmp_path, key):
    path = _write(tmp_path, {k: v for k, v in SECOND.items() if k != key})
    with pytest.raises(RegistryError, match=f"{path}: field '{key}' is missing"):
        read_manifest(path)


@pytest.mark.parametrize(
    "text, message",
    [("{oops", "is corrupted"), ("[1, 2]", "must be a JSON object, got a list"), (b"\xff\xfe", "is corrupted")],
)
def test_a_file_that_is_not_a_manifest_is_an_error_naming_it(tmp_path, text, message):
    path = tmp_path / "manifest.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(RegistryError, match=message) as caught:
        read_manifest(path)
    assert str(path) in str(caught.value)
    with pytest.raises(RegistryError, match="does not exist"):
        read_manifest(tmp_path / "nowhere.json")


def test_a_manifest_that_would_not_read_back_is_not_written(tmp_path):
    with pytest.raises(RegistryError, match="field 'metrics.ndcg@10' must be a number"):
        write_manifest(tmp_path / "manifest.json", Manifest(metrics={"ndcg@10": "high"}))  # type: ignore[dict-item]
    assert not list(tmp_path.iterdir())


def test_a_version_with_a_bad_manifest_is_reported_with_file_and_field(tmp_path):
    folder = tmp_path / "po-odd"
    for part in ("model", "dense", "lexical"):
        (folder / part).mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({**SECOND, "documents": "many"}))
    versions, problems = registry.list_versions(tmp_path)
    assert versions == [] and problems == [f"{folder / 'manifest.json'}: field 'documents' must be an integer, "
                                           f"got a string ('many')"]


def test_the_fusion_record_matches_index_fusion_config(tmp_path):
    assert [f.name for f in fields(Fusion)] == [f.name for f in fields(FusionConfig)]
    assert Fusion.__annotations__["method"] == "Literal['rrf', 'slate', 'weighted', 'rerank']"
    assert {m.value for m in FusionMethod} == {"rrf", "slate", "weighted", "rerank"}
    config = FusionConfig(method=FusionMethod.WEIGHTED, weights=(0.7, 0.3), depth=50, mix=0.2)
    (tmp_path / "v").mkdir()
    write_manifest(tmp_path / "v" / "manifest.json", Manifest(fusion=Fusion.of(config)))
    assert manifest_fusion(tmp_path / "v") == config  # index reads its part of the same file


def test_the_models_folders_own_tenants_are_not_reported_as_broken_versions(tmp_path):
    for own in ("recognisers", "linkers", "relations"):
        (tmp_path / own / "some-model").mkdir(parents=True)  # what recogniser, linker and scorer training keep there
    (tmp_path / "po-stray").mkdir()  # a folder a person left: named
    versions, problems = registry.list_versions(tmp_path)
    assert versions == [] and problems == [f"{tmp_path / 'po-stray'} is not a model version (no manifest.json)"]
