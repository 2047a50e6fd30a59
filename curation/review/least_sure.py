"""The (relation, document) pairs the ranking is least sure about: the annotation queue's second source.

For each relation searched, the retriever's top ``depth`` documents, ordered by

    uncertainty = max(closeness, disagreement)

- *closeness* to the decision boundary. ``s`` is the hit's fused score min-max scaled over
  its relation's top-``depth`` list (1 = the top hit, 0 = the last). The boundary ``b`` is
  learned from the grades already given to hits of these lists: halfway between the mean
  ``s`` of hits graded relevant (complete or partial) and of hits graded not relevant;
  0.5 until both kinds exist. closeness = 1 − |s − b| / max(b, 1 − b): 1 on the boundary,
  0 at the far end of the list.
- *disagreement* of the ranking components (hybrid mode only): |rank by BM25 − rank by
  dense| / n over the n hits, a document a component did not score ranking n + 1. It is 0
  in BM25 mode, where there is one component.

The queue (:mod:`curation.review.queue`) offers these after the pairs other curators decided.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from curation.errors import USER_ERRORS, CurationError
from curation.grades import RELEVANT_GRADES
from curation.records import Decision, ItemKey, fold_relation
from curation.review.agreement import current_labels
from curation.schemas import RelationSchema
from index.hits import Hit
from index.search import Mode

DEFAULT_BOUNDARY = 0.5
ORDERS = ("uncertainty", "random")  # how the model's pairs are queued: least sure first, or a random baseline


@dataclass(frozen=True)
class UncertainHit:
    """A retrieved (relation, document) pair with how unsure the ranking is about it.

    Attributes:
        scaled: the fused score min-max scaled over the relation's hit list (1 = top).
        closeness, disagreement, uncertainty: see the module docstring; all in [0, 1].
        reason: one line for a person.
    """

    item: ItemKey
    query: str
    values: tuple[tuple[str, str], ...]
    rank: int
    score: float
    bm25: float | None
    dense: float | None
    scaled: float
    closeness: float
    disagreement: float
    uncertainty: float
    reason: str


def ranking_mode(retriever) -> Mode:
    """Hybrid when the retriever has a dense index and encoder, else BM25."""
    has_dense = getattr(retriever, "dense", None) is not None and getattr(retriever, "encoder", None) is not None
    return Mode.HYBRID if has_dense else Mode.BM25


def learned_boundary(scaled: Mapping[ItemKey, float], grades: Mapping[ItemKey, Sequence[str]]) -> float:
    """Halfway between the mean scaled score of hits graded relevant and of those graded not relevant.

    Args:
        scaled: item → its scaled score in its relation's hit list.
        grades: item → the grades annotators gave it (an item counts once per grade).
    """
    relevant, irrelevant = [], []
    for item, given in grades.items():
        if item not in scaled:
            continue
        for grade in given:
            (relevant if grade in RELEVANT_GRADES else irrelevant).append(scaled[item])
    if not relevant or not irrelevant:
        return DEFAULT_BOUNDARY
    return (sum(relevant) / len(relevant) + sum(irrelevant) / len(irrelevant)) / 2


def scale_scores(hits: Sequence[Hit]) -> list[float]:
    """Fused scores min-max scaled over the list (1 = top); all 1.0 when they are equal."""
    scores = [h.score for h in hits]
    if not scores:
        return []
    low, high = min(scores), max(scores)
    return [1.0 if high == low else (s - low) / (high - low) for s in scores]


def component_ranks(hits: Sequence[Hit], component: str) -> list[int]:
    """Each hit's rank (1 = best) by one component's score; hits it did not score rank n + 1."""
    values = [getattr(h, component) for h in hits]
    order = sorted((i for i, v in enumerate(values) if v is not None), key=lambda i: -values[i])
    ranks = [len(hits) + 1] * len(hits)
    for position, index in enumerate(order, start=1):
        ranks[index] = position
    return ranks


def rank_disagreement(hits: Sequence[Hit]) -> list[float]:
    """|rank by BM25 − rank by dense| / n for each hit; 0 where fewer than two hits have a dense score."""
    if sum(h.dense is not None for h in hits) < 2:
        return [0.0] * len(hits)
    n = len(hits)
    by_bm25, by_dense = component_ranks(hits, "bm25"), component_ranks(hits, "dense")
    return [min(abs(a - b) / n, 1.0) for a, b in zip(by_bm25, by_dense, strict=True)]


def closeness(scaled: float, boundary: float) -> float:
    """1 on the boundary, falling linearly to 0 at the farther end of [0, 1]."""
    return 1.0 - abs(scaled - boundary) / max(boundary, 1.0 - boundary)


def least_sure(
    retriever,
    schema: RelationSchema,
    relations: Sequence[tuple[tuple[str, str], ...]],
    decisions: Iterable[Decision],
    depth: int = 20,
    limit: int = 20,
    mode: Mode | str | None = None,
    order: str = "uncertainty",
    seed: str = "",
    keep: Callable[[Mapping[str, str], str], bool] | None = None,
) -> tuple[list[UncertainHit], list[str]]:
    """The ``limit`` retrieved pairs the ranking is least sure about (see the module docstring).

    ``order`` "random" takes the pairs in a random order instead (the baseline an uncertainty order is
    measured against), the same for the same ``seed`` (the annotator's name), so the queue does not
    reshuffle between page runs.

    Args:
        retriever: an ``index.search.Retriever``.
        relations: query entities of each relation to search.
        decisions: decisions of the schema (their grades place the boundary).
        mode: "hybrid" / "bm25"; default :func:`ranking_mode`.
        keep: which retrieved documents may be offered for a relation (``keep(values, pmid)``; None: every one),
            e.g. only those that mention every typed entity.

    Returns:
        The pairs, most uncertain first, and notes on relations that could not be searched.
    """
    mode = Mode(mode) if mode is not None else ranking_mode(retriever)
    notes: list[str] = []
    searched: list[tuple[str, tuple[tuple[str, str], ...], list[Hit], list[float]]] = []
    scaled_of: dict[ItemKey, float] = {}
    for values in relations:
        try:
            result = retriever.search(schema, dict(values), mode=mode, k=depth)
        except USER_ERRORS as exc:
            relation = ", ".join(f"{t} {v[:40]}" for t, v in values)
            notes.append(f"not searched for least-sure pairs ({relation}): {exc}")
            continue
        hits = [h for h in result.hits if keep is None or keep(dict(values), h.pmid)]
        scaled = scale_scores(hits)
        searched.append((result.query, values, hits, scaled))
        for hit, s in zip(hits, scaled, strict=True):
            scaled_of[_key(schema, values, hit.pmid)] = s
    grades: dict[ItemKey, list[str]] = {}
    for label in current_labels(decisions):
        grades.setdefault(label.item, []).append(label.grade)
    boundary = learned_boundary(scaled_of, grades)
    out: dict[ItemKey, UncertainHit] = {}
    for query, values, hits, scaled in searched:
        disagreement = rank_disagreement(hits)
        by_bm25, by_dense = component_ranks(hits, "bm25"), component_ranks(hits, "dense")
        for i, hit in enumerate(hits):
            near = closeness(scaled[i], boundary)
            if disagreement[i] > near:
                reason = f"BM25 rank {_rank(by_bm25[i], len(hits))}, dense rank {_rank(by_dense[i], len(hits))}"
            else:
                reason = f"score at {scaled[i]:.2f} of its list's range, boundary {boundary:.2f}"
            key = _key(schema, values, hit.pmid)
            entry = UncertainHit(
                key,
                query,
                values,
                hit.rank,
                hit.score,
                hit.bm25,
                hit.dense,
                scaled[i],
                near,
                disagreement[i],
                max(near, disagreement[i]),
                reason,
            )
            if key not in out or entry.uncertainty > out[key].uncertainty:
                out[key] = entry
    if order not in ORDERS:
        raise CurationError(f"order must be one of {ORDERS}, got '{order}'")
    ranked = sorted(out.values(), key=lambda u: (-u.uncertainty, u.rank, u.item))
    if order == "random":
        ranked = sorted(ranked, key=lambda u: hashlib.sha256(f"{seed}\x00{u.item}".encode()).hexdigest())
    return ranked[:limit], notes


def _key(schema: RelationSchema, values: tuple[tuple[str, str], ...], pmid: str) -> ItemKey:
    return ItemKey(schema.name, fold_relation(values), pmid)


def _rank(rank: int, n: int) -> str:
    return str(rank) if rank <= n else "none"
