"""bench/results/edel.json -> the EDEL section of docs/BENCHMARKS.md."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bench.reports.readers import Forms, Goals, read_result, with_forms_gathered
from bench.reports.text import fmt, forms_tables, goals_line, headline_table, mean_of
from bench.reports.v2 import Counts, Leaks
from curation.versions.typed_json import OPTIONAL

EDEL_ORDER = [
    "bm25",
    "zero_shot",
    "edel_no_hard_neg",
    "edel_no_noisy_pos",
    "edel_no_multimargin",
    "edel",
    "edel_bm25_hybrid",
]
EDEL_LABELS = {
    "bm25": "BM25",
    "zero_shot": "zero-shot MiniLM",
    "edel": "EDEL",
    "edel_no_multimargin": "EDEL (−MultiMargin)",
    "edel_no_noisy_pos": "EDEL (−MultiMargin, −NoisyPos)",
    "edel_no_hard_neg": "EDEL (−MultiMargin, −NoisyPos, −HardNeg)",
    "edel_bm25_hybrid": "EDEL + BM25 (hybrid)",
}




@dataclass(frozen=True)
class TrainSettings:
    epochs: int
    batch_size: int
    learning_rate: object  # printed as written
    warmup_ratio: float
    max_seq_length: int
    weight_decay: float
    seed: int
    device: str
    mixed_precision: bool
    max_steps: int


@dataclass(frozen=True)
class Trained:
    """One model's training run (figures printed as written)."""

    steps: int
    device: str
    seconds: object
    pairs_per_s: object


@dataclass(frozen=True)
class PosNeg:
    positive: int
    negative: int


@dataclass(frozen=True)
class TrainingSet:
    """One model's training pairs per margin class (the paper's Table 2)."""

    classes: Mapping[str, PosNeg]
    margins: Mapping[str, float]
    pairs: int
    sources: Mapping[str, object]


@dataclass(frozen=True)
class Params:
    train: TrainSettings
    sampling: Mapping[str, object]
    text_match: str
    training_records: str
    training_documents: str
    base_model: str
    fusion_chosen_on_dev: str
    fusion_dev_table: Mapping[str, object]
    training_sets: Mapping[str, TrainingSet]
    trained: Mapping[str, Trained]
    torch_threads: int
    python: str
    torch: str
    statistics: str
    device: str = field(default="cpu", metadata=OPTIONAL)
    notes: tuple[str, ...] = field(default=(), metadata=OPTIONAL)


@dataclass(frozen=True)
class Edel:
    """bench/edel.py's result: EDEL and its ablations against BM25 and zero-shot MiniLM on benchmark v2."""

    date: str
    benchmark: str
    goals: Goals
    leaks: Leaks
    params: Params
    counts: Counts
    forms: Forms
    loss_curves: Mapping[str, tuple[float, ...]]
    timings_s: Mapping[str, float]


def read(results: Path, name: str = "edel") -> Edel | None:
    """bench/results/edel.json (or ``name``.json, the same script with another g), None when it was not run."""
    return read_result(results, name, Edel, with_forms_gathered)


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}×" if isinstance(a, float) and isinstance(b, float) and b > 0 else "–"


def edel_section(data: Edel) -> list[str]:
    params = data.params
    train = params.train
    lines = [
        "## EDEL training on benchmark v2 (`bench/edel.py`)",
        "",
        f"Run {data.date} on {params.device} ({params.torch_threads} torch threads). "
        f"Base model {params.base_model}; {params.training_records}; training documents: "
        f"{params.training_documents}. {train.epochs} epoch(s), batch {train.batch_size}, learning rate "
        f"{train.learning_rate}, max sequence length {train.max_seq_length}; text matching g: "
        f"{params.text_match}. Test split; systems in the layout of the paper's Tables 3 and 4.",
        "",
    ]
    lines += goals_line(data.goals)
    systems = [s for s in EDEL_ORDER if s in data.forms["canonical"]["all"].metrics["ndcg@10"].systems]
    lines += headline_table(data.forms, systems, EDEL_LABELS)
    lines += forms_tables(data.forms, systems, EDEL_LABELS, form_names=("canonical", "reworded"))
    edel, zero = mean_of(data.forms, "canonical", "edel"), mean_of(data.forms, "canonical", "zero_shot")
    lines += [f"EDEL / zero-shot, canonical, every kind: NDCG@10 {_ratio(edel, zero)} (the paper's goal: ≥ 2×).", ""]
    lines += [
        "Training time and data per model:",
        "",
        "| model | pairs | steps | train s | pairs/s | device |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for name, info in params.trained.items():
        training_set = params.training_sets.get(name)
        pairs = training_set.pairs if training_set else None
        lines.append(
            f"| {EDEL_LABELS.get(name, name)} | {pairs} | {info.steps} | {info.seconds} | "
            f"{info.pairs_per_s} | {info.device} |"
        )
    classes = params.training_sets.get("edel")
    if classes:
        lines += [
            "",
            "EDEL training pairs per margin class (the paper's Table 2), classes from the matcher on the abstracts:",
            "",
            "| class | margin | positives | negatives |",
            "| --- | ---: | ---: | ---: |",
        ]
        for name, counts in sorted(
            classes.classes.items(), key=lambda kv: (classes.margins.get(kv[0], 9), kv[0])
        ):
            lines.append(f"| {name} | {fmt(classes.margins.get(name), 1)} | {counts.positive} | {counts.negative} |")
    lines += ["", f"Hybrid fusion chosen on dev: `{params.fusion_chosen_on_dev}`.", ""]
    for note in params.notes:
        lines += [note, ""]
    return lines

