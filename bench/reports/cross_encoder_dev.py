"""bench/results/cross_encoder_dev.json -> the cross-encoder section of docs/BENCHMARKS.md."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bench.reports.readers import Comparison, Interval, at_cutoffs, read_result
from bench.reports.text import fmt


@dataclass(frozen=True)
class Ndcg:
    """NDCG@10 of BM25 alone and re-ranked by the cross-encoder."""

    bm25: Interval
    bm25_ce: Interval
    relative_gain: float
    comparison: Mapping[str, Comparison]


@dataclass(frozen=True)
class Recall:
    bm25: Interval
    bm25_ce: Interval


@dataclass(frozen=True)
class CpuRule:
    """Whether the cross-encoder may be served on a CPU, from its measured latency."""

    serve: bool
    p95_ms: float
    budget_ms: float
    k: int
    queries: int
    threads: int
    describe: str


@dataclass(frozen=True)
class TrainConfig:
    base_model: str
    epochs: int
    batch_size: int
    learning_rate: object  # printed as written
    warmup_ratio: float
    weight_decay: float
    max_length: int
    max_pairs: int
    random_negatives: int
    seed: int
    device: str
    mixed_precision: bool
    max_steps: int


@dataclass(frozen=True)
class Training:
    records: str
    edel_pairs: int
    edel_classes: object
    examples: int
    labels: object
    config: TrainConfig
    steps: int
    device: str
    seconds: float
    loss_first_10: tuple[float, ...]
    loss_last_10: tuple[float, ...]


@dataclass(frozen=True)
class CrossEncoderDev:
    """bench/_cross_encoder.py's result: BM25 with and without the cross-encoder on dev queries."""

    split: str
    form: str
    queries: int
    k: int
    ndcg_at_10: Ndcg
    recall_at_50: Recall
    cpu_rule: CpuRule
    training: Training
    timings_s: Mapping[str, float]
    torch_threads: int


def read(results: Path) -> CrossEncoderDev | None:
    """bench/results/cross_encoder_dev.json, None when it was not run."""
    return read_result(results, "cross_encoder_dev", CrossEncoderDev, at_cutoffs)


def cross_encoder_section(data: CrossEncoderDev) -> list[str]:
    n, rule, tr, cfg = data.ndcg_at_10, data.cpu_rule, data.training, data.training.config
    return [
        "## Cross-encoder re-ranking, dev only (`bench/_cross_encoder.py`)",
        "",
        f"A cross-encoder trained from the offline MiniLM weights on this CPU ({tr.examples} graded examples from "
        f"{tr.records}, {cfg.epochs} epoch(s), {tr.steps} steps, sequences of {cfg.max_length} tokens, lr "
        f"{cfg.learning_rate}), re-ranking BM25's top {data.k} of {data.queries} {data.split} queries "
        f"({data.form} form): NDCG@10 {fmt(n.bm25.mean, 3)} → {fmt(n.bm25_ce.mean, 3)} "
        f"(relative {fmt(n.relative_gain, 3)}); {rule.describe}. It has not learned to rank in the steps a CPU "
        "job allows (its scores sit near the base rate of positives), so builds on a CPU do not train it by default "
        "and the build's dev check would switch it off. A GPU run, or a base model that is already a cross-encoder "
        "(MedCPT, when reachable), is what it needs.",
        "",
    ]
