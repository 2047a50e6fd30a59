"""Formatting shared by the renderers: numbers, goal sentences, the per-form tables with intervals."""

from __future__ import annotations

import json
from pathlib import Path


def read_json(results: Path, name: str) -> dict | None:
    """The parsed ``results/<name>.json``, None when that benchmark has not been run."""
    path = results / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def fmt(value, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if isinstance(value, int | float) else "–"


def goals_line(data: dict) -> list[str]:
    """The JSON's ``goals`` as one sentence (each computed by the script from its run)."""
    goals = data.get("goals", {})
    if not goals:
        return []
    verdicts = (f"`{name}` {g['value']} {g['op']} {g['target']}: {'met' if g['met'] else 'missed'}"
                for name, g in goals.items())
    return ["Goals (computed by the script from this run): " + "; ".join(verdicts) + ".", ""]


FORM_ORDER = ("canonical", "reworded", "verbatim")


FORM_TITLES = {
    "canonical": "canonical (the KB's names: what a curator types)",
    "reworded": "reworded (another name of each concept, never the evidence's own)",
    "verbatim": "verbatim (the evidence abstract's own mention texts, as in v1)",
}


KIND_ORDER = ("gene_variant", "gene_disease", "gene_chemical", "chemical_disease", "gene", "all", "all_renamed")


def _cell(entry: dict, system: str, baseline: str) -> str:
    """ "0.412 [0.380, 0.441]" with † when the paired test against the baseline has Holm p < 0.05."""
    figures = entry["systems"].get(system)
    if figures is None:
        return "–"
    cell = f"{fmt(figures['mean'])} [{fmt(figures['ci95'][0])}, {fmt(figures['ci95'][1])}]"
    comparison = entry.get("comparisons", {}).get(f"{system}_vs_{baseline}")
    if comparison is not None and comparison["p_holm"] < 0.05:
        cell += " †" if comparison["difference"] > 0 else " ‡"
    return cell


SIGNIFICANCE = ("Each cell: mean over queries [95% bootstrap interval]; † / ‡: significantly above / below the "
                "first row (paired two-sided sign-flip test, Holm-adjusted p < 0.05).")


def forms_tables(forms: dict, systems: list[str], labels: dict[str, str], metric: str = "ndcg@10",
                 form_names: tuple[str, ...] = FORM_ORDER) -> list[str]:
    """One table per form: systems × relation kinds (and every kind pooled), ``metric`` with intervals."""
    lines: list[str] = []
    for form in form_names:
        if form not in forms:
            continue
        per_kind = forms[form]
        kinds = [k for k in KIND_ORDER if k in per_kind and metric in per_kind[k]]
        baseline = per_kind["all"][metric]["baseline"]
        lines += [f"{metric}, {FORM_TITLES[form]}:", "",
                  "| system | " + " | ".join(f"{k} ({per_kind[k]['queries']})" for k in kinds) + " |",
                  "| --- |" + " ---: |" * len(kinds)]
        for name in systems:
            if name in per_kind["all"][metric]["systems"]:
                lines.append(f"| {labels.get(name, f'`{name}`')} | "
                             + " | ".join(_cell(per_kind[k][metric], name, baseline) for k in kinds) + " |")
        lines.append("")
    return lines


def headline_table(forms: dict, systems: list[str], labels: dict[str, str]) -> list[str]:
    """Every kind pooled: NDCG@10 per form (and on the renamed queries), EntityRecall@10 and Recall@50 (canonical)."""
    renamed = "all_renamed" in forms.get("reworded", {})
    lines = ["| system | " + " | ".join(f"{form} NDCG@10" for form in FORM_ORDER if form in forms)
             + (" | NDCG@10 canonical → reworded, renamed queries only" if renamed else "")
             + " | canonical EntityRecall@10 | canonical Recall@50 |",
             "| --- |" + " ---: |" * (len([f for f in FORM_ORDER if f in forms]) + 2 + renamed)]
    for name in systems:
        pooled = {form: forms[form]["all"] for form in FORM_ORDER if form in forms}
        if name not in pooled["canonical"]["ndcg@10"]["systems"]:
            continue
        baseline = pooled["canonical"]["ndcg@10"]["baseline"]
        cells = [_cell(pooled[form]["ndcg@10"], name, baseline) for form in pooled]
        if renamed:
            before, after = (forms[f]["all_renamed"]["ndcg@10"]["systems"][name]["mean"]
                             for f in ("canonical", "reworded"))
            cells.append(f"{fmt(before)} → {fmt(after)} ({forms['reworded']['all_renamed']['queries']} queries)")
        cells += [_cell(pooled["canonical"][m], name, baseline) for m in ("entity_recall@10", "recall@50")]
        lines.append(f"| {labels.get(name, f'`{name}`')} | " + " | ".join(cells) + " |")
    return lines + ["", SIGNIFICANCE, ""]
