"""bench/results/feedback.json's ``session_feedback`` (``bench/ranker_session.py``) -> in-session feedback's part of
the feedback section of docs/BENCHMARKS.md."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bench.reports.text import fmt
from curation.versions.typed_json import OPTIONAL


@dataclass(frozen=True)
class Residual:
    """Residual NDCG@10 of one configuration: the static served order against the re-ranked one."""

    queries: int
    static_ndcg10: float
    session_ndcg10: float
    gain_ndcg10: float
    gain_ci95: tuple[float, float]
    config: Mapping[str, object] = field(default_factory=dict, metadata=OPTIONAL)


@dataclass(frozen=True)
class Versus:
    gain_ndcg10: float
    gain_ci95: tuple[float, float]


@dataclass(frozen=True)
class SessionParams:
    seed: int
    cpu_count: int
    load_average_at_start: float


@dataclass(frozen=True)
class SessionFeedback:
    """In-session feedback on the residual collection: the method chosen on dev, its dev (and once, test) figures."""

    date: str
    queries: str
    protocol: str
    first_stage: str
    chosen_on_dev: Mapping[str, object]
    dev: Residual
    dev_best_rocchio: Residual
    dev_features_vs_rocchio: Versus
    dev_grid: tuple[Residual, ...]
    params: SessionParams
    timings_s: Mapping[str, float]
    test: Residual | None = field(default=None, metadata=OPTIONAL)


def _line(name: str, r: Residual) -> str:
    return (f"| {name} | {r.queries} | {fmt(r.static_ndcg10, 4)} | {fmt(r.session_ndcg10, 4)} | "
            f"{fmt(r.gain_ndcg10, 4)} | [{fmt(r.gain_ci95[0], 4)}, {fmt(r.gain_ci95[1], 4)}] |")


def session_lines(s: SessionFeedback | None) -> list[str]:
    """The residual-collection figures: the chosen method on dev, the best Rocchio, and the test figure once read."""
    if s is None:
        return []
    chosen = ", ".join(f"{k} {v}" for k, v in s.chosen_on_dev.items())
    v = s.dev_features_vs_rocchio
    lines = [
        "### In-session feedback: the ungraded results re-ranked from a curator's first grades "
        "(`bench/ranker_session.py`)",
        "",
        f"Run {s.date} on {s.params.cpu_count} CPU cores (load average {fmt(s.params.load_average_at_start, 1)} at "
        f"the start). Queries: {s.queries}. Protocol: {s.protocol}. First stage: {s.first_stage}. Chosen on dev "
        f"among {len(s.dev_grid)} configurations: {chosen}; the per-query feature model against the best Rocchio "
        f"on dev: {fmt(v.gain_ndcg10, 4)} [{fmt(v.gain_ci95[0], 4)}, {fmt(v.gain_ci95[1], 4)}] (it replaces Rocchio "
        "only when that interval is above 0).",
        "",
        "| system | queries | static residual NDCG@10 | re-ranked | gain | 95% interval |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
        _line("chosen, dev", s.dev),
        _line("best Rocchio, dev", s.dev_best_rocchio),
    ]
    if s.test is not None:
        lines.append(_line("chosen, test (read once)", s.test))
    return lines + [""]
