"""The retrieval stack's one hit shape, defined once.

- :data:`Run`: the hits of many queries, BEIR's ``{query_id: {doc_id: score}}``. Every retriever
  returns one (:meth:`index.search.Retriever.run`), fusion takes and returns them, evaluation
  (``curation.learning.evaluation``) scores them. Functions take the read-only :data:`Run` and
  build and return a :data:`RunDict`.
- :data:`Ranking`: one query's hits as (doc id, score) pairs, best first: what the indexes'
  ``search`` gives per query, and what :func:`ranked` makes of one query's scores in a run.
- :class:`Hit` / :class:`SearchResult`: one query's ranking as the app shows it, each hit with its
  rank and each component's score.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

Run = Mapping[str, Mapping[str, float]]  # query id -> doc id -> score
RunDict = dict[str, dict[str, float]]  # a Run as functions build and return it
Ranking = list[tuple[str, float]]  # (doc id, score), best first


def ranked(scores: Mapping[str, float]) -> Ranking:
    """Documents by descending score, ties broken by doc id so results are deterministic."""
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


class Hit(NamedTuple):
    """One ranked document with the score of each component (None where it was not scored)."""

    pmid: str
    rank: int
    score: float
    bm25: float | None
    dense: float | None


class SearchResult(NamedTuple):
    query: str
    hits: list[Hit]
