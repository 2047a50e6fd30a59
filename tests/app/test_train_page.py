from __future__ import annotations

from streamlit.testing.v1 import AppTest

from curation.config import PROJECT_ROOT
from curation.versions import registry
from curation.versions.manifest import Manifest

APP = str(PROJECT_ROOT / "app.py")


def _publish(models, version, **manifest):
    """A version with empty parts: enough for this page, which never loads a model. Its document count
    differs from the store's so that the Curate page (the app's first page) does not try to load it."""
    tmp = registry.staging(models, version)
    for part in ("model", "dense", "lexical"):
        (tmp / part).mkdir()
    return registry.publish(models, version, Manifest(schema="PO", documents=0, **manifest))


def _train_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/train.py").run()
    return at


def _encoder_button(at: AppTest):
    """The retrain form's submit button ("Update the ranker" comes first on the page: the default action)."""
    return next(b for b in at.button if b.label == "Retrain the encoder")


def _active():
    from pages.parts.common import connection

    return connection().execute("SELECT version FROM model_versions WHERE active ORDER BY 1").fetchall()


def test_no_versions_says_how_to_build_one(loaded_db):
    at = _train_page()
    assert not at.exception
    assert at.title[0].value == "Train & evaluate"
    assert any("python -m curation train --schema PO --zero-shot" in i.value for i in at.info)


def test_empty_store_does_not_fail(tmp_path, monkeypatch):
    monkeypatch.setenv("CURATION_DB", str(tmp_path / "empty.duckdb"))
    monkeypatch.setenv("CURATION_MODELS_DIR", str(tmp_path / "models"))
    at = _train_page()
    assert not at.exception
    assert any("--zero-shot" in i.value for i in at.info)


def test_versions_metrics_charts_and_activation(loaded_db, tmp_path):
    models = tmp_path / "models"
    _publish(models, "po-base", trained=False, metrics={"ndcg@10": 0.31, "map@10": 0.2, "entity_recall@10": 0.4})
    _publish(
        models,
        "po-edel",
        trained=True,
        metrics={"ndcg@10": 0.52, "entity_recall@50": 0.7},
        loss_curve=(0.8, 0.6, 0.5),
        train_seconds=12.5,
    )
    (models / "broken").mkdir()
    (models / "broken" / "manifest.json").write_text("{oops")
    at = _train_page()
    assert not at.exception
    assert any("broken/manifest.json is corrupted" in w.value for w in at.warning)
    table = at.dataframe[0].value
    assert set(table["version"]) == {"po-base", "po-edel"}
    assert set(table["ndcg@10"]) == {0.31, 0.52}
    assert len(at.get("plotly_chart")) == 2  # metrics per version, training loss
    assert _active() == []

    at.selectbox(key="activate_choice").set_value("po-edel")
    at.button(key="activate").click()
    at.run()
    assert not at.exception
    assert _active() == [("po-edel",)]
    at.selectbox(key="activate_choice").set_value("po-base")
    at.button(key="activate").click()
    at.run()
    assert _active() == [("po-base",)]  # one active version per schema
    assert at.dataframe[0].value.set_index("version").loc["po-base", "active"]


def test_activating_a_version_whose_folder_went_away_is_an_error(loaded_db, tmp_path):
    import shutil

    models = tmp_path / "models"
    _publish(models, "po-1")
    _publish(models, "po-2")
    at = _train_page()
    shutil.rmtree(models / "po-2" / "dense")
    at.selectbox(key="activate_choice").set_value("po-2")
    at.button(key="activate").click()
    at.run()
    assert not at.exception
    assert any("cannot activate po-2" in e.value for e in at.error)
    assert _active() == []


# --- retraining -----------------------------------------------------------------------------


def _stand_in_worker(job_dir):
    """A process in place of the worker: alive until the test writes its result and kills it."""
    import subprocess
    import sys

    from curation.jobs import retraining

    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "curation.jobs.worker"],
                            start_new_session=True)
    retraining._CHILDREN[proc.pid] = proc
    return proc.pid


def test_retrain_button_starts_a_job_shows_progress_and_cancels(loaded_db, monkeypatch):
    import json
    import os
    import signal
    from pathlib import Path

    from curation.jobs import retraining
    from curation.store.jobs import get_job, list_jobs
    from pages.parts.common import connection

    monkeypatch.setattr(retraining, "spawn_worker", _stand_in_worker)
    at = _train_page()
    assert not at.exception
    at.number_input(key="rt_max_steps").set_value(7)
    at.selectbox(key="rt_index_kind").set_value("hnsw")
    at.selectbox(key="rt_index_backend").set_value("milvus")
    _encoder_button(at).click()  # the form's "Retrain the encoder" button
    at.run()
    assert not at.exception
    con = connection()
    job = list_jobs(con)[0]
    try:
        assert job.state == "running" and job.params["max_steps"] == 7 and job.params["use_decisions"]
        assert (job.params["index_kind"], job.params["index_backend"]) == ("hnsw", "milvus")
        Path(job.job_dir, "progress.json").write_text(
            json.dumps({"state": "running", "step": 30, "total": 120, "loss": 0.4321, "eta_s": 95, "epoch": 1})
        )
        at.run()
        bar = at.get("progress")[0]
        assert "Job 1 · running · 30/120 · loss 0.4321 · ETA 1.6 min" in bar.proto.text
        assert not any(b.key == "rt_max_steps" for b in at.number_input)  # no second job while one runs

        at.button(key="rt_cancel").click()
        at.run()
        assert Path(job.job_dir, "cancel").exists()
        assert "cancelling" in get_job(con, job.job_id).message
        result = {"state": "cancelled", "message": "cancelled at step 31"}
        Path(job.job_dir, "result.json").write_text(json.dumps(result))
        at.run()
        assert get_job(con, job.job_id).state == "cancelled"
        assert not at.get("progress")
        assert not any(b.key == "rt_cancel" for b in at.button)
    finally:
        os.killpg(job.pid, signal.SIGKILL)


def test_a_second_start_is_refused_with_a_message(loaded_db, monkeypatch):
    from curation.config import load_settings
    from curation.jobs import retraining
    from curation.store.jobs import list_jobs
    from pages.parts.common import connection

    monkeypatch.setattr(retraining, "spawn_worker", lambda job_dir: 2**22 + 777)  # a worker that is gone
    at = _train_page()
    retraining.start_retrain(connection(), retraining.RetrainRequest("PO"), load_settings())
    at.run()  # the panel polls the job: its worker is gone, so it fails and the form is back
    assert not at.exception
    job = list_jobs(connection())[0]
    assert job.state == "failed" and "stopped without finishing" in job.message
    at.multiselect(key="rt_sources").set_value([])
    _encoder_button(at).click()
    at.run()
    assert any("at least one source" in e.value for e in at.error)


def test_last_job_outcome_and_its_training_data_are_shown(loaded_db):
    from curation.jobs.result import DecisionSummary, JobResult, TrainingSummary, result_json
    from curation.store.jobs import create_job, finish_job
    from curation.versions.manifest import PairCounts
    from pages.parts.common import connection

    con = connection()
    job = create_job(con, "retrain", {"schema": "PO"})
    training = TrainingSummary(
        pairs=5,
        report={"decision": {"decision-neg": PairCounts(positive=0, negative=2)},
                "kb": {"pos-1": PairCounts(positive=3, negative=0)}},
        decisions=DecisionSummary(active_decisions=4, ignored_superseded=1, conflicts_excluded=1, adjudicated_items=0,
                                  ignored_missing_document=0),
        decision_pairs_on_dev_queries=0,
        dev_queries=3,
    )
    message = "po-edel-x: kept inactive: dev ndcg@10 (hybrid) 0.400 is below"
    result = JobResult("succeeded", message, version="po-edel-x", training=training, activated=False)
    finish_job(con, job.job_id, "succeeded", message, result_json(result))
    at = _train_page()
    assert not at.exception
    assert any(f"Job {job.job_id} succeeded: po-edel-x: kept inactive" in s.value for s in at.success)
    table = at.dataframe[1].value
    assert list(zip(table["source"], table["class"], table["negative"], strict=True)) == [
        ("decision", "decision-neg", 2), ("kb", "pos-1", 0)]
    assert any("1 superseded or undone (ignored), 1 items left out" in c.value for c in at.caption)


def test_the_sidebar_shows_a_running_job_on_every_page(loaded_db, monkeypatch):
    import json
    import os
    import signal
    from pathlib import Path

    from curation.config import load_settings
    from curation.jobs import retraining
    from pages.parts.common import connection

    monkeypatch.setattr(retraining, "spawn_worker", _stand_in_worker)
    job = retraining.start_retrain(connection(), retraining.RetrainRequest("PO"), load_settings())
    try:
        Path(job.job_dir, "progress.json").write_text(json.dumps({"state": "indexing", "step": 1, "total": 4}))
        at = AppTest.from_file(APP, default_timeout=60)
        at.run()  # the Curate page (AppTest draws app.py's sidebar on the first run)
        assert not at.exception
        assert any(f"Retraining (job {job.job_id}): indexing 25%" in c.value for c in at.sidebar.caption)
    finally:
        os.killpg(job.pid, signal.SIGKILL)


# --- the entity recogniser ----------------------------------------------------------------------


def _recogniser_folder(models, name: str, f1: float):
    """A recogniser folder with a manifest only: enough for this page, which reads manifests (never the model)."""
    import json

    import spacy

    folder = models / "recognisers" / name
    (folder / "model").mkdir(parents=True)
    (folder / "model" / "meta.json").write_text("{}")
    (folder / "manifest.json").write_text(json.dumps({
        "name": name, "format": "recogniser/1", "spacy_version": spacy.__version__,
        "labels": ["CHEMICAL", "GENE"], "created": "2025-01-02T03:04:05+00:00", "trained_on": {},
        "selected_on": "biored_dev", "dev_scores": {"ents_f": f1, "ents_p": 0.9, "ents_r": 0.8, "GENE.f": 0.88},
    }))
    return folder


def test_recogniser_section_says_dictionaries_trains_in_the_background_and_activates(loaded_db, tmp_path,
                                                                                      monkeypatch):
    import json
    import os
    import signal
    from pathlib import Path

    from curation.jobs import retraining
    from curation.store.jobs import get_job, list_jobs
    from curation.workflows import recogniser_training
    from pages.parts.common import connection

    monkeypatch.setattr(retraining, "spawn_worker", _stand_in_worker)  # launch_job starts both kinds
    monkeypatch.setattr(recogniser_training, "check_data_dir", lambda data_dir: None)
    _recogniser_folder(tmp_path / "models", "biomed-a", 0.812)
    at = _train_page()
    assert not at.exception
    assert any("no recogniser trained: highlights come from dictionaries" in i.value for i in at.info)
    choice = at.selectbox(key="rec_choice")
    assert choice.options == ["biomed-a (2025-01-02T03:04, dev F1 0.812)"]

    at.number_input(key="rec_epochs").set_value(3)
    at.button(key="rec_train").click()
    at.run()
    assert not at.exception
    job = list_jobs(connection())[0]
    try:
        assert job.kind == "recogniser" and job.state == "running" and job.params["max_epochs"] == 3
        Path(job.job_dir, "progress.json").write_text(json.dumps(
            {"state": "training · dev F1 0.700", "step": 2, "total": 3, "loss": 12.5, "eta_s": None, "epoch": 2}))
        at.run()
        bar = at.get("progress")[0]
        assert f"Job {job.job_id} · training · dev F1 0.700 · 2/3 · loss 12.5000" in bar.proto.text
        assert at.button(key="rec_train").disabled and at.button(key="rec_activate").disabled
        assert not any(b.key == "rt_cancel" for b in at.button)  # the retraining panel is not this job's

        at.button(key="rec_cancel").click()
        at.run()
        assert Path(job.job_dir, "cancel").exists()
        Path(job.job_dir, "result.json").write_text(json.dumps({"state": "cancelled", "message": "cancelled"}))
        at.run()
        assert get_job(connection(), job.job_id).state == "cancelled"
        assert not at.button(key="rec_train").disabled
    finally:
        os.killpg(job.pid, signal.SIGKILL)


def test_an_active_recogniser_shows_its_dev_scores(loaded_db, tmp_path):
    from curation.store.annotations import insert_entity_model, set_active_entity_model
    from pages.parts.common import connection

    folder = _recogniser_folder(tmp_path / "models", "biomed-b", 0.853)
    con = connection()
    insert_entity_model(con, "recogniser", str(folder.resolve()), "biomed-b")
    set_active_entity_model(con, "recogniser", str(folder.resolve()))
    at = _train_page()
    assert not at.exception
    assert any("Active recogniser **biomed-b**: dev F1 0.853 (P 0.900, R 0.800) on biored_dev; per type: GENE 0.88"
               in c.value for c in at.caption)
    assert at.selectbox(key="rec_choice").options == ["biomed-b (2025-01-02T03:04, dev F1 0.853, active)"]


def test_the_activation_evidence_of_each_version_is_shown(loaded_db, tmp_path):
    from curation.versions.manifest import GateEvidence, Served

    models = tmp_path / "models"
    _publish(models, "po-base", trained=False)
    _publish(models, "po-better", trained=True, gate=GateEvidence(
        baseline="po-base", dev_source="decisions", queries=24, new_mean=0.61, baseline_mean=0.52, mean_delta=0.09,
        low=0.031, high=0.152, improved=True, verdict="better: the 95% interval of the gain excludes zero"),
        served=Served(dense_share=0.3, queries=24, rerank_k=50, rerank_rule="off: no dev gain"))
    at = _train_page()
    assert not at.exception
    assert any(s.value == "Activation evidence" for s in at.subheader)
    table = next(d.value for d in at.dataframe if "verdict" in d.value.columns)
    row = table.iloc[0]
    assert list(table["version"]) == ["po-better"]  # the zero-shot version has no evidence
    assert (row["compared with"], row["dev source"], row["dev queries"]) == ("po-base", "held-out decisions", 24)
    assert (row["mean gain"], row["95% low"], row["95% high"], bool(row["better"])) == (0.09, 0.031, 0.152, True)
    assert any("interval of its per-query NDCG@10 gain" in c.value for c in at.caption)
    assert (row["served dense share"], row["cross-encoder"]) == (0.3, "off: no dev gain")


def test_update_the_ranker_is_the_default_action_and_the_tolerance_control_is_gone(loaded_db):
    at = _train_page()
    assert not at.exception
    update = at.button(key="rk_update")
    assert update.label == "Update the ranker" and at.button[0].key == "rk_update"
    assert any(s.value == "Retrain the encoder" for s in at.subheader)
    assert not any(n.key == "rt_tolerance" for n in at.number_input)


def test_a_kept_ranker_shows_its_evidence_and_what_carries_it(loaded_db, tmp_path):
    from curation.config import load_settings
    from curation.ranking.history import ranker_home, save_update
    from tests.curation.ranking.tiny_ranker import _reversing_stage

    model = _reversing_stage(tmp_path / "built").model
    saved = save_update(ranker_home(load_settings().models_dir, None, "PO"), model)
    at = _train_page()
    assert not at.exception
    labels = [e.label for e in at.expander]
    assert any(label.startswith(f"Ranker {saved.name} · kept, not served") for label in labels)


def test_the_stores_learning_curve_shows_once_two_updates_were_measured(loaded_db, tmp_path):
    from dataclasses import replace

    from curation.config import load_settings
    from curation.ranking.history import ranker_home, save_update
    from curation.ranking.model import RankerModel
    from curation.workflows.ranker_update import RankerRow, learning_curve
    from tests.curation.ranking.tiny_ranker import _reversing_stage

    model = _reversing_stage(tmp_path / "built").model
    home = ranker_home(load_settings().models_dir, None, "PO")
    at = _train_page()
    assert not any("This store's learning curve" in c.value for c in at.caption)  # no update measured yet
    for decisions, before, after in ((12, 0.61, 0.60), (40, 0.63, 0.68)):
        manifest = replace(model.manifest, dev={**(model.manifest.dev or {}), "queries": 6, "baseline_mean": before,
                                                "new_mean": after},
                           trained_on={**model.manifest.trained_on, "decisions_trained_on": decisions})
        save_update(home, RankerModel(model.booster, manifest))
    at = _train_page()
    assert not at.exception
    assert any("This store's learning curve" in c.value for c in at.caption)
    rows = [RankerRow(n, False, False, "", 0, 0, 0, q, "", (), (), d, b, a)
            for n, q, d, b, a in (("new", 6, 40, 0.63, 0.68), ("none", 0, 30, 0, 0), ("old", 6, 12, 0.61, 0.60))]
    assert [(p["update"], p["decisions trained on"], p["with the ranker"]) for p in learning_curve(rows)] == [
        ("old", 12, 0.6), ("new", 40, 0.68)]  # oldest first; an update without dev queries is no point
