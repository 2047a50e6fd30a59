"""The ``screen`` command's side of the facade: a curator's graded topic, its screening simulated twice over the
served search's candidates (the static order read top-down, and the learner refitted after every grade).

The screening stack (:mod:`curation.screening`) loads when a topic is simulated, not when the command line starts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from curation.ranking.features import GRADE_GAINS
from curation.schemas import RelationSchema
from curation.workflows.search import Searcher, SearchRequest

#: A grade as a topic file writes it (a grade's name, or its gain 2 / 1 / 0) → its gain.
GAINS = {**{g.value: gain for g, gain in GRADE_GAINS.items()}, **{str(v): v for v in (0, 1, 2)}}


def _figures(order: Sequence[int], gains: Sequence[int]) -> dict[str, float | None]:
    from curation.screening import metrics

    found = metrics.summary([gains[i] > 0 for i in order])
    return {k: (None if math.isnan(v) else round(v, 4)) for k, v in found.items()}


def screen_topic(searcher: Searcher, schema: RelationSchema, request: SearchRequest, gold: Mapping[str, int],
                 mode: str) -> dict[str, Any]:
    """One topic simulated (``gold``: pmid → gain): the static order and the learner, with their figures and
    reading orders, as JSON-ready data."""
    from curation.ranking.signals import StoreSignals
    from curation.screening.pool import search_pool
    from curation.screening.simulation import simulate, static_prior

    engine, _ = searcher.engine(schema)
    _, pool = search_pool(engine, searcher.linker, searcher.matcher, searcher.source, searcher.documents,
                          StoreSignals(searcher.con, schema), schema, request.values, mode)
    gains = [gold.get(p, 0) for p in pool.pmids]
    record: dict[str, Any] = {"id": request.id, "schema": schema.name, "entities": dict(request.values),
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
