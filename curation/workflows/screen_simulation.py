"""The ``screen`` command's side of the facade: a curator's graded topic, its screening simulated twice over the
served search's candidates (:mod:`curation.screening.topic_simulation`: the static order read top-down, and the
learner refitted after every grade), searched with what :class:`~curation.workflows.search.Searcher` holds.

The screening stack (:mod:`curation.screening`) loads when a topic is simulated, not when the command line starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from curation.schemas import RelationSchema
from curation.screening.topic_simulation import GAINS as GAINS
from curation.workflows.search import Searcher, SearchRequest


def screen_topic(searcher: Searcher, schema: RelationSchema, request: SearchRequest, gold: Mapping[str, int],
                 mode: str) -> dict[str, Any]:
    """One topic simulated (``gold``: pmid → gain): the static order and the learner, with their figures and
    reading orders, as JSON-ready data."""
    from curation.ranking.signals import StoreSignals
    from curation.screening.topic_simulation import SearchParts, simulate_topic

    engine, _ = searcher.engine(schema)
    parts = SearchParts(engine, searcher.linker, searcher.matcher, searcher.source, searcher.documents,
                        StoreSignals(searcher.con, schema))
    return simulate_topic(parts, schema, request.values, gold, mode, request.id)
