"""The retrieval benchmark's choices made on dev.

The hybrid fusion (gated against BM25 and dense) and the alias weight of the concept search.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bench import _concepts
from bench._benchmark import (
    EVAL_K,
    evaluate_system,
    mean_of,
    pooled,
    system,
)
from curation.learning.benchmark import Benchmark
from curation.retrieval.relation_search import SearchOptions
from index.search import FusionConfig, Retriever

GATE = ("ndcg@10", "entity_recall@10")
CHOICE_FORMS = ("canonical", "reworded")  # the forms curators type; the hybrid is chosen on their dev queries


# The hybrid candidates tried on dev. "bm25_dense_fallback" keeps BM25's order and lets dense
# fill the list only when BM25 finds fewer than k documents (rerank with no dense share);
# every other candidate lets dense change BM25's order.
CANDIDATES: dict[str, FusionConfig] = {
    "rrf": FusionConfig("rrf"),
    "rrf_bm25x2": FusionConfig("rrf", weights=(2.0, 1.0)),
    "slate": FusionConfig("slate", depth=10),
    **{f"weighted_{w:g}": FusionConfig("weighted", weights=(1 - w, w)) for w in (0.02, 0.05, 0.1, 0.2, 0.3, 0.5)},
    **{
        f"rerank_d{d}_mix{m:g}": FusionConfig("rerank", depth=d, mix=m)
        for d in (50, 100)
        for m in (0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0)
    },
    "bm25_dense_fallback": FusionConfig("rerank", depth=50, mix=0.0),
}


def dense_share(config: FusionConfig) -> float:
    """How much say dense has over the order (0: none, BM25 order kept)."""
    if config.method == "rerank":
        return config.mix
    if config.method in ("weighted", "rrf"):
        return config.weights[1] / sum(config.weights)
    return 0.5


def sweep(retriever: Retriever, benchmark: Benchmark, split: str) -> dict[str, dict[str, dict[str, float]]]:
    """form → system → mean metrics over every kind's queries, for BM25, dense and every hybrid candidate."""
    systems = {"bm25": system(retriever, "bm25"), "dense": system(retriever, "dense")}
    systems.update({name: system(retriever, "hybrid", config) for name, config in CANDIDATES.items()})
    table: dict[str, dict[str, dict[str, float]]] = {form: {} for form in CHOICE_FORMS}
    for name, retrieve in systems.items():
        figures = evaluate_system(retrieve, benchmark, split, CHOICE_FORMS)
        for form in CHOICE_FORMS:
            table[form][name] = mean_of(pooled(figures[form]))
    return table


def shortfall(table: Mapping[str, Mapping[str, Mapping[str, float]]], system: str) -> float:
    """How far ``system`` falls below the better component at worst (<= 0: the gate is met)."""
    return max(
        max(rows["bm25"][m], rows["dense"][m]) - rows[system][m] for rows in table.values() for m in GATE
    )


def choose(table: Mapping[str, Mapping[str, Mapping[str, float]]]) -> tuple[str, str, str]:
    """(chosen candidate, why, best candidate in which dense changes the order).

    Chosen: among candidates meeting the gate on every form, the best mean of the gated
    metrics, ties going to the larger dense share; if none meets it, the smallest worst
    shortfall. The best mixed candidate is reported beside it when the chosen one gives dense
    no say, so the cost of mixing stays visible.
    """
    def mean(system: str) -> float:
        return float(np.mean([rows[system][m] for rows in table.values() for m in GATE]))

    def rank(name: str) -> tuple[float, float, float]:
        return (max(shortfall(table, name), 0.0), -mean(name), -dense_share(CANDIDATES[name]))

    mixed = [name for name in CANDIDATES if dense_share(CANDIDATES[name]) > 0]
    best_mixed = min(mixed, key=rank)
    passing = [name for name in CANDIDATES if shortfall(table, name) <= 1e-9]
    best = min(CANDIDATES, key=rank)
    if not passing:
        return best, (f"no candidate met the gate on dev; {best} falls least short "
                      f"({shortfall(table, best):.4f} at worst)"), best_mixed
    why = (f"{len(passing)} of {len(CANDIDATES)} candidates met the gate on dev ({', '.join(passing)}); {best} has "
           f"the best mean of {', '.join(GATE)} over the {' and '.join(CHOICE_FORMS)} forms ({mean(best):.4f})")
    if dense_share(CANDIDATES[best]) == 0:
        why += (f". Every candidate in which dense changes BM25's order fell below BM25 on dev; the closest, "
                f"{best_mixed}, by {shortfall(table, best_mixed):.4f} at worst (reported as hybrid_mixed)")
    return best, why, best_mixed


ALTERNATIVE_WEIGHTS = (0.25, 0.5, 1.0)  # an alias's weight in the expanded query, tried on dev


def concept_sweep(concept: _concepts.ConceptBench, engine: Retriever, benchmark: Benchmark) -> dict:
    """form → system → mean dev metrics of the concept search (lexical order) for each alias weight, and RM3."""
    systems = {f"concepts_w{w:g}": _concepts.served_system(concept, engine, benchmark, "dev",
                                                         SearchOptions(mode="bm25", k=EVAL_K, alternative_weight=w))
               for w in ALTERNATIVE_WEIGHTS}
    systems["concepts_rm3_w0.5"] = _concepts.served_system(
        concept, engine, benchmark, "dev", SearchOptions(mode="bm25", k=EVAL_K, rm3=True))
    systems["bm25"] = system(engine, "bm25")
    table: dict[str, dict[str, dict[str, float]]] = {form: {} for form in CHOICE_FORMS}
    for name, retrieve in systems.items():
        figures = evaluate_system(retrieve, benchmark, "dev", CHOICE_FORMS)
        for form in CHOICE_FORMS:
            table[form][name] = mean_of(pooled(figures[form]))
    return table


def choose_weight(table: Mapping[str, Mapping[str, Mapping[str, float]]]) -> float:
    """The alias weight with the best mean of NDCG@10 and EntityRecall@10 over the dev forms (ties: 0.5)."""
    def mean(weight: float) -> float:
        return float(np.mean([rows[f"concepts_w{weight:g}"][m] for rows in table.values() for m in GATE]))

    return max(ALTERNATIVE_WEIGHTS, key=lambda w: (round(mean(w), 4), w == 0.5))
