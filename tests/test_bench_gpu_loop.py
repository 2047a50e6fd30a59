"""bench/gpu_loop.py: its goals, its dtype probe, its synthetic data and its error record, without training."""

from __future__ import annotations

from pathlib import Path

import torch

from bench import gpu_loop


def _record(device: str, start: float, end: float) -> dict[str, object]:
    return {"ran": True, "device": device, "loss_start": start, "loss_end": end}


def test_a_case_meets_its_goals_only_on_cuda_with_a_falling_loss():
    goals = gpu_loop.goals_of({
        "a": _record("cuda:0", 0.7, 0.2),
        "b": _record("cpu", 0.7, 0.2),
        "c": _record("cuda", 0.5, 0.6),
        "d": {"ran": False, "device": "cuda", "error": "ImportError: x"},
    })
    assert {k: g["met"] for k, g in goals.items()} == {
        "a_ran_on_cuda": True, "a_loss_decreased": True,
        "b_ran_on_cuda": False, "b_loss_decreased": True,
        "c_ran_on_cuda": True, "c_loss_decreased": False,
        "d_ran_on_cuda": False, "d_loss_decreased": False,
    }
    assert set(goals["a_loss_decreased"]) == {"value", "target", "op", "met"}
    assert goals["a_loss_decreased"]["value"] == 0.5


def test_the_probe_reads_the_dtype_of_training_forwards_only():
    model = torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.ReLU())
    with gpu_loop.amp_probe(model) as seen:
        model.eval()
        model(torch.zeros(1, 4))
        assert seen == set()
        model.train()
        model(torch.zeros(1, 4, dtype=torch.float32))
    model(torch.zeros(1, 4))  # after the block the hook is gone
    assert seen == {"float32"}


def test_each_query_has_one_document_naming_both_entities():
    triples, docs = gpu_loop.relation_data()
    assert {p for _, p, _ in triples} == set(docs)
    for query in {q for q, _, _ in triples}:
        relevant = [p for q, p, rel in triples if q == query and rel]
        assert len(relevant) == 1
        gene, drug = query.split(" and ")
        assert {gene, drug} <= set(docs[relevant[0]].split())


def test_a_failing_case_is_recorded_with_its_error_not_raised():
    def broken(model_dir: Path, device: str, steps: int) -> dict[str, object]:
        raise ModuleNotFoundError("No module named 'pytorch_metric_learning'")

    record = gpu_loop.run_case(broken, Path("unused"), "cpu", 3)
    assert record["ran"] is False
    assert record["error"] == "ModuleNotFoundError: No module named 'pytorch_metric_learning'"
    assert gpu_loop.goals_of({"x": record})["x_ran_on_cuda"]["met"] is False
