"""bench/results/matching.json -> the text-matching section of docs/BENCHMARKS.md."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bench.reports.readers import reader
from bench.reports.text import fmt


@dataclass(frozen=True)
class Spans:
    precision: float
    recall: float
    f1: float


@dataclass(frozen=True)
class KindScores:
    """One entity kind on one split: gold and predicted mentions, exact-span and overlap scores."""

    gold: int
    predicted: int
    exact: Spans
    overlap: Spans


@dataclass(frozen=True)
class System:
    """One matcher configuration (the full matcher or an ablation) on Dev and Test."""

    config: Mapping[str, bool]
    build_s: float
    dev: Mapping[str, KindScores]
    dev_ms_per_abstract: float
    test: Mapping[str, KindScores]
    test_ms_per_abstract: float

    def split(self, name: str) -> Mapping[str, KindScores]:
        return self.dev if name == "dev" else self.test


@dataclass(frozen=True)
class Matching:
    """bench/matching.py's result: span-level scores of the text matcher and its ablations."""

    date: str
    params: Mapping[str, object]
    counts: Mapping[str, object]
    systems: Mapping[str, System]
    timings_s: Mapping[str, float]
    notes: Mapping[str, str]


read = reader("matching", Matching)


def matching_section(data: Matching) -> list[str]:
    lines = [
        "## Text matching (`bench/matching.py`)",
        "",
        f"Run {data.date}. Span-level precision and recall of `Matcher.find_all` against BioRED's gold "
        "mentions; dictionaries from CIViC, DrugBank, BioRED Train and BC5CDR only (BC5CDR documents that "
        "are also in BioRED Dev/Test left out). Dev was used while developing the matcher; Test was held out.",
        "",
        "| split | type | gold | exact P | exact R | exact F1 | overlap P | overlap R |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    system = data.systems["matcher"]
    for split in ("dev", "test"):
        for kind in [k for k in ("variant", "chemical", "gene", "disease") if k in system.split(split)]:
            s = system.split(split)[kind]
            lines.append(
                f"| {split} | {kind} | {s.gold} | {fmt(s.exact.precision)} | "
                f"{fmt(s.exact.recall)} | {fmt(s.exact.f1)} | {fmt(s.overlap.precision)} | "
                f"{fmt(s.overlap.recall)} |"
            )
    lines += [
        "",
        "Ablations (dev, exact spans, recall / precision):",
        "",
        "| system | variant R / P | chemical R / P | gene R / P | disease R / P |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, s in data.systems.items():
        cells = [
            f"{fmt(s.dev[k].exact.recall)} / {fmt(s.dev[k].exact.precision)}" if k in s.dev else "–"
            for k in ("variant", "chemical", "gene", "disease")
        ]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    t = data.timings_s
    lines += [
        "",
        f"Speed: `find_all` {fmt(t.get('find_all_ms_per_abstract'), 2)} ms per new abstract, "
        f"{fmt(t.get('find_all_ms_per_abstract_cached_text'), 2)} ms when the text was seen before; "
        f"g(e, d) {fmt(t.get('g_ed_ms_per_pair'), 2)} ms per pair; "
        f"matcher build {fmt(t.get('matcher_build_s'), 1)} s.",
        "",
    ]
    for split in ("dev", "test"):
        v, c = system.split(split)["variant"].exact, system.split(split)["chemical"].exact
        met = {
            "variant": v.recall >= 0.85 and v.precision >= 0.8,
            "chemical": c.recall >= 0.75 and c.precision >= 0.8,
        }
        verdict = ", ".join(f"{k} {'met' if ok else 'missed'}" for k, ok in met.items())
        lines.append(f"Goals on {split} (variant R ≥ 0.85, chemical R ≥ 0.75, each at P ≥ 0.8): {verdict}.")
    lines += [
        "",
        'Variant misses on Test are mostly bare codons ("G118", "Ser473") that BioRED counts as '
        'variants and the matcher does not report in free text, because cell-line names ("A549") look the '
        "same. Gene recall is low without an HGNC dictionary (`ingest-dict hgnc`).",
        "",
    ]
    return lines
