"""bench/results/gpu_loop.json -> the GPU section of docs/BENCHMARKS.md (the one training loop on CUDA)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bench.reports.readers import Goals, reader
from bench.reports.text import goals_line
from curation.versions.typed_json import OPTIONAL


@dataclass(frozen=True)
class Case:
    """One caller trained on the device: whether it ran, under which autocast dtype, how its loss moved."""

    ran: bool
    device: str
    mixed_precision_dtype: tuple[str, ...]
    seconds: float
    train_seconds: float | None
    steps: int
    loss_start: float | None
    loss_end: float | None
    losses: tuple[float, ...]
    error: str | None
    peak_gpu_mib: float | None
    steps_per_s: float | None = field(default=None, metadata=OPTIONAL)
    published: object = field(default=None, metadata=OPTIONAL)
    mined_pairs: object = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class GpuLoop:
    """bench/gpu_loop.py's result: each caller of the training loop run on the device at small size."""

    benchmark: str
    date: str
    params: Mapping[str, object]
    results: Mapping[str, Case]
    goals: Goals


read = reader("gpu_loop", GpuLoop)


def gpu_loop_section(data: GpuLoop) -> list[str]:
    """bench/gpu_loop.py: the one training loop and its callers on a GPU (a check that the paths run, not quality)."""
    p = data.params
    lines = [
        "## The training loop on a GPU (`python -m bench.gpu_loop`)",
        "",
        f"Run {data.date[:10]} on an {p.get('device')} (torch {p.get('torch')}, transformers {p.get('transformers')}, "
        f"sentence-transformers {p.get('sentence_transformers')}), {p.get('steps_per_case')} steps per case from "
        f"a {p.get('model')}, on a few dozen synthetic examples: a check that each caller of "
        "`curation.training_loop.fit` trains on CUDA under autocast, not a measure of quality. The dtype is what "
        "the model's first linear layer computed in during training; loss is the mean of the first and last "
        "three steps.",
        "",
        "| case | ran | device | autocast dtype | train s | loss start → end | error |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, c in data.results.items():
        seconds = f"{c.train_seconds:.2f}" if c.train_seconds is not None else "–"
        loss = f"{c.loss_start} → {c.loss_end}" if c.loss_start is not None else "–"
        lines.append(f"| {name} | {'yes' if c.ran else 'no'} | {c.device} | {', '.join(c.mixed_precision_dtype)} "
                     f"| {seconds} | {loss} | {c.error or ''} |")
    return lines + [""] + goals_line(data.goals)
