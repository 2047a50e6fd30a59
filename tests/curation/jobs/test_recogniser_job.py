"""The recogniser job: trained (tiny) in the worker, annotations computed there, activated and loaded by the app.

A tiny corpus (the three-sentence documents of test_recogniser) stands in for BioRED and BC5CDR;
one test runs the real worker process end to end, the others run the worker's ``run`` in this process.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from curation.config import load_settings
from curation.errors import CurationError
from curation.grades import Grade
from curation.jobs import retraining, worker
from curation.jobs.result import job_result
from curation.learning.recogniser.learner import RecogniserRequest
from curation.schemas import PO
from curation.store.annotations import get_active_entity_model, list_stale_documents
from curation.store.corpus import iter_documents
from curation.store.decisions import record_decision
from curation.store.jobs import get_job, list_jobs
from curation.store.opening import open_store
from curation.workflows import recogniser_training as workflow
from curation.workflows import retrain
from curation.workflows.ingestion import ingest_corpus, ingest_kb
from curation.workflows.serving import open_app_store

TINY = {"epochs": 2, "width": 16}

POLICY = "recogniser_first(chemical=dictionary_first)"  # the default per-kind policy
TINY_VERSION, WORSE_VERSION = f"{POLICY}:tiny:lexicon", f"{POLICY}:worse:lexicon"


@pytest.fixture
def app_store(tmp_path, fixtures, monkeypatch):
    """A store with the fixture KB and corpus and one decision; models and jobs under tmp_path."""
    monkeypatch.setenv("CURATION_MODELS_DIR", str(tmp_path / "models"))
    db = tmp_path / "s.duckdb"
    con = open_store(db)
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    pmid = next(iter_documents(con)).pmid
    record_decision(con, "ann", PO, {"Gene": "BRAF", "Variant": "V600E"}, pmid, Grade.COMPLETE)
    yield con, db
    con.close()


def _kept(con) -> tuple:
    """What a recogniser must never touch: decisions, KB records, gold mentions, the worklist."""
    return (
        con.execute("SELECT CAST(COLUMNS(*) AS VARCHAR) FROM decisions ORDER BY ALL").fetchall(),
        con.execute("SELECT CAST(COLUMNS(*) AS VARCHAR) FROM kb_records ORDER BY ALL").fetchall(),
        con.execute("SELECT CAST(COLUMNS(*) AS VARCHAR) FROM mentions ORDER BY ALL").fetchall(),
        con.execute("SELECT count(*) FROM worklist").fetchall(),
    )


def _no_launch(job_dir: Path) -> int:
    return 2**22 + 4321  # no such process: the worker "is gone" once the test has run it here


def _annotators(con) -> dict[str, int]:
    return dict(con.execute("SELECT annotator, count(*) FROM annotated_documents GROUP BY 1").fetchall())


def test_a_trained_recogniser_is_activated_and_its_annotations_loaded_leaving_decisions_alone(app_store, corpora):
    con, _ = app_store
    settings = load_settings()
    before = _kept(con)
    job = workflow.start_recogniser_training(con, settings, data_dir=corpora, name="tiny", launch=_no_launch, **TINY)
    assert job.kind == "recogniser" and job.params["models_dir"] == str(settings.models_dir / "recognisers")
    result = worker.run(Path(job.job_dir))  # what the worker process does
    assert result.succeeded, result.message
    folder = settings.models_dir / "recognisers" / "tiny"
    assert result.path == str(folder) and "ents_f" in result.scores
    assert folder.is_dir() and not folder.with_name("tiny.tmp").exists()
    progress = json.loads(Path(job.job_dir, "progress.json").read_text())
    assert progress["state"] == "annotating"
    header = json.loads(Path(job.job_dir, "annotations.jsonl").read_text().splitlines()[0])
    assert header["annotator"] == TINY_VERSION

    assert retrain.current_job(con) is None  # the poll finishes the job and applies it
    job = get_job(con, job.job_id)
    assert job.state == "succeeded" and job_result(job).activated is True, job.message
    assert "tiny is active" in job.message and "abstracts re-annotated" in job.message
    assert get_active_entity_model(con, "recogniser").path == str(folder)
    documents = con.execute("SELECT count(*) FROM documents").fetchone()[0]
    assert _annotators(con) == {TINY_VERSION: documents}
    assert list_stale_documents(con, TINY_VERSION, None, True) == []
    assert con.execute("SELECT count(*) FROM annotations WHERE source = 'gold'").fetchone()[0] == \
        con.execute("SELECT count(*) FROM mentions").fetchone()[0]  # gold rows kept
    assert _kept(con) == before
    assert not Path(job.job_dir, "annotations.jsonl").exists()
    assert workflow.apply_recogniser_jobs(con)[0].message == job.message  # applied once only

    overview = workflow.recogniser_overview(con, settings)
    assert overview.active is not None and overview.active.name == "tiny" and "tiny" in overview.note
    assert [t.name for t in overview.trained] == ["tiny"]


def test_the_real_worker_process_and_recovery_at_app_start(app_store, corpora):
    con, db = app_store
    settings = load_settings()
    job = workflow.start_recogniser_training(con, settings, data_dir=corpora, name="tiny2", **TINY)
    try:
        deadline_s = 120
        while retraining.worker_alive(job.pid) and deadline_s > 0:
            time.sleep(0.5)
            deadline_s -= 0.5
        assert Path(job.job_dir, "result.json").exists(), Path(job.job_dir, "worker.log").read_text()[-2000:]
        con.close()  # the app was down while the worker finished: the next start applies the job
        app = open_app_store(db)
        cursor = app.cursor()
        job = get_job(cursor, job.job_id)
        assert job.state == "succeeded" and job_result(job).activated is True, job.message
        assert get_active_entity_model(cursor, "recogniser").name == "tiny2"
        app.close()
    finally:
        if retraining.worker_alive(job.pid):
            os.killpg(job.pid, signal.SIGKILL)


def test_cancelling_stops_training_and_removes_the_staging_folder(app_store, corpora):
    con, _ = app_store
    settings = load_settings()
    job = workflow.start_recogniser_training(con, settings, data_dir=corpora, name="stop", launch=_no_launch, **TINY)
    Path(job.job_dir, "cancel").touch()
    result = worker.run(Path(job.job_dir))
    assert result.state == "cancelled" and "staging folder was removed" in result.message
    recognisers = settings.models_dir / "recognisers"
    assert not (recognisers / "stop.tmp").exists() and not (recognisers / "stop").exists()
    job = retraining.poll_job(con, job)
    assert job.state == "cancelled" and get_active_entity_model(con, "recogniser") is None


def test_a_dead_worker_fails_the_job_and_its_staging_folder_is_removed(app_store, corpora):
    con, _ = app_store
    settings = load_settings()
    job = workflow.start_recogniser_training(con, settings, data_dir=corpora, name="dead", launch=_no_launch)
    staging = settings.models_dir / "recognisers" / "dead.tmp"
    staging.mkdir(parents=True)
    Path(job.job_dir, "version.txt").write_text("dead")  # as the worker writes before training
    recovered = retraining.recover_jobs(con)
    assert [j.state for j in recovered] == ["failed"] and "stopped without finishing" in recovered[0].message
    assert not staging.exists() and get_active_entity_model(con, "recogniser") is None


def test_activating_a_trained_folder_runs_as_a_job_and_a_worse_new_one_is_kept_inactive(app_store, corpora):
    con, _ = app_store
    settings = load_settings()
    job = workflow.start_recogniser_training(con, settings, data_dir=corpora, name="first", launch=_no_launch, **TINY)
    worker.run(Path(job.job_dir))
    retrain.current_job(con)
    first = settings.models_dir / "recognisers" / "first"
    # a second recogniser whose manifest says it is much worse on dev
    job = workflow.start_recogniser_training(con, settings, data_dir=corpora, name="worse", launch=_no_launch, **TINY)
    worker.run(Path(job.job_dir))
    manifest = settings.models_dir / "recognisers" / "worse" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["dev_scores"]["ents_f"] = -1.0
    manifest.write_text(json.dumps(data))
    result = json.loads(Path(job.job_dir, "result.json").read_text())
    result["scores"]["ents_f"] = -1.0
    Path(job.job_dir, "result.json").write_text(json.dumps(result))
    retrain.current_job(con)
    job = get_job(con, job.job_id)
    assert job_result(job).activated is False and "kept inactive" in job.message
    assert get_active_entity_model(con, "recogniser").path == str(first)

    job = workflow.start_recogniser_activation(con, settings, settings.models_dir / "recognisers" / "worse",
                                               launch=_no_launch)
    assert worker.run(Path(job.job_dir)).succeeded
    retrain.current_job(con)
    assert job_result(get_job(con, job.job_id)).activated is True
    assert get_active_entity_model(con, "recogniser").name == "worse"
    assert _annotators(con) == {WORSE_VERSION: con.execute("SELECT count(*) FROM documents").fetchone()[0]}


def test_bad_input_is_refused_before_a_job_is_recorded(app_store, tmp_path):
    con, _ = app_store
    settings = load_settings()
    with pytest.raises(CurationError, match="biored/Train.PubTator: training corpus file not found"):
        workflow.start_recogniser_training(con, settings, data_dir=tmp_path / "nowhere", launch=_no_launch)
    (tmp_path / "junk").mkdir()
    with pytest.raises(CurationError, match="not a recogniser folder"):
        workflow.start_recogniser_activation(con, settings, tmp_path / "junk", launch=_no_launch)
    assert list_jobs(con) == []
    with pytest.raises(CurationError, match="either trains"):
        RecogniserRequest()
