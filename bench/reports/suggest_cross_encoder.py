"""bench/results/suggest_cross_encoder.json -> its section of docs/BENCHMARKS.md."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bench.reports.readers import read_result
from bench.reports.suggest import PairScores
from bench.reports.text import fmt


@dataclass(frozen=True)
class Params:
    cpu_count: int
    python: str
    base_model: str
    steps: int
    batch_size: int
    train_pairs: int
    train_positives: int
    threshold_pairs: int
    threshold: object  # printed as written
    device: str
    train_s: object
    seed: int
    splits_read: str


@dataclass(frozen=True)
class DevSplit:
    pairs: int
    scorer_logreg: PairScores
    scorer_cross_encoder: PairScores
    cross_encoder_ms_per_pair_cpu: object  # printed as written


@dataclass(frozen=True)
class SuggestCrossEncoder:
    """bench/suggest_cross_encoder.py's result: the sentence-pair cross-encoder against the feature scorer."""

    date: str
    params: Params
    dev: Mapping[str, DevSplit]


def read(results: Path) -> SuggestCrossEncoder | None:
    """bench/results/suggest_cross_encoder.json, None when it was not run."""
    return read_result(results, "suggest_cross_encoder", SuggestCrossEncoder)


def suggest_cross_encoder_section(data: SuggestCrossEncoder) -> list[str]:
    """bench/suggest_cross_encoder.py: the sentence-pair cross-encoder against the feature scorer (Dev)."""
    p = data.params
    lines = [
        "## The relation scorer's second candidate: a sentence-pair cross-encoder (`bench/suggest_cross_encoder.py`)",
        "",
        f"Run {data.date[:10]} on {p.device}: {p.base_model} as a cross-encoder over (the two names, the "
        f"sentence relating them best with both concepts marked), {p.steps} steps of {p.batch_size} on "
        f"{p.train_pairs:,} sampled training pairs ({p.train_positives:,} related; {p.train_s} s), threshold "
        f"{p.threshold} chosen on {p.threshold_pairs:,} pairs of held-out training documents. Dev pair "
        "precision / recall / F1, gold mentions, next to the feature scorer the product keeps.",
        "",
        "| Dev split | system | precision | recall | F1 | ms per pair (CPU) |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for corpus, d in data.dev.items():
        for sc, label, ms in ((d.scorer_logreg, "features + logistic regression (kept)", ""),
                              (d.scorer_cross_encoder, "sentence-pair cross-encoder", d.cross_encoder_ms_per_pair_cpu)):
            lines.append(f"| {corpus} | {label} | {fmt(sc.precision)} | {fmt(sc.recall)} | {fmt(sc.f1)} | {ms} |")
    return lines + [""]
