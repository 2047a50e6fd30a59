"""Formatting shared by the renderers: numbers, goal sentences, the per-form tables with intervals."""

from __future__ import annotations

from collections.abc import Mapping

from bench.reports.readers import Forms, Goals, MetricFigures


def fmt(value: object, digits: int = 3) -> str:
    """``value`` with ``digits`` decimals; "–" when it is no number (absent from the run)."""
    return f"{value:.{digits}f}" if isinstance(value, int | float) else "–"


def goals_line(goals: Goals | None) -> list[str]:
    """A result's ``goals`` as one sentence (each computed by the script from its run)."""
    if not goals:
        return []
    verdicts = (f"`{name}` {g.value} {g.op} {g.target}: {'met' if g.met else 'missed'}" for name, g in goals.items())
    return ["Goals (computed by the script from this run): " + "; ".join(verdicts) + ".", ""]


FORM_ORDER = ("canonical", "reworded", "verbatim")
FORM_TITLES = {
    "canonical": "canonical (the KB's names: what a curator types)",
    "reworded": "reworded (another name of each concept, never the evidence's own)",
    "verbatim": "verbatim (the evidence abstract's own mention texts, as in v1)",
}
KIND_ORDER = ("gene_variant", "gene_disease", "gene_chemical", "chemical_disease", "gene", "all", "all_renamed")
SIGNIFICANCE = ("Each cell: mean over queries [95% bootstrap interval]; † / ‡: significantly above / below the "
                "first row (paired two-sided sign-flip test, Holm-adjusted p < 0.05).")


def _cell(entry: MetricFigures, system: str, baseline: str) -> str:
    """ "0.412 [0.380, 0.441]" with † when the paired test against the baseline has Holm p < 0.05."""
    figures = entry.systems.get(system)
    if figures is None:
        return "–"
    cell = f"{fmt(figures.mean)} [{fmt(figures.ci95[0])}, {fmt(figures.ci95[1])}]"
    comparison = entry.comparisons.get(f"{system}_vs_{baseline}")
    if comparison is not None and comparison.p_holm < 0.05:
        cell += " †" if comparison.difference > 0 else " ‡"
    return cell


def forms_tables(forms: Forms, systems: list[str], labels: Mapping[str, str], metric: str = "ndcg@10",
                 form_names: tuple[str, ...] = FORM_ORDER) -> list[str]:
    """One table per form: systems × relation kinds (and every kind pooled), ``metric`` with intervals."""
    lines: list[str] = []
    for form in form_names:
        if form not in forms:
            continue
        per_kind = forms[form]
        kinds = [k for k in KIND_ORDER if k in per_kind and metric in per_kind[k].metrics]
        baseline = per_kind["all"].metrics[metric].baseline
        lines += [f"{metric}, {FORM_TITLES[form]}:", "",
                  "| system | " + " | ".join(f"{k} ({per_kind[k].queries})" for k in kinds) + " |",
                  "| --- |" + " ---: |" * len(kinds)]
        for name in systems:
            if name in per_kind["all"].metrics[metric].systems:
                lines.append(f"| {labels.get(name, f'`{name}`')} | "
                             + " | ".join(_cell(per_kind[k].metrics[metric], name, baseline) for k in kinds) + " |")
        lines.append("")
    return lines


def headline_table(forms: Forms, systems: list[str], labels: Mapping[str, str]) -> list[str]:
    """Every kind pooled: NDCG@10 per form (and on the renamed queries), EntityRecall@10 and Recall@50 (canonical)."""
    renamed = "all_renamed" in forms.get("reworded", {})
    lines = ["| system | " + " | ".join(f"{form} NDCG@10" for form in FORM_ORDER if form in forms)
             + (" | NDCG@10 canonical → reworded, renamed queries only" if renamed else "")
             + " | canonical EntityRecall@10 | canonical Recall@50 |",
             "| --- |" + " ---: |" * (len([f for f in FORM_ORDER if f in forms]) + 2 + renamed)]
    for name in systems:
        pooled = {form: forms[form]["all"].metrics for form in FORM_ORDER if form in forms}
        if name not in pooled["canonical"]["ndcg@10"].systems:
            continue
        baseline = pooled["canonical"]["ndcg@10"].baseline
        cells = [_cell(pooled[form]["ndcg@10"], name, baseline) for form in pooled]
        if renamed:
            before, after = (forms[f]["all_renamed"].metrics["ndcg@10"].systems[name].mean
                             for f in ("canonical", "reworded"))
            cells.append(f"{fmt(before)} → {fmt(after)} ({forms['reworded']['all_renamed'].queries} queries)")
        cells += [_cell(pooled["canonical"][m], name, baseline) for m in ("entity_recall@10", "recall@50")]
        lines.append(f"| {labels.get(name, f'`{name}`')} | " + " | ".join(cells) + " |")
    return lines + ["", SIGNIFICANCE, ""]


def mean_of(forms: Forms, form: str, system: str, metric: str = "ndcg@10", kind: str = "all") -> float | None:
    """One system's mean of ``metric`` over ``kind``'s queries in ``form``; None when the system was not run."""
    figures = forms[form][kind].metrics[metric].systems.get(system)
    return figures.mean if figures is not None else None
