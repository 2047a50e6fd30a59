"""The retrieval stack's one hit shape, defined once.

- :data:`Run`: the hits of many queries, BEIR's ``{query_id: {doc_id: score}}``. Every retriever
  returns one (:meth:`index.search.Retriever.run`), fusion takes and returns them, evaluation
  (``curation.learning.evaluation``) scores them. Functions take the read-only :data:`Run` and
  build and return a :data:`RunDict`.
- :data:`Ranking`: one query's hits as (doc id, score) pairs, best first: what the indexes'
  ``search`` gives per query, and what :func:`ranked` makes of one query's scores in a run.
- :class:`Hit` / :class:`SearchResult`: one query's ranking as the app shows it, each hit with its
  rank, each component's score and, from the concept search (:mod:`index.concepts`), its provenance:
  every stage's score and rank (:class:`StageScore`), the query concepts it mentions and how
  (:class:`ConceptMatch`), and its group ("all": every query concept mentioned, "some").
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


class StageScore(NamedTuple):
    """One stage's opinion of a hit: its score and the rank it gave (None: the stage did not rank it)."""

    stage: str  # "concepts", "lexical", "rm3", "dense", "fused"
    score: float
    rank: int | None


class ConceptMatch(NamedTuple):
    """How a hit mentions one query concept.

    Attributes:
        slot: the query slot ("Gene").
        concept: the concept's display name (what the chip shows).
        mentions: the concept index's mentions of it in the document (0: found by text only).
        spans: (start, end) offsets of those mentions in the document text (title + space + abstract).
        how: where the evidence comes from: "concept index" (with its sources, e.g. "concept index:
            dictionary"), "text" (a surface form found by the matcher), or both.
        forms: the surface forms written in the document, when known.
    """

    slot: str
    concept: str
    mentions: int
    spans: tuple[tuple[int, int], ...] = ()
    how: str = ""
    forms: tuple[str, ...] = ()


class Hit(NamedTuple):
    """One ranked document with the score of each component (None where it was not scored).

    ``stages``, ``concepts`` and ``group`` are filled by the concept search; a plain text search leaves
    them empty.
    """

    pmid: str
    rank: int
    score: float
    bm25: float | None
    dense: float | None
    stages: tuple[StageScore, ...] = ()
    concepts: tuple[ConceptMatch, ...] = ()
    group: str = ""


class SearchResult(NamedTuple):
    query: str
    hits: list[Hit]
