"""A retraining job's result: one typed form, read and written in one module, old files still read."""

from __future__ import annotations

import json

import pytest

from curation.jobs.result import (
    Baseline,
    DecisionSummary,
    JobResult,
    JobResultError,
    TrainingSummary,
    WorkerSettings,
    job_result,
    read_result,
    result_json,
    write_result,
)
from curation.store.jobs import create_job, finish_job, get_job
from curation.versions.manifest import DevMetrics, PairCounts

# What the worker wrote before results had a format (73ba5b5): a built version without a baseline...
SUCCEEDED = {
    "state": "succeeded", "message": "built po-edel-1", "version": "po-edel-1", "path": "/models/po-edel-1",
    "metrics": {"dense": {"ndcg@10": 0.4}, "hybrid": {"ndcg@10": 0.5}},
    "baseline": {},
    "training": {
        "pairs": 3,
        "report": {"kb": {"pos-1": {"positive": 2, "negative": 0}}, "decision": {"decision-neg":
                                                                                {"positive": 0, "negative": 1}}},
        "decisions": {"pairs": 1, "active_decisions": 1, "ignored_superseded": 0, "ignored_other_schema": 0,
                      "ignored_missing_document": 0, "conflicts_excluded": 0, "conflicts_resolved_by_latest": 0,
                      "adjudicated_items": 0, "by_grade": {"not_relevant": 1}},
        "decision_pairs_on_dev_queries": 0, "dev_queries": 2,
    },
    "device": "cpu",
    "settings": {"batch_size": 16, "max_seq_length": 128, "epochs": 1, "learning_rate": 2e-05},
    "timings_s": {"prepare": 0.5, "build": 10.0, "total": 11.0},
}
# ...one that failed, and what the app kept in the store once it had judged a version.
FAILED = {"state": "failed", "message": "the disk is full"}
RECORDED = {**SUCCEEDED, "baseline": {"version": "po-old", "metrics": {"dense": {"ndcg@10": 0.3},
                                                                      "hybrid": {"ndcg@10": 0.45}}},
            "activated": True, "verdict": "activated: dev ndcg@10 (hybrid) 0.500 vs 0.450"}


def _full() -> JobResult:
    return JobResult(
        state="succeeded", message="built po-1", version="po-1", path="/models/po-1",
        metrics=DevMetrics(dense={"ndcg@10": 0.4}, hybrid={"ndcg@10": 0.5}),
        baseline=Baseline("po-0", DevMetrics(dense={"ndcg@10": 0.3}, hybrid={"ndcg@10": 0.45})),
        training=TrainingSummary(3, {"kb": {"pos-1": PairCounts(2, 0)}}, DecisionSummary(by_grade={"complete": 1}),
                                 0, 2),
        device="cuda", settings=WorkerSettings(32, 256, 1, 2e-5), timings_s={"total": 12.0},
    )


@pytest.mark.parametrize("result", [_full(), JobResult("cancelled", "cancelled at step 3")], ids=["built", "cancelled"])
def test_a_result_reads_back_as_written(tmp_path, result):
    write_result(tmp_path / "result.json", result)
    assert read_result(tmp_path / "result.json") == result
    assert json.loads((tmp_path / "result.json").read_text())["format"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]


def test_no_file_yet_is_no_result(tmp_path):
    assert read_result(tmp_path / "result.json") is None


@pytest.mark.parametrize("legacy", [SUCCEEDED, FAILED, RECORDED], ids=["succeeded", "failed", "recorded"])
def test_results_written_by_older_code_read_as_format_1(tmp_path, legacy):
    (tmp_path / "result.json").write_text(json.dumps(legacy))
    result = read_result(tmp_path / "result.json")
    assert result.format == 1 and result.state == legacy["state"] and result.message == legacy["message"]
    if legacy is SUCCEEDED:
        assert result.baseline is None  # written as {} when none was evaluated
        assert result.training.report["decision"]["decision-neg"] == PairCounts(0, 1)
        assert result.training.decisions.by_grade == {"not_relevant": 1}
        assert result.metrics.of("hybrid") == {"ndcg@10": 0.5} and result.activated is None
    if legacy is FAILED:
        assert result.version == "" and result.training is None and result.baseline is None
    if legacy is RECORDED:
        assert result.baseline.version == "po-old" and result.baseline.metrics.hybrid == {"ndcg@10": 0.45}
        assert result.activated is True and result.verdict.startswith("activated")


@pytest.mark.parametrize(
    "data, message",
    [
        ({**FAILED, "state": "exploded"}, "field 'state' must be one of 'succeeded', 'failed', 'cancelled'"),
        ({**FAILED, "surprise": 1}, "unknown field 'surprise'"),
        ({"message": "x"}, "field 'state' is missing"),
        ({"state": "failed"}, "field 'message' is missing"),
        ({k: v for k, v in SUCCEEDED.items() if k != "path"}, "field 'path' is missing"),
        ({**SUCCEEDED, "metrics": {"dense": {}}}, "field 'metrics.hybrid' is missing"),
        ({**SUCCEEDED, "training": {**SUCCEEDED["training"], "pairs": "3"}}, "field 'training.pairs' must be"),
        ({**SUCCEEDED, "settings": {**SUCCEEDED["settings"], "epochs": 1.5}}, "field 'settings.epochs' must be"),
        ({**FAILED, "format": 7}, "result format 7 was written by a newer version"),
        ([FAILED], "must be a JSON object, got a list"),
    ],
)
def test_a_result_that_does_not_fit_is_an_error_naming_file_and_field(tmp_path, data, message):
    path = tmp_path / "result.json"
    path.write_text(json.dumps(data))
    with pytest.raises(JobResultError, match=message) as caught:
        read_result(path)
    assert str(caught.value).startswith(f"{path}: ")


def test_a_corrupted_result_file_is_an_error_naming_it(tmp_path):
    (tmp_path / "result.json").write_text('{"state": "succ')
    with pytest.raises(JobResultError, match=f"{tmp_path / 'result.json'} is corrupted"):
        read_result(tmp_path / "result.json")


def test_the_store_keeps_the_result_and_it_reads_back(con):
    job = create_job(con, "retrain", {"schema": "PO"})
    assert job_result(job) is None  # running: no result yet
    finish_job(con, job.job_id, "succeeded", "done", result_json(_full()))
    assert job_result(get_job(con, job.job_id)) == _full()


def test_a_job_finished_without_a_result_has_none(con):
    job = create_job(con, "retrain", {"schema": "PO"})
    finish_job(con, job.job_id, "failed", "could not start the worker")
    assert job_result(get_job(con, job.job_id)) is None


def test_a_damaged_record_names_the_job(con):
    job = create_job(con, "retrain", {"schema": "PO"})
    finish_job(con, job.job_id, "failed", "x", {"state": "failed", "message": "x", "odd": 1})
    with pytest.raises(JobResultError, match=f"the result recorded for job {job.job_id}: unknown field 'odd'"):
        job_result(get_job(con, job.job_id))
