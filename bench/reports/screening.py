"""bench/results/screening.json -> the screening section of docs/BENCHMARKS.md (and its recall-curve figure)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from bench.reports.readers import goals_of, read_json
from bench.reports.text import fmt, goals_line

METHODS = {
    "random": "random order (mean of 10)",
    "static": "static: the served order",
    "learner": "**the learner** (static prior)",
    "asreview": "ASReview 3 default (static prior)",
    "ranked": "served order + cross-topic ranker",
    "learner_ranked": "**the learner** over the ranked order",
    "asreview_ranked": "ASReview 3 default (ranked order's prior)",
    "best_possible": "best possible (every relevant first)",
}
METRICS = ("wss@95", "recall@10%", "recall@20%", "atd", "loss")
FIGURE = "screening_curves.png"


def read(results: Path) -> dict | None:
    return read_json(results, "screening")


def _cell(figures: Mapping[str, Mapping], metric: str) -> str:
    f = figures.get(metric)
    if not f:
        return "–"
    low, high = f["ci"]
    return f"{fmt(f['mean'])} [{fmt(low)}, {fmt(high)}]"


def _table(setting: Mapping) -> list[str]:
    lines = ["| method | " + " | ".join(METRICS) + " |", "|---|" + "---|" * len(METRICS)]
    for method, label in METHODS.items():
        if method in setting["summary"]:
            lines.append(f"| {label} | " + " | ".join(_cell(setting["summary"][method], m) for m in METRICS) + " |")
    differences = [f"`{k.removesuffix('_wss95')}` {fmt(v['mean'])} [{fmt(v['ci'][0])}, {fmt(v['ci'][1])}]"
                   for k, v in setting.items() if k.endswith("_wss95")]
    return [*lines, "", "WSS@95 differences, paired over topics (mean [95% bootstrap interval]): "
            + "; ".join(differences) + ".", ""]


def screening_section(result: dict) -> list[str]:
    store = result["store"]
    grid = result["dev_choice"]["grid"]
    chosen = result["dev_choice"]["chosen"]
    scorer = store.get("relation_scorer_trained_on", {})
    lines = [
        "## Screening a topic (`bench/screening.py`)",
        "",
        f"A topic is a partial relation with many candidates (BC5CDR chemical- or disease-centred topics: relevant = a "
        f"chemical-induced-disease relation of that entity; BioRED entities with relations in >= 5 abstracts). "
        f"Topics: {result['topics']['dev']} dev, {result['topics']['test']} test, split by entity before tuning. The "
        f"store holds {store['documents']:,} abstracts of every corpus ingested as plain text (the concept index is "
        f"the dictionaries' and rules'; gold is only the answer key); the relation scorer learned from "
        f"{scorer.get('documents', '–')} abstracts relevant to no topic. Candidates are the served search's (up to "
        f"2,000); every method gets the same prior knowledge (the first relevant and first irrelevant candidate of "
        f"its starting order). WSS@95 as Cohen et al. (work saved over reading at random at 95% recall); recall after "
        f"10% / 20% read; ATD (mean share read before each relevant); Loss (area from the best curve, 0 best). "
        f"Each cell: mean over topics [95% bootstrap interval].",
        "",
        "Dev choice of the learner (mean WSS@95 on dev topics, whole store): "
        + "; ".join(f"prior {g['prior_weight']}, evidence {g['evidence_weight']}: {fmt(g['wss@95'])}" for g in grid)
        + f". Chosen: prior {chosen['prior_weight']}, evidence {chosen['evidence_weight']}.",
        "",
    ]
    if "peer" in result:
        peer = result["peer"]
        parts = ", ".join(f"{k} `{peer[k]}`" for k in ("feature_extractor", "classifier", "querier", "balancer")
                          if k in peer)
        lines += [f"The peer: ASReview LAB {peer.get('asreview', '–')}'s default model `{peer.get('model', '–')}` "
                  f"({parts}), in its own virtual environment (`bench/_asreview_peer.py`).", ""]
    for split in ("dev", "test"):
        if split not in result:
            continue
        for setting, title in (("store", "whole store"), ("own_corpus", "the topic's own corpus only")):
            block = result[split][setting]
            lines += [f"**{split.capitalize()} topics, {title}** ({block['topics']} topics; the learner's re-rank "
                      f"p95 {fmt(block.get('learner_rerank_p95_ms'), 1)} ms):", "", *_table(block)]
    rerank = result.get("rerank", {})
    lines += [f"Re-rank after a grade: p95 {fmt(rerank.get('p95_ms'), 1)} ms for {rerank.get('candidates', '–')} "
              f"candidates with {rerank.get('grades', '–')} grades.", ""]
    if result.get("curves"):
        lines += [f"![Relevant found against read for three test topics]({FIGURE})", ""]
    best = result.get("test", {}).get("store", {}).get("summary", {}).get("best_possible", {}).get("recall@10%")
    if best:
        lines += [f"Recall after 10% read cannot reach 0.80 on these pools: with every relevant candidate first it is "
                  f"{fmt(best['mean'])} on the test topics (a topic's relevant abstracts are often more than a tenth "
                  f"of its candidates). The rows `served order + cross-topic ranker` show what a ranker trained on "
                  f"every dev topic's full answer key does to the served order.", ""]
    lines += _gate_lines(result.get("gate", {}))
    lines += goals_line(goals_of(result, "screening.json"))
    return lines


def _gate_lines(gate: dict) -> list[str]:
    """The cross-topic update after simulated 3 x 30 sessions (bench/_screening_gate.py)."""
    if not gate:
        return []
    lines = ["**Across topics: \"Update the ranker\" after a screening session.** A simulated curator screens 30 "
             "candidates of each of 3 topics of one schema in the learner's order, grading from the answer key; the "
             "product's update then runs on those 90 decisions and the gate judges leave-topic-out (each topic "
             "ranked by a ranker trained without it, NDCG@10 over its grades, paired bootstrap over topics). "
             "Shuffled: each topic's grades permuted among its read candidates, so any activation is false.", "",
             "| split | sessions | activated | false activation (shuffled) | first session: gain [95% CI] | "
             "NDCG@10 gain on unseen topics when activated |", "|---|---|---|---|---|---|"]
    for split in ("dev", "test"):
        g = gate.get(split)
        if not g or "session" not in g:
            continue
        first = g["session"]
        lines.append(f"| {split} | {g['sessions']} | {fmt(g['activation_rate'])} | {fmt(g['false_activation_rate'])} | "
                     f"{'activated' if first['activated'] else 'kept out'}: {first['gain']:+.3f} "
                     f"[{first['low']:+.3f}, {first['high']:+.3f}] | {fmt(g.get('served_gain_when_activated'))} |")
    grid = gate.get("dev_grid", {}).get("grid", [])
    if grid:
        cells = "; ".join(f"{r['min_child_samples']}: activated {fmt(r['activation_rate'])}, false "
                          f"{fmt(r['false_activation_rate'])}" for r in grid)
        lines += ["", f"Dev, smaller LightGBM leaves (min_child_samples, 10 sessions each): {cells}. Smaller leaves "
                  f"let the trees split on 90 grades, but what they learn does not carry to held-out topics; the "
                  f"product keeps {gate['dev_grid']['chosen_min_child_samples']}."]
    return [*lines, ""]
