"""Background retraining: jobs, the worker, activation on the gate's evidence, recovery and faults.

Most tests use a tiny store (the eight abstracts of test_cli_train) and a real worker process;
the judgement and recovery logic is tested with hand-made results and stand-in processes.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import pytest

from curation.config import load_settings
from curation.errors import CurationError
from curation.grades import Grade
from curation.jobs import retraining, worker
from curation.jobs.processes import pid_alive
from curation.jobs.result import Baseline, JobResult, job_result, read_result
from curation.learning import version_learner
from curation.schemas import PO
from curation.store.decisions import record_decision
from curation.store.jobs import Job, create_job, finish_job, get_job, list_jobs
from curation.store.opening import open_store
from curation.versions import catalog, registry
from curation.versions.manifest import DevMetrics, GateEvidence, Manifest, PairCounts
from curation.workflows.ingestion import ingest_corpus, ingest_kb
from curation.workflows.retrain import training_summary
from tests.curation.tiny_po import DOCS, KB

SMALL = {"max_steps": 3, "max_seq_length": 64, "batch_size": 8}


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """A store with eight abstracts, eight PO records and three decisions; models and jobs under tmp_path."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"pmid": p, "title": t, "abstract": a}) + "\n" for p, t, a in DOCS))
    kb = tmp_path / "kb.tsv"
    kb.write_text("gene\tvariant\ttreatment\tpmid\n" + "".join("\t".join(row) + "\n" for row in KB))
    monkeypatch.setenv("CURATION_MODELS_DIR", str(tmp_path / "models"))
    con = open_store(tmp_path / "s.duckdb")
    ingest_corpus(con, "jsonl", corpus)
    ingest_kb(con, "tsv", kb, schema="PO")
    # Decisions on train genes (KRAS, ALK): decisions on dev or test genes (BRAF, EGFR here) are never trained on.
    record_decision(con, "ann", PO, {"Gene": "KRAS", "Variant": "G12C"}, "28", Grade.NOT_RELEVANT)
    record_decision(con, "ann", PO, {"Gene": "KRAS", "Variant": "G12C"}, "25", Grade.COMPLETE)
    record_decision(con, "ann", PO, {"Gene": "ALK"}, "27", Grade.PARTIAL)
    yield con
    con.close()


def _fake_version(models: Path, name: str, documents: int = 8, **manifest) -> registry.ModelVersion:
    tmp = registry.staging(models, name)
    for part in ("model", "dense", "lexical"):
        (tmp / part).mkdir()
    return registry.publish(models, name, Manifest(schema="PO", documents=documents, **manifest))


def _no_launch(job_dir: Path) -> int:
    return 2**22 + 12345  # a pid no process has: the worker "died" unless a result is there


def _result(version: registry.ModelVersion, new: float, baseline: str = "", old: float | None = None) -> JobResult:
    return JobResult(
        state="succeeded",
        message=f"built {version.version}",
        version=version.version,
        path=str(version.path),
        metrics=DevMetrics(hybrid={"ndcg@10": new}, dense={"ndcg@10": new}),
        baseline=Baseline(baseline, DevMetrics(hybrid={"ndcg@10": old})) if baseline else None,
    )


def _activated(job: Job) -> bool | None:
    return job_result(job).activated


# --- jobs ---------------------------------------------------------------------------------


def test_one_job_at_a_time_and_final_states(tiny):
    job = retraining.start_retrain(tiny, retraining.RetrainRequest("PO"), load_settings(), launch=_no_launch)
    assert job.state == "running" and Path(job.job_dir, "snapshot", "manifest.json").exists()
    assert json.loads(Path(job.job_dir, "request.json").read_text())["schema"] == "PO"
    with pytest.raises(CurationError, match=f"job {job.job_id} .* one job runs at a time"):
        retraining.start_retrain(tiny, retraining.RetrainRequest("PO"), load_settings(), launch=_no_launch)
    assert finish_job(tiny, job.job_id, "cancelled", "stop") is True
    assert finish_job(tiny, job.job_id, "failed", "late") is False  # a final state is final
    assert get_job(tiny, job.job_id).state == "cancelled"
    with pytest.raises(CurationError, match="finishes as one of"):
        finish_job(tiny, job.job_id, "running")


def test_a_worker_that_cannot_start_fails_the_job(tiny):
    def broken(job_dir: Path) -> int:
        raise OSError(errno.ENOSPC, "No space left on device", str(job_dir))

    with pytest.raises(CurationError, match="could not start: the disk is full"):
        retraining.start_retrain(tiny, retraining.RetrainRequest("PO"), load_settings(), launch=broken)
    job = list_jobs(tiny)[0]
    assert job.state == "failed" and "disk is full" in job.message
    assert not Path(job.job_dir, "snapshot").exists()


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"use_kb": False, "use_decisions": False}, "at least one source"),
        ({"primary_mode": "bm25"}, "primary_mode"),
        ({"epochs": -1}, "at least 1"),  # 0 = chosen for the device
        ({"max_seq_length": 4}, "at least 8"),
    ],
)
def test_bad_requests_are_refused(bad, message):
    with pytest.raises(CurationError, match=message):
        retraining.RetrainRequest("PO", **bad)


def test_unknown_schema_is_refused_before_a_job_is_recorded(tiny):
    with pytest.raises(CurationError, match="unknown"):
        retraining.start_retrain(tiny, retraining.RetrainRequest("NOPE"), load_settings(), launch=_no_launch)
    assert list_jobs(tiny) == []


# --- activation on evidence -----------------------------------------------------------------


def _finish_with(con, result: JobResult) -> Job:
    job = retraining.start_retrain(con, retraining.RetrainRequest("PO"), load_settings(),
                                   launch=_no_launch)
    worker.write_result(Path(job.job_dir), result)
    return retraining.poll_job(con, job)


def test_first_version_is_activated_and_the_snapshot_is_removed(tiny):
    version = _fake_version(load_settings().models_dir, "po-new")
    job = _finish_with(tiny, _result(version, 0.5))
    assert job.state == "succeeded" and _activated(job) is True
    assert "no PO version was active" in job.message
    assert catalog.active_version(tiny, "PO").version == "po-new"
    assert not Path(job.job_dir, "snapshot").exists() and Path(job.job_dir, "result.json").exists()


@pytest.mark.parametrize("low, activated", [(0.02, True), (-0.01, False), (0.0, False)])
def test_activation_only_when_the_gain_interval_is_above_zero(tiny, low, activated):
    models = load_settings().models_dir
    old = _fake_version(models, "po-old")
    catalog.register_version(tiny, old)
    catalog.activate_version(tiny, "po-old")
    evidence = GateEvidence(baseline="po-old", queries=20, new_mean=0.55, baseline_mean=0.5, mean_delta=0.05,
                            low=low, high=0.1, improved=low > 0, verdict="test")
    version = _fake_version(models, f"po-new-{int(low * 100) + 5}", gate=evidence)
    job = _finish_with(tiny, _result(version, 0.55, baseline="po-old", old=0.50))
    assert job.state == "succeeded" and _activated(job) is activated
    assert catalog.active_version(tiny, "PO").version == (version.version if activated else "po-old")
    assert ("kept inactive" in job.message) is not activated
    assert catalog.get_version(tiny, version.version) is not None  # registered either way


def test_without_a_comparable_dev_score_the_new_version_waits(tiny):
    models = load_settings().models_dir
    catalog.register_version(tiny, _fake_version(models, "po-old"))
    catalog.activate_version(tiny, "po-old")
    evidence = GateEvidence(baseline="", queries=12, new_mean=0.9, verdict="no active version evaluated")
    job = _finish_with(tiny, _result(_fake_version(models, "po-new", gate=evidence), 0.9))  # no baseline
    assert _activated(job) is False and "could not be evaluated on the same dev split" in job.message
    assert catalog.active_version(tiny, "PO").version == "po-old"


def test_an_active_version_for_another_corpus_is_replaced(tiny):
    models = load_settings().models_dir
    catalog.register_version(tiny, _fake_version(models, "po-old", documents=5))
    catalog.activate_version(tiny, "po-old")
    job = _finish_with(tiny, _result(_fake_version(models, "po-new"), 0.1))
    assert _activated(job) is True and "does not cover the current corpus" in job.message


def test_a_corrupted_new_version_fails_the_job_and_the_active_one_keeps_serving(tiny):
    models = load_settings().models_dir
    catalog.register_version(tiny, _fake_version(models, "po-old"))
    catalog.activate_version(tiny, "po-old")
    broken = _fake_version(models, "po-broken")
    (broken.path / "manifest.json").write_text("{not json")
    job = _finish_with(tiny, _result(broken, 0.9))
    assert job.state == "failed" and "corrupted" in job.message and "keeps serving" in job.message
    assert catalog.active_version(tiny, "PO").version == "po-old"


def test_a_result_file_that_does_not_read_fails_the_job_naming_file_and_field(tiny):
    job = retraining.start_retrain(tiny, retraining.RetrainRequest("PO"), load_settings(), launch=_no_launch)
    Path(job.job_dir, "result.json").write_text(json.dumps({"state": "failed", "message": "x", "odd": 1}))
    job = retraining.poll_job(tiny, job)
    assert job.state == "failed" and f"{Path(job.job_dir, 'result.json')}: unknown field 'odd'" in job.message
    assert "keeps serving" in job.message


def test_a_result_file_written_by_an_older_worker_is_finished(tiny):
    version = _fake_version(load_settings().models_dir, "po-new")
    job = retraining.start_retrain(tiny, retraining.RetrainRequest("PO"), load_settings(), launch=_no_launch)
    legacy = {"state": "succeeded", "message": "built po-new", "version": "po-new", "path": str(version.path),
              "metrics": {"dense": {"ndcg@10": 0.5}, "hybrid": {"ndcg@10": 0.5}}, "baseline": {},
              "training": {"pairs": 1, "report": {"kb": {"pos-1": {"positive": 1, "negative": 0}}},
                           "decisions": {"pairs": 0, "active_decisions": 0, "ignored_superseded": 0,
                                         "ignored_other_schema": 0, "ignored_missing_document": 0,
                                         "conflicts_excluded": 0, "conflicts_resolved_by_latest": 0,
                                         "adjudicated_items": 0, "by_grade": {}},
                           "decision_pairs_on_dev_queries": 0, "dev_queries": 1},
              "device": "cpu", "settings": {"batch_size": 16, "max_seq_length": 128, "epochs": 1,
                                            "learning_rate": 2e-05},
              "timings_s": {"prepare": 0.1, "build": 1.0, "total": 1.2}}
    Path(job.job_dir, "result.json").write_text(json.dumps(legacy))
    job = retraining.poll_job(tiny, job)
    assert job.state == "succeeded" and _activated(job) is True
    assert training_summary(job)[0] == [{"source": "kb", "class": "pos-1", "positive": 1, "negative": 0}]


def test_preload_runs_before_the_swap(tiny):
    seen = []

    def preload(path: Path) -> None:
        active = catalog.active_version(tiny, "PO")
        seen.append((path.name, active.version if active else None))

    job = retraining.start_retrain(tiny, retraining.RetrainRequest("PO"), load_settings(), launch=_no_launch)
    version = _fake_version(load_settings().models_dir, "po-new")
    worker.write_result(Path(job.job_dir), _result(version, 0.5))
    retraining.poll_job(tiny, job, before_activate=preload)
    assert seen == [("po-new", None)]  # loaded while the old state still served
    assert catalog.active_version(tiny, "PO").version == "po-new"


# --- recovery after an app restart, and cancelling --------------------------------------------


def _sleeper(job_dir: Path) -> int:
    """A stand-in worker: alive until killed (its command line names curation.jobs.worker, as the real one)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "curation.jobs.worker"],
                            start_new_session=True)
    retraining._CHILDREN[proc.pid] = proc
    deadline = time.time() + 10  # until it has exec'd: before that its command line is ours
    while not pid_alive(proc.pid, command_contains=b"curation.jobs.worker") and time.time() < deadline:
        time.sleep(0.05)
    return proc.pid


def test_recovery_reattaches_a_live_worker_and_fails_a_dead_one(tiny):
    job = retraining.start_retrain(tiny, retraining.RetrainRequest("PO"), load_settings(), launch=_sleeper)
    retraining._CHILDREN.pop(job.pid)  # as after an app restart: not our child any more
    try:
        assert [j.state for j in retraining.recover_jobs(tiny)] == ["running"]  # re-attached
        os.killpg(job.pid, signal.SIGKILL)
        os.waitpid(job.pid, 0)
        recovered = retraining.recover_jobs(tiny)
        assert [j.state for j in recovered] == ["failed"]
        assert "stopped without finishing" in recovered[0].message and "keeps serving" in recovered[0].message
    finally:
        try:
            os.killpg(job.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_recovery_finishes_a_job_whose_worker_ended_while_the_app_was_down(tiny):
    job = retraining.start_retrain(tiny, retraining.RetrainRequest("PO"), load_settings(), launch=_no_launch)
    worker.write_result(Path(job.job_dir), _result(_fake_version(load_settings().models_dir, "po-new"), 0.4))
    assert [(j.state, _activated(j)) for j in retraining.recover_jobs(tiny)] == [("succeeded", True)]


def test_recovery_fails_a_job_that_never_got_its_worker(tiny):
    job = create_job(tiny, "retrain", retraining.RetrainRequest("PO").to_dict())
    recovered = retraining.recover_jobs(tiny)
    assert [(j.job_id, j.state) for j in recovered] == [(job.job_id, "failed")]
    assert "before the worker started" in recovered[0].message


def test_cancel_stops_a_worker_that_ignores_the_request(tiny, monkeypatch):
    job = retraining.start_retrain(tiny, retraining.RetrainRequest("PO"), load_settings(), launch=_sleeper)
    job = retraining.cancel_job(tiny, job)
    assert job.state == "running" and "cancelling" in job.message and Path(job.job_dir, "cancel").exists()
    assert retraining.poll_job(tiny, job).state == "running"  # within the grace period
    monkeypatch.setattr(retraining, "CANCEL_GRACE_S", 0.0)
    retraining.poll_job(tiny, job)  # past it: terminated
    deadline = time.time() + 10
    while retraining.worker_alive(job.pid) and time.time() < deadline:
        time.sleep(0.1)
    job = retraining.poll_job(tiny, get_job(tiny, job.job_id))
    assert job.state == "cancelled"


# --- the real worker ---------------------------------------------------------------------------


def _run_real(con, **request) -> Job:
    job = retraining.start_retrain(con, retraining.RetrainRequest("PO", **{**SMALL, **request}), load_settings())
    return retraining.wait_for(con, job, interval_s=0.5, timeout_s=600)


@pytest.mark.slow
def test_real_worker_trains_on_kb_and_decisions_and_activates(tiny):
    job = _run_real(tiny)
    assert job.state == "succeeded", job.message
    assert _activated(job) is True
    result = job_result(job)
    report = result.training.report
    assert report["decision"] == {"decision-neg": PairCounts(positive=0, negative=1),
                                  "pos-1": PairCounts(positive=1, negative=0),
                                  "decision-partial": PairCounts(positive=1, negative=0)}
    assert report["kb"]["pos-1"].positive >= 1
    version = catalog.active_version(tiny, "PO")
    assert version.version == result.version
    assert version.manifest.training_report == report
    assert read_result(Path(job.job_dir, "result.json")).version == result.version  # the worker's file reads back
    assert Path(job.job_dir, "worker.log").read_text().count("decision-partial") == 1  # the class table


@pytest.mark.slow
def test_killing_the_worker_fails_the_job_keeps_the_active_version_and_a_retry_succeeds(tiny):
    first = _run_real(tiny)
    active = catalog.active_version(tiny, "PO").version
    assert first.state == "succeeded"
    job = retraining.start_retrain(
        tiny, retraining.RetrainRequest("PO", max_steps=2000, max_seq_length=64, batch_size=4, epochs=500,
                                        patience=0),  # no early stopping: the worker is still training when killed
        load_settings(),
    )
    deadline = time.time() + 300
    while time.time() < deadline:
        progress = retraining.read_progress(job)
        # Short epochs: between steps the worker is mostly evaluating the epoch on dev.
        if progress is not None and progress.stage in ("running", "evaluating epoch") and (progress.step or 0) >= 5:
            break
        time.sleep(0.2)
    else:
        pytest.fail("the worker never reached training")
    os.killpg(job.pid, signal.SIGKILL)  # kill -9, mid-training
    deadline = time.time() + 30
    while retraining.worker_alive(job.pid) and time.time() < deadline:
        time.sleep(0.1)
    job = retraining.poll_job(tiny, get_job(tiny, job.job_id))
    assert job.state == "failed" and "stopped without finishing" in job.message
    assert catalog.active_version(tiny, "PO").version == active
    retry = _run_real(tiny)
    assert retry.state == "succeeded", retry.message
    assert not list(load_settings().models_dir.glob("*.tmp"))


@pytest.mark.slow
def test_an_unreachable_base_model_fails_with_a_clear_message(tiny, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    job = _run_real(tiny, base_model="ncbi/MedCPT-Query-Encoder")
    assert job.state == "failed"
    assert "cannot load encoder 'ncbi/MedCPT-Query-Encoder'" in job.message and "keeps serving" in job.message
    assert catalog.active_version(tiny, "PO") is None
    models = load_settings().models_dir
    # nothing staged or published (the chain's cache of KB pairs may be kept: it is no version)
    assert not models.exists() or not [p for p in models.iterdir() if p.name != ".cache"]


def _prepared_job(con) -> Path:
    job = retraining.start_retrain(con, retraining.RetrainRequest("PO", **SMALL), load_settings(), launch=_no_launch)
    return Path(job.job_dir)


class Usage(NamedTuple):
    total: int
    used: int
    free: int


def test_a_full_disk_is_found_before_training(tiny, monkeypatch):
    job_dir = _prepared_job(tiny)
    full = Usage(total=2**40, used=2**40, free=10 * 2**20)
    monkeypatch.setattr(version_learner.shutil, "disk_usage", lambda path: full)
    result = worker.run(job_dir)
    assert result.state == "failed"
    assert "disk is full" in result.message and "only 10 MB free" in result.message
    job = retraining.poll_job(tiny, list_jobs(tiny)[0])
    assert job.state == "failed" and "disk is full" in job.message


@pytest.mark.slow
def test_a_disk_that_fills_while_writing_fails_cleanly(tiny, monkeypatch):
    job_dir = _prepared_job(tiny)

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", "models/x/dense/index.faiss")

    monkeypatch.setattr("index.dense.DenseIndex.save", full)
    result = worker.run(job_dir)
    assert result.state == "failed" and "disk is full" in result.message
    models = load_settings().models_dir
    # The staged folder is removed and nothing is published; only the build cache (kept on purpose) remains.
    assert [p.name for p in models.glob("*")] in ([], [".cache"])


@pytest.mark.parametrize("damage", ["missing", "corrupted"])
def test_a_missing_corpus_file_fails_the_job_naming_it(tiny, damage):
    job_dir = _prepared_job(tiny)
    documents = job_dir / "snapshot" / "documents.jsonl"
    if damage == "missing":
        documents.unlink()
    else:
        documents.write_text('{"pmid": "21", "title": \n')
    result = worker.run(job_dir)
    assert result.state == "failed"
    assert "documents.jsonl" in result.message and damage in result.message
    job = retraining.poll_job(tiny, list_jobs(tiny)[0])
    assert job.state == "failed" and "keeps serving" in job.message


def test_the_retrain_form_offers_every_index_kind_and_backend_the_settings_choice_first():
    from dataclasses import replace

    from curation.config import INDEX_BACKENDS, INDEX_KINDS, load_settings
    from curation.workflows import retrain

    kinds, backends = retrain.index_choices(replace(load_settings(), index_kind="hnsw", index_backend="milvus"))
    assert kinds[0] == "hnsw" and sorted(kinds) == sorted(INDEX_KINDS)
    assert backends[0] == "milvus" and sorted(backends) == sorted(INDEX_BACKENDS)
    assert set(retrain.INDEX_KIND_LABELS) == set(INDEX_KINDS)
    assert set(retrain.INDEX_BACKEND_LABELS) == set(INDEX_BACKENDS)


def test_a_finished_worker_is_reaped_without_anyone_polling_its_job(tmp_path):
    """A worker that exits is waited for at once (no zombie behind it), even when no page polls the job."""
    import time

    from curation.jobs.retraining import spawn_worker, worker_alive

    pid = spawn_worker(tmp_path)  # no request in the folder: the worker exits at once
    deadline = time.monotonic() + 20
    state = ""
    while time.monotonic() < deadline:
        try:
            state = (Path("/proc") / str(pid) / "stat").read_text().split(")")[-1].split()[0]
        except FileNotFoundError:  # reaped: the process is gone
            state = "gone"
            break
        time.sleep(0.2)
    assert state == "gone", f"worker {pid} left in state {state!r}"
    assert not worker_alive(pid)
