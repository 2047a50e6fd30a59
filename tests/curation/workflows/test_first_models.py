"""The learned parts after a first load: steps of the load, run once the index is complete, resumable, opt-out."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from curation.config import Settings
from curation.entities.annotation import Annotator
from curation.entities.served_annotator import dictionary_matcher
from curation.errors import CurationError
from curation.store.loads import unfinished_load
from curation.workflows import background_load, first_models
from curation.workflows.quickstart import load_sample

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.fixture
def sample_dir(tmp_path) -> Path:
    folder = tmp_path / "data"
    for source, target in [("civic/current.tsv", "civic/civic_evidence_small.tsv"),
                           ("pubtator/small.PubTator", "biored/Train.PubTator")]:
        (folder / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURES / source, folder / target)
    return folder


def _settings(tmp_path: Path, data_dir: Path) -> Settings:
    return dataclasses.replace(Settings(), data_dir=data_dir, cache_dir=tmp_path / "cache", vocabularies=(),
                               db_path=tmp_path / "store.duckdb", models_dir=tmp_path / "models")


def _report(seen: list):
    return lambda step, done, total: seen.append(step)


def test_training_steps_run_after_the_index_and_do_not_hold_it_back(con, tmp_path, sample_dir, monkeypatch):
    settings = _settings(tmp_path, sample_dir)
    load_sample(con, settings, annotator=lambda: Annotator(dictionary_matcher(con)), train=True)
    left = unfinished_load(con)
    assert [s.kind for s in left.pending] == ["relations", "base-version", "recogniser"]
    assert not background_load.index_state(con, settings).building  # the concept index is complete

    ran = []
    monkeypatch.setattr(first_models, "train_relations_here", lambda con, s: ran.append("here") or "scorer active")
    job = type("Job", (), {"job_id": 1, "finished": True, "state": "succeeded", "message": "relations-x is active"})
    monkeypatch.setattr(first_models, "start_relations_job", lambda con, s: ran.append("job") or job)
    monkeypatch.setattr(first_models, "build_base_version", lambda con, s: ran.append("base") or "po-base serves")
    recogniser = type("Job", (), {"job_id": 2, "finished": True, "state": "succeeded", "message": "biomed is active"})
    monkeypatch.setattr(first_models, "start_shipped_recogniser",
                        lambda con, s: ran.append("recogniser") or (recogniser, "the shipped recogniser: job 2"))
    seen: list[str] = []
    line = first_models.train_pending(con, settings, _report(seen), background=True)
    assert ran == ["job", "base", "recogniser"]  # the app: the scorer as a job, the base version here, the recogniser
    assert [step.split(" · ")[0] for step in seen] == ["1/3", "2/3", "3/3"]
    assert line.startswith("relation scorer job 1 succeeded: relations-x is active [") and "po-base serves [" in line
    assert "recogniser job 2 succeeded: biomed is active [" in line
    assert unfinished_load(con) is None
    assert first_models.train_pending(con, settings, _report(seen), background=True) == ""  # nothing left


def test_a_training_step_that_fails_is_said_and_the_next_still_runs(con, tmp_path, sample_dir, monkeypatch):
    settings = _settings(tmp_path, sample_dir)
    load_sample(con, settings, annotator=lambda: Annotator(dictionary_matcher(con)), train=True)

    def no_corpora(con, s):
        raise CurationError("BioRED Dev is missing under the data directory")

    monkeypatch.setattr(first_models, "train_relations_here", no_corpora)
    monkeypatch.setattr(first_models, "build_base_version", lambda con, s: "po-base serves")
    monkeypatch.setattr(first_models, "start_shipped_recogniser", lambda con, s: (None, "no recogniser ships"))
    line = first_models.train_pending(con, settings, _report([]), background=False)
    assert "relations failed: BioRED Dev is missing" in line and "po-base serves" in line
    assert unfinished_load(con) is None
    steps = {kind: (state, message) for kind, state, message in
             con.execute("SELECT kind, state, message FROM load_steps").fetchall()}
    assert steps["relations"][0] == "failed" and steps["base-version"][0] == "done"
    assert steps["recogniser"] == ("done", "no recogniser ships")


def test_without_training_the_plan_has_no_training_step(con, tmp_path, sample_dir):
    load_sample(con, _settings(tmp_path, sample_dir), annotator=lambda: Annotator(dictionary_matcher(con)))
    kinds = [k for (k,) in con.execute("SELECT kind FROM load_steps ORDER BY position").fetchall()]
    assert kinds == ["kb", "corpus", "annotate"]


@pytest.mark.slow
def test_the_base_version_is_the_offline_minilm_indexing_the_corpus(con, tmp_path, sample_dir):
    settings = _settings(tmp_path, sample_dir)
    load_sample(con, settings)
    line = first_models.build_base_version(con, settings)
    (folder,) = [p for p in (tmp_path / "models").iterdir() if p.is_dir()]
    assert line.startswith(f"base encoder version {folder.name} serves")
    from curation.versions.manifest import read_manifest

    manifest = read_manifest(folder / "manifest.json")
    assert manifest.documents == 2 and "MiniLM" in manifest.base_model


def test_the_apps_base_version_build_yields_the_cpu_to_curators_and_gives_torch_back():
    import os
    import threading

    import torch

    from curation.jobs.worker import WORKER_NICENESS
    from curation.workflows.first_models import yielding_cpu

    before = torch.get_num_threads()
    ours = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    seen: dict[str, int] = {}

    def build() -> None:  # the training steps' own thread, as in the app
        with yielding_cpu():
            seen["threads"] = torch.get_num_threads()
            seen["nice"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    worker = threading.Thread(target=build)
    worker.start()
    worker.join(30)
    assert seen["threads"] == 1 and torch.get_num_threads() == before
    assert seen["nice"] == WORKER_NICENESS
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == ours  # that thread only: this one kept its own
