"""The annotation queue: (relation, document) pairs for a second opinion, and adjudication.

An annotator (a curator name) is given, in this order:

1. **Pairs other curators decided** that the annotator has not graded, fewest grades first
   (a pair with one grade gains the overlap agreement needs), adjudicated pairs left out.
   The queue never says what the others answered: the second opinion stays blind.
2. **Pairs the model is least sure about** (:func:`least_sure`): for the relations already
   decided and those in the worklist, the retriever's top ``depth`` documents, ordered by

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

Grades are recorded with ``store.record_decision`` like any decision. An adjudicator records
the final grade of a disagreement under their own name with the note ``adjudication``
(:func:`adjudicate`); ``curation.workflows.agreement.open_disagreements`` lists those still open.
:func:`annotation_view` is the Annotate page's one call.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import duckdb

from curation import access, store
from curation.access import Action, Who
from curation.entities.matching import Matcher
from curation.errors import USER_ERRORS, CurationError
from curation.grades import RELEVANT_GRADES, Grade
from curation.records import ADJUDICATION_NOTE, Decision, ItemKey, MarkedText, fold_relation, is_adjudication, item_key
from curation.retrieval.passages import shift
from curation.schemas import RelationSchema
from curation.workflows.agreement import (
    Alpha,
    AnnotatorProgress,
    Disagreement,
    KappaWeights,
    PairKappa,
    current_labels,
    disagreements,
    krippendorff_alpha,
    label_matrix,
    pairwise_kappa,
    progress,
)
from curation.workflows.results import role_spans
from index.hits import Hit
from index.search import Mode

DEFAULT_BOUNDARY = 0.5
ORDERS = ("uncertainty", "random")  # how the model's pairs are queued: least sure first, or a random baseline


class QueueSource(StrEnum):
    DECIDED = "decided by others"
    LEAST_SURE = "least sure"


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


@dataclass(frozen=True)
class QueueItem:
    """One pair to grade: ``values`` are the relation's query entities to record the grade with."""

    item: ItemKey
    query: str
    values: tuple[tuple[str, str], ...]
    source: QueueSource
    reason: str
    uncertainty: float | None = None

    @property
    def pmid(self) -> str:
        return self.item.pmid


@dataclass(frozen=True)
class AnnotationRow:
    """The next pair, ready to show: title and abstract with their role spans (the page escapes and marks them)."""

    entry: QueueItem
    title: MarkedText
    abstract: MarkedText


@dataclass(frozen=True)
class AnnotationView:
    """Everything the Annotate page shows for one annotator and schema."""

    next: AnnotationRow | None
    remaining: int  # queue items left for this annotator (skipped ones excluded)
    pool: int  # items in the annotation pool (decided ∪ least sure)
    progress: tuple[AnnotatorProgress, ...]
    kappas: tuple[PairKappa, ...]
    alpha: Alpha
    disagreements: tuple[Disagreement, ...]  # still open
    mode: str
    notes: tuple[str, ...] = ()


def ranking_mode(retriever) -> Mode:
    """Hybrid when the retriever has a dense index and encoder, else BM25."""
    has_dense = getattr(retriever, "dense", None) is not None and getattr(retriever, "encoder", None) is not None
    return Mode.HYBRID if has_dense else Mode.BM25


def candidate_relations(
    con: duckdb.DuckDBPyConnection, schema: RelationSchema, decisions: Iterable[Decision], limit: int = 30
) -> list[tuple[tuple[str, str], ...]]:
    """Relations to look for unsure documents in: decided ones first, then the worklist's, deduplicated."""
    seen: dict[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]] = {}
    decided = [d.query_entities for d in decisions if d.schema == schema.name and not is_adjudication(d)]
    listed = [tuple(sorted(i["values"].items())) for i in store.list_worklist(con, schema)]
    for values in [*decided, *listed]:
        folded = fold_relation(values)
        if folded and folded not in seen:
            seen[folded] = values
    return list(seen.values())[:limit]


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
        scaled = scale_scores(result.hits)
        searched.append((result.query, values, result.hits, scaled))
        for hit, s in zip(result.hits, scaled, strict=True):
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


def build_queue(
    annotator: str,
    decisions: Iterable[Decision],
    uncertain: Sequence[UncertainHit] = (),
    skipped: Iterable[ItemKey] = (),
) -> list[QueueItem]:
    """The annotator's queue: pairs others graded (fewest grades first), then least-sure pairs.

    Leaves out pairs the annotator has a decision on (a grade or an adjudication), adjudicated
    pairs, and ``skipped`` ones.
    """
    annotator = " ".join(annotator.split())
    decisions = list(decisions)
    mine = {item_key(d) for d in decisions if d.curator == annotator and d.superseded_by is None}
    adjudicated = {item_key(d) for d in decisions if is_adjudication(d) and d.superseded_by is None}
    excluded = mine | adjudicated | set(skipped)
    by_item: dict[ItemKey, list[Decision]] = {}
    for label in current_labels(decisions):
        if label.item not in excluded:
            by_item.setdefault(label.item, []).append(label.decision)
    queue = []
    for item, graded in sorted(by_item.items(), key=lambda kv: (len(kv[1]), min(d.decision_id for d in kv[1]))):
        first = min(graded, key=lambda d: d.decision_id)
        others = "1 other curator" if len(graded) == 1 else f"{len(graded)} other curators"
        queue.append(QueueItem(item, first.query, first.query_entities, QueueSource.DECIDED, f"graded by {others}"))
    for u in uncertain:
        if u.item not in excluded and u.item not in by_item:
            queue.append(QueueItem(u.item, u.query, u.values, QueueSource.LEAST_SURE, u.reason, u.uncertainty))
    return queue


def record_label(
    con: duckdb.DuckDBPyConnection, annotator: Who, schema: RelationSchema, values: Mapping[str, str], pmid: str,
    grade: Grade,
) -> Decision:
    """Record an annotator's grade of one (relation, abstract) pair from the queue."""
    identity = access.require(con, annotator, Action.LABEL)
    return store.record_decision(con, identity.name, schema, values, pmid, grade, identity_source=identity.source)


def adjudicate(
    con: duckdb.DuckDBPyConnection,
    adjudicator: Who,
    schema: RelationSchema,
    disagreement: Disagreement,
    grade: Grade,
    answer: str = "",
) -> Decision:
    """Record the final grade of a disagreement under the adjudicator's name (note ``adjudication``).

    Raises:
        CurationError: as ``store.record_decision`` (no name, unknown grade, ...), or the
            disagreement belongs to another schema.
    """
    identity = access.require(con, adjudicator, Action.ADJUDICATE)
    if disagreement.item.schema != schema.name:
        raise CurationError(
            f"this disagreement is in schema '{disagreement.item.schema}', not '{schema.name}'; switch schema"
        )
    values = dict(disagreement.values)
    return store.record_decision(
        con, identity.name, schema, values, disagreement.item.pmid, grade, answer=answer, note=ADJUDICATION_NOTE,
        identity_source=identity.source,
    )


def annotation_view(
    con: duckdb.DuckDBPyConnection,
    retriever,
    matcher: Matcher,
    schema: RelationSchema,
    annotator: str,
    skipped: Iterable[ItemKey] = (),
    depth: int = 20,
    max_relations: int = 30,
    uncertain_limit: int = 20,
    weights: KappaWeights | str = KappaWeights.LINEAR,
    order: str = "uncertainty",
) -> AnnotationView:
    """The Annotate page's one call: the annotator's next pair, progress, agreement, open disagreements.

    ``order``: the model's pairs least sure first ("uncertainty") or in a random order ("random")."""
    decisions = store.list_decisions(con, schema=schema.name, include_superseded=True)
    active = [d for d in decisions if d.superseded_by is None]
    mode = ranking_mode(retriever)
    relations = candidate_relations(con, schema, active, limit=max_relations)
    uncertain, notes = least_sure(retriever, schema, relations, decisions, depth, uncertain_limit, mode,
                                  order=order, seed=annotator)
    queue = build_queue(annotator, decisions, uncertain, skipped)
    matrix = label_matrix(decisions, annotators=[annotator])
    pool = set(matrix.items) | {u.item for u in uncertain}
    return AnnotationView(
        next=_first_showable(con, matcher, schema, queue),
        remaining=len(queue),
        pool=len(pool),
        progress=tuple(progress(matrix, pool)),
        kappas=tuple(pairwise_kappa(matrix, weights)),
        alpha=krippendorff_alpha(matrix),
        disagreements=tuple(d for d in disagreements(decisions) if d.is_open),
        mode=str(mode),
        notes=tuple(notes),
    )


def _first_showable(
    con: duckdb.DuckDBPyConnection, matcher: Matcher, schema: RelationSchema, queue: Sequence[QueueItem]
) -> AnnotationRow | None:
    # An index may name a document the store no longer has; such pairs cannot be graded.
    for entry in queue:
        documents = store.get_documents(con, [entry.pmid])
        if not documents:
            continue
        doc = documents[0]
        spans = role_spans(matcher, schema, dict(entry.values), doc)
        offset = len(doc.title) + 1 if doc.title else 0
        return AnnotationRow(entry, MarkedText(doc.title, tuple(shift(spans, 0, len(doc.title)))),
                             MarkedText(doc.abstract, tuple(shift(spans, offset, len(doc.abstract)))))
    return None


def _key(schema: RelationSchema, values: tuple[tuple[str, str], ...], pmid: str) -> ItemKey:
    return ItemKey(schema.name, fold_relation(values), pmid)


def _rank(rank: int, n: int) -> str:
    return str(rank) if rank <= n else "none"
