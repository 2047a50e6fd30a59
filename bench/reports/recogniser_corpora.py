"""bench/results/recogniser_corpora.json -> recognisers by training corpora, on every dev split (docs/BENCHMARKS.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bench.reports.readers import Goals, reader
from bench.reports.text import fmt, goals_line

KINDS = ("GENE", "VARIANT", "CHEMICAL", "DISEASE")


@dataclass(frozen=True)
class RecogniserCorpora:
    """bench/recogniser_corpora.py's result."""

    date: str
    data_dir: str
    best_on_dev: str
    recognisers: Mapping[str, Mapping[str, object]]  # name -> folder, manifest, dev: part -> scores
    goals: Goals
    notes: Mapping[str, str]


read = reader("recogniser_corpora", RecogniserCorpora)


def recogniser_corpora_section(data: RecogniserCorpora) -> list[str]:
    parts = list(next(iter(data.recognisers.values()))["dev"])
    lines = [
        "## Recognisers by training corpora (`python -m bench.recogniser_corpora`)",
        "",
        f"Run {data.date[:10]}: the spaCy CNN trained on BioRED + BC5CDR Train (`standard`) against the same config "
        "trained on those and GNormPlus, NLM-Gene, tmVar3 and NCBI disease, each partially annotated (`all-corpora`, "
        "`train-recogniser --corpora all`). The recogniser alone on the dev documents' plain text; each NCBI "
        "corpus's dev fifth scored on the kinds it annotates. Exact-span F1:",
        "",
        "| recogniser | training s | " + " | ".join(parts) + " | BioRED Dev " + " | ".join(KINDS) + " | abstracts/s |",
        "| --- | ---: | " + " | ".join("---:" for _ in parts) + " | " + " | ".join("---:" for _ in KINDS) + " | ---: |",
    ]
    for name, run in data.recognisers.items():
        dev = run["dev"]
        biored = dev["biored_dev"]
        lines.append(f"| {name} | {fmt(run['manifest'].get('train_seconds'), 0)} | "
                     + " | ".join(fmt(dev[p]["ents_f"]) for p in parts) + " | "
                     + " | ".join(fmt(biored.get(f"{k}.f")) for k in KINDS)
                     + f" | {fmt(biored.get('abstracts_per_s'), 1)} |")
    lines += ["", f"Chosen on BioRED Dev: `{data.best_on_dev}` (the shipped recogniser). "
              f"{data.notes.get('scope', '')}.", ""]
    return lines + goals_line(data.goals)
