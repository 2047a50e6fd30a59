"""bench/results/recogniser_device.json -> the transformer recogniser against the CNN (docs/BENCHMARKS.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bench.reports.readers import Goals, reader
from bench.reports.text import fmt, goals_line

KINDS = ("gene", "variant", "chemical", "disease")


@dataclass(frozen=True)
class DeviceRun:
    """One configuration of the transformer recogniser, trained on the device, its best BioRED Dev epoch kept."""

    settings: Mapping[str, object]
    seconds: float
    best_epoch: int
    dev_f1: Mapping[str, float]
    dev_ents_f: float
    epoch_ents_f: tuple[float, ...]


@dataclass(frozen=True)
class RecogniserDevice:
    """bench/recogniser_device.py's result."""

    date: str
    device: str
    params: Mapping[str, object]
    runs: Mapping[str, DeviceRun]
    chosen_on_dev: str
    cnn: Mapping[str, object]
    per_kind_better: Mapping[str, str]
    goals: Goals


read = reader("recogniser_device", RecogniserDevice)


def recogniser_device_section(data: RecogniserDevice) -> list[str]:
    cnn = data.cnn
    lines = [
        "## The transformer recogniser on a GPU (`python -m bench.recogniser_device`)",
        "",
        f"Run {data.date[:10]} on an {data.device} (torch {data.params.get('torch')}): the offline MiniLM fine-tuned "
        "as a word-piece BIO tagger on BioRED Train + BC5CDR Train (at most "
        f"{data.params.get('epochs')} epochs, the best BioRED Dev epoch kept), against the spaCy CNN "
        f"(`{cnn.get('name')}`, trained in {fmt(cnn.get('train_seconds'), 0)} s on {cnn.get('device')}). Exact-span "
        "F1 on BioRED Dev, recognised spans alone (no notation rules, no dictionaries):",
        "",
        "| recogniser | seconds | best epoch | " + " | ".join(KINDS) + " | all |",
        "| --- | ---: | ---: | " + " | ".join("---:" for _ in KINDS) + " | ---: |",
        f"| spaCy CNN | {fmt(cnn.get('train_seconds'), 0)} | – | "
        + " | ".join(fmt(cnn["dev_f1"][k]) for k in KINDS) + f" | {fmt(cnn.get('dev_ents_f'))} |",
    ]
    for config, run in data.runs.items():
        chosen = " (chosen on dev)" if config == data.chosen_on_dev else ""
        lines.append(f"| MiniLM {config}{chosen} | {fmt(run.seconds, 1)} | {run.best_epoch} | "
                     + " | ".join(fmt(run.dev_f1[k]) for k in KINDS) + f" | {fmt(run.dev_ents_f)} |")
    better = ", ".join(f"{k} {v}" for k, v in data.per_kind_better.items())
    lines += ["", f"Better per kind on dev: {better}. The per-kind policy of `bench/entities.py` therefore keeps the "
                  "CNN wherever the transformer does not win.", ""]
    return lines + goals_line(data.goals)
