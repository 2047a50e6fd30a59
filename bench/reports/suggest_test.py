"""bench/results/suggest_test.json -> the Test-split suggestion section of docs/BENCHMARKS.md.

The file is bench/suggest.py's with ``--test``: read with :mod:`bench.reports.suggest`'s records.
"""

from __future__ import annotations

from pathlib import Path

from bench.reports import suggest
from bench.reports.suggest import Suggest
from bench.reports.text import fmt, goals_line


def read(results: Path) -> Suggest | None:
    """bench/results/suggest_test.json, None when it was not run."""
    return suggest.read(results, "suggest_test")


def suggest_test_section(data: Suggest) -> list[str]:
    """bench/suggest.py --test: the Test splits, read once with everything chosen on dev."""
    r = data.relation_extraction.test or {}
    s = data.suggestions
    lines = [
        "## Suggesting the missing slot: Test splits, read once (`bench/suggest.py --test`)",
        "",
        f"Run {data.date[:10]}, everything as chosen on dev (the product's rule: top {s.product.top_docs}, "
        f"{s.product.rule}, {s.product.weight}, n-ary {s.product.nary_combine}"
        + (f", sentence pairs only: {s.product.sentence}" if s.product.sentence is not None else "") + "); "
        f"{s.queries_total:,} Test queries (" + ", ".join(f"{k} {v:,}" for k, v in s.queries.items()) + ").",
        "",
        "| | co-occurrence | relation scorer (the product) |",
        "| --- | ---: | ---: |",
    ]
    for corpus, d in r.items():
        ours = d.systems.get("scorer_induces", d.systems["scorer_logreg"])  # CID: the product's Chemical-Disease rule
        lines.append(f"| relation extraction F1, {corpus} | {fmt(d.systems['cooccurrence'].f1)} | {fmt(ours.f1)} |")
    for corpus in s.realistic:
        systems = s.rankings("realistic", corpus)
        cooc, ours = systems["cooccurrence_all"].map, systems["scorer_served_chosen"]
        diff = ours.map_minus_cooccurrence
        lines.append(f"| suggestion MAP (realistic), {corpus} | {cooc.mean:.3f} | {ours.map.mean:.3f} "
                     f"({diff.mean:+.3f} [{diff.ci95[0]:+.3f}, {diff.ci95[1]:+.3f}]) |")
    direction = data.relation_extraction.direction or {}
    disease = direction.get("disease") if isinstance(direction.get("disease"), dict) else {}
    if disease.get("test_corpora"):
        scores = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in disease["test_corpora"].items())
        lines += ["", f"Direction, disease head (treats / induces) on the Test chemical-disease sentences, at its "
                  f"dev threshold {disease.get('dev_corpora', {}).get('threshold')}: {scores}."]
    return lines + [""] + goals_line(data.goals)
