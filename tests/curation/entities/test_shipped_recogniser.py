"""The recogniser the code ships: made by ship-recogniser with its provenance, installed and activated after a load."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from curation.config import Settings
from curation.entities.recogniser import load_recogniser, read_recogniser_manifest
from curation.entities.recogniser_corpus import RecogniserError
from curation.learning.recogniser import shipped
from curation.learning.recogniser.data import BC5CDR, BIORED
from curation.learning.recogniser.shipped import install, read_provenance, ship_recogniser, shipped_recogniser
from curation.store.annotations import insert_entity_model, set_active_entity_model
from curation.workflows import first_models
from curation.workflows import recogniser_training as workflow

ROOT = Path(__file__).resolve().parents[3]


def test_shipping_records_the_digests_code_version_and_dev_scores(trained, corpora, tmp_path):
    out = tmp_path / "shipped"
    provenance = ship_recogniser(trained, corpora, out, code_version="abc123")
    assert set(provenance.data_digests) == {*BIORED, *BC5CDR}
    assert provenance.code_version == "abc123"
    assert provenance.dev_scores == read_recogniser_manifest(trained).dev_scores
    assert read_provenance(out) == provenance
    assert load_recogniser(out).recognise(["BRAF V600E in melanoma."])  # the shipped folder loads and finds spans
    seen = shipped_recogniser(corpora, out)
    assert seen is not None and seen.data_matches is True
    assert shipped_recogniser(None, out).data_matches is None  # no data directory: nothing to compare
    (corpora / BIORED[0]).write_text((corpora / BIORED[0]).read_text() + "\n")  # another copy of BioRED Train
    changed = shipped_recogniser(corpora, out)
    assert changed.data_matches is False and "train-recogniser" in changed.note()


def test_a_data_directory_without_a_corpus_file_ships_nothing(trained, corpora, tmp_path):
    (corpora / BC5CDR[0]).unlink()
    with pytest.raises(RecogniserError, match="CDR_TrainingSet.PubTator.txt: training corpus file not found"):
        ship_recogniser(trained, corpora, tmp_path / "shipped")
    assert not (tmp_path / "shipped").exists() and not (tmp_path / "shipped.tmp").exists()


def test_a_folder_that_is_not_a_recogniser_is_refused_by_the_command(tmp_path, corpora):
    done = subprocess.run([sys.executable, "-m", "curation", "ship-recogniser", str(tmp_path / "nothing"),
                           "--data-dir", str(corpora)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "not a recogniser folder" in done.stderr and "Traceback" not in done.stderr


def test_the_provenance_of_a_damaged_folder_is_named(tmp_path):
    (tmp_path / "provenance.json").write_text("{not json")
    with pytest.raises(RecogniserError, match="provenance.json: malformed provenance"):
        read_provenance(tmp_path)
    assert shipped_recogniser(None, tmp_path / "none") is None  # a checkout that ships none


def test_the_repository_ships_a_recogniser_trained_on_this_data(data_dir):
    found = shipped_recogniser(data_dir)
    assert found is not None, f"no shipped recogniser at {shipped.SHIPPED}"
    assert found.data_matches is True, "the shipped recogniser's corpora digests differ from the data directory's"
    provenance = found.provenance
    assert provenance.dev_scores["ents_f"] > 0.7 and provenance.selected_on == "biored_dev"
    assert len(provenance.code_version) == 40
    spans = load_recogniser(found.folder).recognise(
        ["Melanoma patients whose tumours carry BRAF V600E respond to vemurafenib."])[0]
    text = "Melanoma patients whose tumours carry BRAF V600E respond to vemurafenib."
    found = {text[start:end]: kind for start, end, kind in spans}
    assert found.get("Melanoma") == "disease" and found.get("BRAF") == "gene" and found.get("V600E") == "variant", spans


def _settings(tmp_path: Path, data_dir: Path) -> Settings:
    return dataclasses.replace(Settings(), data_dir=data_dir, models_dir=tmp_path / "models",
                               cache_dir=tmp_path / "cache", db_path=tmp_path / "store.duckdb")


def test_after_a_load_the_shipped_recogniser_is_installed_and_its_activation_job_started(
        con, trained, corpora, tmp_path, monkeypatch):
    folder = tmp_path / "shipped"
    ship_recogniser(trained, corpora, folder, code_version="abc123")
    monkeypatch.setattr(shipped, "SHIPPED", folder)
    started = []
    job = type("Job", (), {"job_id": 7})
    monkeypatch.setattr(workflow, "start_recogniser_activation",
                        lambda con, settings, path, who="": started.append(Path(path)) or job)
    settings = _settings(tmp_path, corpora)
    got, line = first_models.start_shipped_recogniser(con, settings)
    installed = settings.models_dir / "recognisers" / "shipped-tiny"  # not train-recogniser's default folder
    assert got is job and started == [installed] and "background job 7" in line
    assert json.loads((installed / "provenance.json").read_text())["code_version"] == "abc123"
    assert install(shipped_recogniser(corpora, folder), settings.models_dir / "recognisers") == installed  # kept
    (listed,) = workflow.recogniser_overview(con, settings).trained  # the Train page says where it comes from
    assert "shipped with the code (trained at commit abc123" in listed.summary()

    insert_entity_model(con, "recogniser", str(installed), "tiny")  # a curator's recogniser is active: kept
    set_active_entity_model(con, "recogniser", str(installed))
    got, line = first_models.start_shipped_recogniser(con, settings)
    assert got is None and "already active" in line and len(started) == 1


def test_without_a_shipped_recogniser_the_step_says_so(con, tmp_path, monkeypatch):
    monkeypatch.setattr(shipped, "SHIPPED", tmp_path / "none")
    got, line = first_models.start_shipped_recogniser(con, _settings(tmp_path, tmp_path / "data"))
    assert got is None and "no recogniser ships" in line


def test_the_load_summary_names_the_corpus_files_that_differ_from_the_recorded_digests(trained, corpora, tmp_path):
    import shutil

    folder = tmp_path / "shipped"
    ship_recogniser(trained, corpora, folder, code_version="abc123")
    copy = tmp_path / "other-copy"
    shutil.copytree(corpora, copy)
    assert shipped_recogniser(copy, folder).data_matches is True
    changed = next(name for name in shipped_recogniser(copy, folder).provenance.data_digests)
    with (copy / changed).open("a") as handle:
        handle.write("\n")
    found = shipped_recogniser(copy, folder)
    assert found.data_matches is False and found.differing == (changed,)
    assert f"({changed} differ from the digests it recorded, or are missing)" in found.note()
    assert "Entity recogniser" in found.note()


def test_a_load_with_a_shipped_recogniser_says_it_annotates_again_at_the_end(trained, corpora, tmp_path, monkeypatch):
    from curation.entities.served_annotator import NO_RECOGNISER

    settings = _settings(tmp_path, corpora)
    monkeypatch.setattr(shipped, "SHIPPED", tmp_path / "none")
    assert first_models.load_start_note(settings, NO_RECOGNISER) == NO_RECOGNISER  # none ships: what is true
    folder = tmp_path / "shipped"
    ship_recogniser(trained, corpora, folder, code_version="abc123")
    monkeypatch.setattr(shipped, "SHIPPED", folder)
    note = first_models.load_start_note(settings, NO_RECOGNISER)
    assert "no recogniser trained" not in note and "annotates them again with the shipped recogniser" in note
    assert first_models.load_start_note(settings, "") == ""
