"""The entity linker's home in learning/: the apply rule chosen on dev, the name encoder's batches, training and the
published folder, and its learner (a job's request read back, a tiny linker trained, its manifest judged)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curation.entities.linking import FORMAT_VERSION, DevName, LinkerUnavailable, load_linker, read_manifest
from curation.entities.synonyms import Lexicon
from curation.errors import USER_ERRORS, CurationError
from curation.learning.learner import LINKER, Workspace, learner
from curation.learning.linker.calibration import choose_thresholds
from curation.learning.linker.name_encoder import NameEncoderConfig, sample_batches, synonym_sets
from curation.learning.linker.training import recalibrate, train_linker
from curation.store.annotations import insert_entity_model, set_active_entity_model
from tests.curation.learning.tiny_linker import tiny_lexicon, tiny_sets, write_tiny_data_dir


@pytest.fixture(scope="module")
def lexicon() -> Lexicon:
    return tiny_lexicon()


def test_choose_thresholds_keeps_precision_and_refuses_low_scores() -> None:
    rows = [(0.95, 0.3, True, True)] * 50 + [(0.6, 0.01, True, False)] * 10 + [(0.6, 0.2, True, True)] * 5
    chosen = choose_thresholds(rows, len(rows), target=0.98)
    assert chosen.dev_precision >= 0.98 and chosen.dev_applied == 55
    assert not chosen.allows(0.6, 0.01)
    assert choose_thresholds([(0.9, 0.5, True, False)] * 20, 20).dev_applied == 0  # nothing safe: apply nothing


def test_batches_hold_several_names_of_a_concept_and_one_kind() -> None:
    sets = synonym_sets(tiny_sets())
    assert "chemical:DB99999" not in sets  # one name: no positive pair
    kinds = {label: label.split(":")[0] for label in sets}
    for texts, labels in sample_batches(sets, kinds, NameEncoderConfig(concepts_per_batch=3).with_loop(max_steps=10)):
        assert len(texts) == len(labels) and max(labels) + 1 <= 3
        assert all(labels.count(label) >= 2 for label in labels)
        assert len({kinds[next(k for k, v in sets.items() if t in v)] for t in texts}) == 1


def test_train_save_load_and_refuse_bad_folders(lexicon: Lexicon, tmp_path: Path) -> None:
    sets = tiny_sets()
    kinds = {label: label.split(":")[0] for label in sets}
    dev = [DevName("vemurafinib", "chemical", "DB08881"), DevName("Her-2", "gene", "2064")]
    config = NameEncoderConfig(concepts_per_batch=4, names_per_concept=2).with_loop(max_steps=2, device="cpu")
    folder = tmp_path / "tiny"
    linker, manifest = train_linker(synonym_sets(sets), kinds, lexicon, dev, folder, config, counts={"x": 1})
    assert manifest.format_version == FORMAT_VERSION and manifest.config["steps"] == 2
    assert linker.link("vemurafinib", "chemical").candidates[0][0] == "DB08881"
    loaded = load_linker(folder, lexicon, device="cpu")
    assert loaded.scorer.weight == linker.scorer.weight and loaded.thresholds == linker.thresholds
    assert loaded.link("Gleevec", "chemical").applied
    # dev says short exact chemical names are wrong: recalibration stops applying them, the rest stays
    wrong = [DevName("T-DM1", "chemical", "DB00072")] * 25
    right = [DevName("Gleevec", "chemical", "DB00619")] * 25
    again = recalibrate(folder, lexicon, wrong + right + dev, device="cpu")
    assert not again.link("T-DM1", "chemical").applied and again.link("Gleevec", "chemical").applied
    assert load_linker(folder, lexicon).thresholds["chemical"].exact["short-1"] == [0.0, 25]
    assert again.link("Zelboraf", "chemical").applied  # long and seen once, like Gleevec

    with pytest.raises(LinkerUnavailable, match="no such linker folder"):
        load_linker(tmp_path / "absent", lexicon)
    manifest_path = folder / "manifest.json"
    data = json.loads(manifest_path.read_text())
    manifest_path.write_text(json.dumps({**data, "format_version": FORMAT_VERSION + 1}))
    with pytest.raises(LinkerUnavailable, match="format version"):
        load_linker(folder, lexicon)
    manifest_path.write_text("{not json")
    with pytest.raises(LinkerUnavailable, match="not readable JSON") as caught:
        load_linker(folder, lexicon)
    assert isinstance(caught.value, USER_ERRORS)


def test_cli_parses_train_linker(tmp_path: Path) -> None:
    from curation.cli import build_parser

    args = build_parser().parse_args(["train-linker", "--out", str(tmp_path / "l"), "--steps", "5"])
    assert (args.steps, args.out, args.func.__name__) == (5, tmp_path / "l", "cmd_train_linker")


def test_the_registrys_linker_reads_its_request_back_trains_a_tiny_linker_and_judges_its_manifest(
        tmp_path: Path, con) -> None:
    chosen = learner(LINKER)
    assert (chosen.kind, chosen.versioned, chosen.title({})) == (LINKER, False, "Linker training")
    request = chosen.read_request({"kind": "linker", "name": "tiny", "steps": 2, "device": "cpu",
                                   "data_dir": str(write_tiny_data_dir(tmp_path / "data")),
                                   "models_dir": str(tmp_path / "linkers"), "vocabularies": False}, "job 1")
    assert chosen.read_request(request.to_dict(), "job 1") == request
    with pytest.raises(CurationError, match=r"job 2: unknown fields \['width'\]"):
        chosen.read_request({"kind": "linker", "width": 8}, "job 2")
    with pytest.raises(CurationError, match="not a valid version name"):
        chosen.read_request({"kind": "linker", "name": "../up"}, "job 3")

    job = tmp_path / "job"
    job.mkdir()
    work = Workspace(folder=job, snapshot=job / "snapshot", progress=job / "progress.json", cancel=job / "cancel",
                     staging=job / "version")
    artifact = chosen.train(request, work)
    folder = tmp_path / "linkers" / "tiny"
    assert artifact.folder == folder and artifact.name == "tiny" and artifact.device == "cpu"
    assert not (tmp_path / "linkers" / "tiny.tmp").exists() and (job / "version").read_text() == "tiny"
    manifest = read_manifest(folder)
    assert manifest.config["steps"] == 2 and manifest.counts["dev_mentions"] == 4
    assert artifact.scores["dev_fuzzy_acc1"] == manifest.dev["dev_fuzzy_acc1"]
    assert json.loads((job / "progress.json").read_text())["step"] == 2
    assert load_linker(folder, tiny_lexicon(), device="cpu").link("Gleevec", "chemical").concept_id == "DB00619"

    assert chosen.judge(con, request, folder).activate  # no linker was active
    better = folder.with_name("better")
    better.mkdir()
    (better / "manifest.json").write_text(json.dumps(
        {**json.loads((folder / "manifest.json").read_text()), "name": "better",
         "dev": {**manifest.dev, "dev_fuzzy_acc1": manifest.dev["dev_fuzzy_acc1"] + 0.5}}))
    insert_entity_model(con, "linker", str(better), "better")
    set_active_entity_model(con, "linker", str(better))
    verdict = chosen.judge(con, request, folder)
    assert not verdict.activate and "below" in verdict.reason and "better" in verdict.reason
    with pytest.raises(LinkerUnavailable, match="no such linker folder"):
        chosen.judge(con, request, tmp_path / "absent")


def test_prepare_fills_in_the_folder_and_refuses_missing_data_or_an_existing_linker(tmp_path: Path, con) -> None:
    from curation.config import Settings

    chosen = learner(LINKER)
    settings = Settings(data_dir=write_tiny_data_dir(tmp_path / "data"), models_dir=tmp_path / "models")
    request = chosen.prepare(con, chosen.read_request({"kind": "linker", "name": "new"}, "job"), settings)
    assert (request.models_dir, request.data_dir) == (str(tmp_path / "models" / "linkers"), str(tmp_path / "data"))
    (tmp_path / "models" / "linkers" / "new").mkdir(parents=True)
    with pytest.raises(CurationError, match="exists already"):
        chosen.prepare(con, request, settings)
    (tmp_path / "data" / "dicts" / "drugbank_vocabulary.csv").unlink()
    with pytest.raises(CurationError, match="drugbank_vocabulary.csv: not found"):
        chosen.prepare(con, request, settings)
