"""A graded topic's screening simulated twice over the served search's candidates: the static order read top-down,
and the learner refitted after every grade (what ``python -m curation screen`` reports per topic).

The screening stack (the learner, its metrics) loads when a topic is simulated, not when this module is imported:
the command line imports :data:`GAINS` as it starts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from curation.ranking.features import GRADE_GAINS, Signals
from curation.records import Document
from curation.schemas import RelationSchema

__all__ = ["GAINS", "SearchParts", "simulate_topic"]

#: A grade as a topic file writes it (a grade's name, or its gain 2 / 1 / 0) → its gain.
GAINS = {**{g.value: gain for g, gain in GRADE_GAINS.items()}, **{str(v): v for v in (0, 1, 2)}}


@dataclass(frozen=True)
class SearchParts:
    """What a topic's candidates are searched with: the served retriever of its schema and what the served search
    reads (the query linker, the dictionaries' matcher, the concept index, the documents by PMID, the store's grades
    as evidence signals)."""

    engine: Any
    linker: Any
    matcher: Any
    source: Any
    documents: Callable[[Sequence[str]], Mapping[str, Document]]
    signals: Signals | None


def _figures(order: Sequence[int], gains: Sequence[int]) -> dict[str, float | None]:
    from curation.screening import metrics

    found = metrics.summary([gains[i] > 0 for i in order])
    return {k: (None if math.isnan(v) else round(v, 4)) for k, v in found.items()}


def simulate_topic(parts: SearchParts, schema: RelationSchema, values: Mapping[str, str], gold: Mapping[str, int],
                   mode: str, topic_id: str | int | None = None) -> dict[str, Any]:
    """One topic simulated (``values``: slot → typed name; ``gold``: pmid → gain): the static order and the learner,
    with their figures and reading orders, as JSON-ready data."""
    from curation.screening.pool import search_pool
    from curation.screening.simulation import simulate, static_prior

    _, pool = search_pool(parts.engine, parts.linker, parts.matcher, parts.source, parts.documents, parts.signals,
                          schema, values, mode)
    gains = [gold.get(p, 0) for p in pool.pmids]
    record: dict[str, Any] = {"id": topic_id, "schema": schema.name, "entities": dict(values),
                              "candidates": len(pool), "relevant_in_candidates": sum(g > 0 for g in gains),
                              "relevant_not_found": sorted(p for p, g in gold.items()
                                                           if g > 0 and p not in set(pool.pmids))}
    if record["relevant_in_candidates"] == 0:
        record["message"] = "no relevant abstract of the gold is among the candidates: nothing to simulate"
        return record
    run = simulate(pool, gains, static_prior(gains))
    static = list(range(len(pool)))
    record["static"] = {**_figures(static, gains), "order": list(pool.pmids)}
    record["learner"] = {**_figures(run.order, gains), "order": [pool.pmids[i] for i in run.order],
                         "rerank_p95_ms": round(sorted(run.rerank_seconds)[int(0.95 * (len(run.rerank_seconds)
                                                                                         - 1))] * 1000, 1)}
    return record
