"""bench/results/feedback.json's ``learning_curve`` (``bench/ranker_curve.py``) -> the ranker's learning curve and
click → serving on the sample store, in the feedback section of docs/BENCHMARKS.md."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bench.reports.text import fmt
from curation.versions.typed_json import OPTIONAL


@dataclass(frozen=True)
class CurvePoint:
    """Served NDCG@10 after ``decisions`` simulated decisions (the gate decides what serves)."""

    decisions: int
    ranker_ndcg10: float | None
    gate_low: float | None
    serves: str
    served_ndcg10: float
    ci95: tuple[float, float]


@dataclass(frozen=True)
class Click:
    """Update the ranker on the sample store: from the call until the ranker serves (or the gate keeps it out)."""

    store: str
    load_sample_s: float
    queries_graded: int
    decisions: int
    click_to_serving_s: float
    activated: bool
    verdict: str
    page_search_ms_p95: float
    page_searches: int
    page_search_ms_p95_without_stage: float | None = field(default=None, metadata=OPTIONAL)
    kb_records_citing_a_stored_abstract: int | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class CurveParams:
    seed: int
    cpu_count: int
    load_average_at_start: float
    load_average_at_end: float


@dataclass(frozen=True)
class LearningCurve:
    date: str
    train_queries_per_kind: int
    graded_per_query: int
    decisions_available: int
    dev_points: tuple[CurvePoint, ...]
    dev_monotone: int
    params: CurveParams
    timings_s: Mapping[str, float]
    test_points: tuple[CurvePoint, ...] | None = field(default=None, metadata=OPTIONAL)
    test_monotone: int | None = field(default=None, metadata=OPTIONAL)
    click: Click | None = field(default=None, metadata=OPTIONAL)
    click_error: str = field(default="", metadata=OPTIONAL)


def _bar(value: float, low: float = 0.85, high: float = 0.95, width: int = 30) -> str:
    """A text bar of ``value`` between ``low`` and ``high`` (the curve drawn in Markdown)."""
    filled = round(width * min(max((value - low) / (high - low), 0.0), 1.0))
    return "█" * filled + "·" * (width - filled)


def curve_lines(c: LearningCurve | None) -> list[str]:
    """The learning curve as a table with a text bar per point, then click → serving."""
    if c is None:
        return []
    lines = [
        "### The ranker learning from decisions (`bench/ranker_curve.py`)",
        "",
        f"Run {c.date} on {c.params.cpu_count} CPU cores (load average {fmt(c.params.load_average_at_start, 1)} at the "
        f"start, {fmt(c.params.load_average_at_end, 1)} at the end). A simulated curator grades the served top "
        f"{c.graded_per_query} of train queries ({c.train_queries_per_kind} per kind, seeded order) from gold; after N "
        "decisions a ranker trained on them alone serves only when the gate's dev interval is above 0. Served "
        "NDCG@10 with its 95% bootstrap interval:",
        "",
        "| decisions | split | serves | ranker NDCG@10 | gate: interval low | served NDCG@10 | 95% interval | |",
        "| ---: | --- | --- | ---: | ---: | ---: | --- | --- |",
    ]
    for split, points in (("dev", c.dev_points), ("test", c.test_points or ())):
        for p in points:
            lines.append(f"| {p.decisions} | {split} | {p.serves} | {fmt(p.ranker_ndcg10, 4)} | {fmt(p.gate_low, 4)} "
                         f"| {fmt(p.served_ndcg10, 4)} | [{fmt(p.ci95[0], 4)}, {fmt(p.ci95[1], 4)}] | "
                         f"`{_bar(p.served_ndcg10)}` |")
    lines += ["", f"Monotone on dev (no later point below an earlier one's interval): {c.dev_monotone}"
              + (f"; on test: {c.test_monotone}." if c.test_monotone is not None else "."), ""]
    if c.click is not None:
        k = c.click
        lines += [f"Click → serving on {k.store} (loaded in {fmt(k.load_sample_s, 0)} s): {k.decisions} decisions "
                  f"on {k.queries_graded} KB relations, then \"Update the ranker\": {fmt(k.click_to_serving_s, 1)} s, "
                  f"{'activated' if k.activated else 'not activated'} ({k.verdict}). The Curate page's search with "
                  f"the learned stage: p95 {fmt(k.page_search_ms_p95, 1)} ms over {k.page_searches} searches (without "
                  f"it: {fmt(k.page_search_ms_p95_without_stage, 1)} ms; the abstracts are not annotated, so each "
                  "search annotates its results in memory). KB records citing an abstract the store holds: "
                  f"{k.kb_records_citing_a_stored_abstract}.", ""]
    elif c.click_error:
        lines += [f"Click → serving could not be measured: {c.click_error}.", ""]
    return lines
