"""bench/results/suggest_test.json -> the Test-split suggestion section of docs/BENCHMARKS.md."""

from __future__ import annotations

from bench.reports.text import fmt, goals_line


def suggest_test_section(data: dict) -> list[str]:
    """bench/suggest.py --test: the Test splits, read once with everything chosen on dev."""
    r = data["relation_extraction"]["test"]
    s = data["suggestions"]
    lines = [
        "## Suggesting the missing slot: Test splits, read once (`bench/suggest.py --test`)",
        "",
        f"Run {data['date'][:10]}, everything as chosen on dev (the product's rule: top {s['product']['top_docs']}, "
        f"{s['product']['rule']}, {s['product']['weight']}, n-ary {s['product']['nary_combine']}); "
        f"{s['queries_total']:,} Test queries (" + ", ".join(f"{k} {v:,}" for k, v in s["queries"].items()) + ").",
        "",
        "| | co-occurrence | relation scorer (the product) |",
        "| --- | ---: | ---: |",
    ]
    for corpus, d in r.items():
        systems = d["systems"]
        lines.append(f"| relation extraction F1, {corpus} | {fmt(systems['cooccurrence']['f1'])} | "
                     f"{fmt(systems['scorer_logreg']['f1'])} |")
    for corpus, systems in s["realistic"].items():
        cooc, ours = systems["cooccurrence_all"]["map"], systems["scorer_served_chosen"]
        diff = ours["map_minus_cooccurrence"]
        lines.append(f"| suggestion MAP (realistic), {corpus} | {cooc['mean']:.3f} | {ours['map']['mean']:.3f} "
                     f"({diff['mean']:+.3f} [{diff['ci95'][0]:+.3f}, {diff['ci95'][1]:+.3f}]) |")
    return lines + [""] + goals_line(data)
