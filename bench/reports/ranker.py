"""bench/results/feedback.json's ``ranker_dev`` (``bench/ranker.py``) -> the learned stage's part of the feedback
section of docs/BENCHMARKS.md."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bench.reports.text import fmt
from curation.versions.typed_json import OPTIONAL

LABELS = {
    "product": "+ ranker, the product's features",
    "product_with_length": "+ ranker, with document length (source-identifying)",
    "product_with_kb": "+ ranker, with KB citations of other queries (a split artifact here)",
}


@dataclass(frozen=True)
class RankerSystem:
    features: tuple[str, ...]
    depth_chosen_on_dev: int
    dev_ndcg10_by_depth: Mapping[str, float]
    dev_ndcg10: float
    gain_ndcg10: float
    gain_ci95: tuple[float, float]
    train_seconds: float
    train_queries: int
    train_pairs: int
    gain_per_feature: Mapping[str, float]


@dataclass(frozen=True)
class ServedCheck:
    queries_checked: int
    differ: int
    search_ms_p95: float
    learned_search_ms_p95: float


@dataclass(frozen=True)
class Reworded:
    """The product ranker (trained on canonical names) on the dev queries' reworded form."""

    queries: int
    concept_search_dev_ndcg10: float
    ranker_dev_ndcg10: float
    gain_ndcg10: float
    gain_ci95: tuple[float, float]
    depth: int


@dataclass(frozen=True)
class RankerParams:
    seed: int
    cpu_count: int
    python: str
    load_average_at_start: float


@dataclass(frozen=True)
class RankerDev:
    """The learned ranking stage on dev: concept search alone vs + the ranker, per feature set."""

    date: str
    split: str
    metric: str
    first_stage: str
    labels: str
    dev_queries: int
    dev_lists: int
    train_queries_per_kind: int
    train_lists: int
    concept_search_dev_ndcg10: float
    systems: Mapping[str, RankerSystem]
    served_path_identical: ServedCheck
    train_seconds_10k_pairs: float
    train_pairs_measured: int
    params: RankerParams
    timings_s: Mapping[str, float]
    reworded: Reworded | None = field(default=None, metadata=OPTIONAL)


def ranker_lines(r: RankerDev | None) -> list[str]:
    """The learned stage's dev figures (the test split is read once, later, by the release run)."""
    if r is None:
        return []
    lines = [
        "### The learned ranking stage on dev (`bench/ranker.py`)",
        "",
        f"Run {r.date} on {r.params.cpu_count} CPU cores (load average {fmt(r.params.load_average_at_start, 1)} at "
        f"the start). First stage: {r.first_stage}. Labels: {r.labels}; {r.train_lists} train lists. Scored on "
        f"{r.split}: {r.dev_queries} queries ({r.dev_lists} with a candidate), {r.metric}, the gain's 95% paired "
        "bootstrap interval over queries. N (how many hits the ranker re-orders) chosen on dev.",
        "",
        "| system | dev NDCG@10 | gain | 95% interval | N | train (s) | carried by |",
        "| --- | ---: | ---: | --- | ---: | ---: | --- |",
        f"| concept search alone | {fmt(r.concept_search_dev_ndcg10, 4)} | | | | | |",
    ]
    for name, s in r.systems.items():
        top = ", ".join(f"{f} {fmt(v, 2)}" for f, v in list(s.gain_per_feature.items())[:3])
        lines.append(f"| {LABELS.get(name, name)} | {fmt(s.dev_ndcg10, 4)} | {fmt(s.gain_ndcg10, 4)} | "
                     f"[{fmt(s.gain_ci95[0], 4)}, {fmt(s.gain_ci95[1], 4)}] | {s.depth_chosen_on_dev} | "
                     f"{fmt(s.train_seconds, 2)} | {top} |")
    check = r.served_path_identical
    w = r.reworded
    if w is not None:
        lines += ["", f"Reworded dev queries ({w.queries}, other names of the same concepts), the product ranker at "
                  f"N={w.depth}: concept search {fmt(w.concept_search_dev_ndcg10, 4)}, + ranker "
                  f"{fmt(w.ranker_dev_ndcg10, 4)}, gain {fmt(w.gain_ndcg10, 4)} [{fmt(w.gain_ci95[0], 4)}, "
                  f"{fmt(w.gain_ci95[1], 4)}]."]
    lines += [
        "",
        f"Training on {r.train_pairs_measured} labelled pairs took {fmt(r.train_seconds_10k_pairs, 2)} s on this CPU "
        f"(goal: 30 s for 10,000). The served search with the ranker attached ranked {check.queries_checked} dev "
        f"queries; {check.differ} differed from the evaluated order. Served search p95, top 10: "
        f"{fmt(check.search_ms_p95, 1)} ms without the stage, {fmt(check.learned_search_ms_p95, 1)} ms with it "
        "(the store's signals read from memory here).",
        "",
    ]
    return lines


@dataclass(frozen=True)
class TestForm:
    """One query form of the test split: concept search alone, the ranker, and what the gate served."""

    queries: int
    concept_search_ndcg10: float
    ranker_ndcg10: float
    served_ndcg10: float
    ranker_gain: float
    ranker_gain_ci95: tuple[float, float]
    served_gain: float
    served_gain_ci95: tuple[float, float]


@dataclass(frozen=True)
class TestGate:
    dev_gain: float
    dev_ci95: tuple[float, float]
    activated: bool


@dataclass(frozen=True)
class RankerTest:
    """The learned stage on the test split, read once (``bench/ranker_test.py``)."""

    date: str
    split: str
    features: str
    depth: int
    train_queries_per_kind: int
    train_pairs: int
    train_seconds: float
    gate: TestGate
    forms: Mapping[str, TestForm]
    params: RankerParams
    timings_s: Mapping[str, float]


def ranker_test_lines(r: RankerTest | None) -> list[str]:
    """The test split's figures: what the dev gate served, and the ranker's own gain beside it."""
    if r is None:
        return []
    g = r.gate
    lines = [
        "### The learned ranking stage on test (`bench/ranker_test.py`)",
        "",
        f"Run {r.date} ({r.params.cpu_count} CPU cores, load average {fmt(r.params.load_average_at_start, 1)} at "
        f"the start); {r.split}. The product's features, N={r.depth}, trained on {r.train_pairs} labelled pairs of "
        f"{r.train_queries_per_kind} train queries per kind. The gate decides on dev, as Update the ranker does: dev "
        f"gain {fmt(g.dev_gain, 4)} [{fmt(g.dev_ci95[0], 4)}, {fmt(g.dev_ci95[1], 4)}], so the ranker "
        f"{'serves' if g.activated else 'is kept out and the concept search alone serves'}.",
        "",
        "| test form | queries | concept search | + ranker | ranker gain [95%] | served | served gain [95%] |",
        "| --- | ---: | ---: | ---: | --- | ---: | --- |",
    ]
    for form, f in r.forms.items():
        lines.append(f"| {form} | {f.queries} | {fmt(f.concept_search_ndcg10, 4)} | {fmt(f.ranker_ndcg10, 4)} | "
                     f"{fmt(f.ranker_gain, 4)} [{fmt(f.ranker_gain_ci95[0], 4)}, {fmt(f.ranker_gain_ci95[1], 4)}] | "
                     f"{fmt(f.served_ndcg10, 4)} | {fmt(f.served_gain, 4)} [{fmt(f.served_gain_ci95[0], 4)}, "
                     f"{fmt(f.served_gain_ci95[1], 4)}] |")
    return [*lines, ""]
