"""Screening a topic (the Curate page's "Screen this topic"): one card at a time, the queue re-ranked by the
in-session learner after every grade (:mod:`curation.screening`), with what the page draws beside it.

:func:`open_topic` opens a partial relation as a topic: the first time, the served search's best
:data:`~curation.screening.pool.MAX_CANDIDATES` are kept in their order (the static order,
:mod:`curation.store.screening`), later read back: the queue survives a restart and a new served model. Its grades
are the relation's decisions: :func:`grade` records one and returns the next view; an undo is the Curate page's.
A topic's learner is kept in this process with its last rankings: a grade refits once, and the ranking before it
(what "moved up" compares) is the previous view's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import duckdb
import numpy as np

from curation.entities.annotation import Annotator
from curation.entities.matching import Matcher
from curation.entities.postings import StorePostings, stored_annotations
from curation.entities.query import QueryConcept, QueryLinker
from curation.errors import USER_ERRORS
from curation.grades import Grade
from curation.ranking.session import query_grades
from curation.ranking.signals import StoreSignals
from curation.records import Decision, MarkedText
from curation.retrieval.passages import best_sentences, shift
from curation.retrieval.result_rows import ResultRow, answer_candidates, kinded_spans
from curation.review.provenance import decision_provenance, hit_provenance
from curation.schemas import RelationSchema
from curation.screening import kept_learners
from curation.screening.estimate import Remaining, remaining
from curation.screening.kept_learners import KeptLearner, MovedCard, kept_learner, moved_up
from curation.screening.learner import LearnerConfig, ScreeningLearner, Strategy
from curation.screening.metrics import curve, expected_random_curve
from curation.screening.pool import EVIDENCE_FEATURES, TopicPool, search_pool
from curation.store import screening as kept
from curation.store.corpus import get_documents
from curation.store.decisions import decisions_for, relation_values
from curation.store.kb import kb_records_citing
from curation.workflows.curate import record_judgement
from index.hits import ConceptMatch, Hit, StageScore

STRATEGIES = tuple(s.value for s in Strategy)


@dataclass(frozen=True)
class ScreenView:
    """One topic's screening, ready to draw.

    Attributes:
        schema, values: the relation schema and the partial relation (the topic).
        strategy: which unread candidate comes next (:data:`STRATEGIES`).
        message: why there is nothing to screen ("" when there is).
        query, concepts, version, mode: the search that made the queue (query text, slots as linked, what served).
        card: the next candidate, drawn as a Curate result (None: none left, or ``message``).
        candidates, read, found: the queue's size, how many are graded, how many of those are relevant.
        curve: (read,) relevant found after each read, in reading order (the order of the grades).
        static_curve: (candidates,) relevant expected after each read of the static order: the grade where read,
            else the learner's probability, else the topic's prevalence so far.
        random_curve: (candidates,) relevant expected after each read of a random order.
        remaining: what the estimate says about the unread (None: ``message``).
        moved: the unread cards the last grade moved up most.
        fitted: whether the learner orders the queue (False: the static order, until both kinds of grade).
        rerank_ms: the learner's refit and re-rank time.
    """

    schema: RelationSchema
    values: dict[str, str]
    strategy: str = Strategy.HIGHEST.value
    message: str = ""
    query: str = ""
    concepts: tuple[QueryConcept, ...] = ()
    version: str = ""
    mode: str = ""
    card: ResultRow | None = None
    candidates: int = 0
    read: int = 0
    found: int = 0
    curve: tuple[int, ...] = ()
    static_curve: tuple[float, ...] = ()
    random_curve: tuple[float, ...] = ()
    remaining: Remaining | None = None
    moved: tuple[MovedCard, ...] = ()
    fitted: bool = False
    rerank_ms: float = 0.0

    def is_topic(self, schema: RelationSchema, values: Mapping[str, str]) -> bool:
        """Whether this view is of the partial relation ``values`` of ``schema`` (as typed, spacing aside)."""
        return self.schema.name == schema.name and self.values == relation_values(schema, values)

    @property
    def progress_text(self) -> str:
        """"Screened 30 of 134 · 24 relevant found"."""
        return f"Screened {self.read} of {self.candidates} · {self.found} relevant found"

    @property
    def curve_text(self) -> str:
        """The chart's numbers at the last read: found, the static order's expected and random's."""
        if not self.read:
            return "Nothing screened yet."
        at = self.read - 1
        return (f"After {self.read} read: {self.found} relevant found; the static order would have found "
                f"{self.static_curve[at]:.1f}, a random order {self.random_curve[at]:.1f} (expected).")

    @property
    def estimate_text(self) -> str:
        """What the model says remains unread."""
        if (left := self.remaining) is None or left.model_estimate is None:
            return "" if left is None else ("No model estimate yet: it comes once the topic has a relevant and a "
                                            f"not relevant grade ({left.unread} unread).")
        return (f"About {left.model_estimate:.0f} relevant remain among the {left.unread} unread (model estimate: "
                "the sum of the learner's probabilities over the unread).")

    @property
    def stopping_text(self) -> str:
        """The stopping rule's verdict (Callaghan & Müller-Hansen 2020)."""
        left = self.remaining
        if left is None:
            return ""
        return (f"Stopping rule (Callaghan & Müller-Hansen 2020): recall ≥ {left.target:.0%} at p = "
                f"{left.p_value:.3f}: {'safe to stop' if left.safe_to_stop else 'keep screening'}.")

    @property
    def since_text(self) -> str:
        left = self.remaining
        return f"{left.since_last_relevant} read since the last relevant." if left and left.read else ""


def forget_learners() -> None:
    """Drop the learners this process keeps (what a restart does): a topic's next view builds its learner again."""
    kept_learners.forget_learners()


def _hit_json(hit: Hit) -> str:
    data = {**hit_provenance(hit), "rank": hit.rank, "score": float(hit.score), "bm25": hit.bm25, "dense": hit.dense}
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def _hit(pmid: str, text: str) -> Hit:
    data = json.loads(text)
    return Hit(pmid, int(data["rank"]), float(data["score"]), data.get("bm25"), data.get("dense"),
               tuple(StageScore(s["stage"], float(s["score"]), s["rank"]) for s in data["stages"]),
               tuple(ConceptMatch(c["slot"], c["concept"], int(c["mentions"]), (), c["how"], tuple(c["forms"]))
                     for c in data["concepts"]), data["group"])


def _concepts_json(concepts: Sequence[QueryConcept]) -> str:
    return json.dumps([{"slot": c.slot, "typed": c.typed, "kind": c.kind, "status": c.status,
                        "concept_ids": list(c.concept_ids), "canonical": c.canonical, "confidence": c.confidence,
                        "how": c.how, "forms": list(c.forms), "note": c.note} for c in concepts])


def _concepts(text: str) -> tuple[QueryConcept, ...]:
    return tuple(QueryConcept(c["slot"], c["typed"], c["kind"], c["status"], tuple(c["concept_ids"]), c["canonical"],
                              float(c["confidence"]), c["how"], (), tuple(c["forms"]), c["note"])
                 for c in json.loads(text))


def _keep_topic(con: duckdb.DuckDBPyConnection, engine, matcher: Matcher, linker: QueryLinker, schema: RelationSchema,
                values: Mapping[str, str], strategy: str, curator: str) -> str:
    """Search the topic and keep its queue; "" when kept, else why there is nothing to screen."""
    mode = "hybrid" if getattr(engine, "dense", None) is not None else "bm25"

    def fetch(pmids):
        return {d.pmid: d for d in get_documents(con, list(pmids))}

    try:  # search_pool's depth: every lexical candidate of the queue is checked for a mention the index lacks
        result, pool = search_pool(engine, linker, matcher, StorePostings(con), fetch, StoreSignals(con, schema),
                                   schema, values, mode)
    except USER_ERRORS as exc:
        return str(exc)
    pooled = set(pool.pmids)
    hits = [h for h in result.hits if h.pmid in pooled]  # the pool's candidates, in its order
    if len(hits) < 2:
        return (f"The search finds {len(hits)} abstract{'' if len(hits) == 1 else 's'} for this relation: nothing to "
                f"screen (a topic needs at least two). {' '.join(result.problems)}").strip()
    rows = pool.evidence  # (n, f)
    candidates = [kept.Candidate(h.pmid, _hit_json(h), tuple(row)) for h, row in zip(hits, rows, strict=True)]
    kept.add_topic(con, schema, values, result.query, result.version, result.mode, _concepts_json(result.concepts),
                   EVIDENCE_FEATURES, candidates, strategy, curator)
    return ""


def _entry(con: duckdb.DuckDBPyConnection, topic: kept.Topic, strategy: str) -> KeptLearner:
    def build() -> KeptLearner:
        candidates = kept.list_candidates(con, topic)
        documents = {d.pmid: d for d in get_documents(con, [c.pmid for c in candidates])}
        present = [c for c in candidates if c.pmid in documents]  # a document removed since: out of the queue
        same = tuple(topic.evidence_names) == EVIDENCE_FEATURES and present and all(c.evidence for c in present)
        evidence = np.asarray([c.evidence for c in present], dtype=np.float64) if same else None  # (n, f)
        pool = TopicPool(tuple(c.pmid for c in present), tuple(documents[c.pmid].text for c in present), evidence,
                         EVIDENCE_FEATURES if evidence is not None else ())
        return KeptLearner(pool, {c.pmid: documents[c.pmid].title for c in present}, tuple(c.hit for c in present),
                      ScreeningLearner(pool, LearnerConfig(strategy=strategy)))

    key = (topic.schema, topic.key, topic.created_at, kept.count_candidates(con, topic), strategy)
    return kept_learner(key, build)


def _reading(con: duckdb.DuckDBPyConnection, schema: RelationSchema, values: Mapping[str, str],
             index: Mapping[str, int]) -> tuple[np.ndarray, list[int]]:
    """The pool's gains (-1 unread) and its graded positions in reading order (each one's first active decision)."""
    decisions = decisions_for(con, schema, values)
    grades = query_grades(decisions)
    gains = np.full(len(index), -1, dtype=np.int64)
    order: list[int] = []
    for d in decisions:
        position = index.get(d.pmid)
        if position is not None and gains[position] < 0 and d.pmid in grades:
            gains[position] = grades[d.pmid]
            order.append(position)
    return gains, order


def _card(con: duckdb.DuckDBPyConnection, matcher: Matcher, schema: RelationSchema, query: str,
          concepts: Sequence[QueryConcept], hit: Hit) -> ResultRow | None:
    """The candidate as a Curate result row: title and abstract with entity spans, best sentences, KB records."""
    if not (documents := get_documents(con, [hit.pmid])):
        return None
    doc = documents[0]
    stored = stored_annotations(con, [doc.pmid]).get(doc.pmid)
    if stored is None:  # never annotated: the dictionaries, in memory only (as curate_search does)
        stored = Annotator(matcher).annotate([doc.text])[0]
    marked = {c.slot: (c.canonical if c.linked and c.how != "codon" else c.typed) for c in concepts}
    spans = [s for _, s in kinded_spans(matcher, schema, marked, doc, stored)]
    offset = len(doc.title) + 1 if doc.title else 0
    abstract_spans = shift(spans, offset, len(doc.abstract))
    best = best_sentences(doc.abstract, abstract_spans, query, ("query",), "answer")
    return ResultRow(
        rank=hit.rank, pmid=hit.pmid, title=MarkedText(doc.title, tuple(shift(spans, 0, len(doc.title)))),
        abstract=MarkedText(doc.abstract, tuple(abstract_spans)),
        best=tuple(MarkedText(s.text, tuple(shift(abstract_spans, s.start, len(s.text)))) for s in best),
        fused=hit.score, bm25=hit.bm25, dense=hit.dense, answers=answer_candidates(spans), group=hit.group,
        concepts=hit.concepts, stages=hit.stages, year=doc.year, journal=doc.journal, authors=doc.authors,
        pub_types=doc.pub_types, in_kb=tuple(kb_records_citing(con, schema.name, [doc.pmid]).get(doc.pmid, ())),
    )


def open_topic(con: duckdb.DuckDBPyConnection, engine, matcher: Matcher, linker: QueryLinker,
               schema: RelationSchema, values: Mapping[str, str], curator: str = "",
               strategy: str | None = None) -> ScreenView:
    """Open a partial relation as a topic to screen (searching it the first time), its next card and figures.
    Keeping a topic's queue is bookkeeping of a search: no role is asked for it (a grade's is, :func:`grade`).

    Args:
        engine: the served retriever (searched only the first time the topic is opened).
        curator: who opened it first (kept with the topic).
        strategy: which unread candidate comes next (None: the topic's own, "highest" for a new one); a different
            one is kept as the topic's.
    """
    values = relation_values(schema, values)
    if not values:
        return ScreenView(schema, values, message=f"Type a partial relation ({', '.join(schema.query_types)}) to "
                          "screen its abstracts.")
    if strategy is not None and strategy not in STRATEGIES:
        return ScreenView(schema, values, message=f"Unknown screening order '{strategy}'; use one of "
                          f"{', '.join(STRATEGIES)}.")
    topic = kept.get_topic(con, schema, values)
    if topic is None:
        if problem := _keep_topic(con, engine, matcher, linker, schema, values, strategy or Strategy.HIGHEST.value,
                                  curator):
            return ScreenView(schema, values, message=problem)
        topic = kept.get_topic(con, schema, values)
    if strategy is not None and strategy != topic.strategy:
        kept.set_strategy(con, topic, strategy)
    return _view(con, matcher, schema, values, topic, strategy or topic.strategy)


def _view(con: duckdb.DuckDBPyConnection, matcher: Matcher, schema: RelationSchema, values: dict[str, str],
          topic: kept.Topic, strategy: str) -> ScreenView:
    entry = _entry(con, topic, strategy)
    pool, concepts = entry.pool, _concepts(topic.concepts)
    if len(pool) < 2:
        return ScreenView(schema, values, strategy, message="Fewer than two of this topic's abstracts are still in "
                          "the store: nothing to screen.", query=topic.query, concepts=concepts)
    gains, order = _reading(con, schema, values, pool.index())
    ranking = entry.rank(gains)
    # What the last grade moved: the ranking before it is the previous view's (kept by the entry).
    moved = moved_up(entry, entry.rank(np.where(np.arange(len(pool)) == order[-1], -1, gains)), ranking, order[-1]) \
        if order else ()
    relevant = [bool(gains[p] > 0) for p in order]
    found = curve(relevant)  # (read,)
    # The static order's expectation: what is known where read, else the model's belief, else the prevalence.
    prevalence = float(sum(relevant)) / len(relevant) if relevant else 0.0
    belief = ranking.probability if ranking.probability is not None else np.full(len(pool), prevalence)
    expected = np.where(gains >= 0, (gains > 0).astype(np.float64), belief)  # (candidates,)
    first = ranking.order[0] if ranking.order else None
    card = None if first is None else _card(con, matcher, schema, topic.query, concepts,
                                            _hit(pool.pmids[first], entry.hits[first]))
    return ScreenView(
        schema, values, strategy, query=topic.query, concepts=concepts, version=topic.version, mode=topic.mode,
        card=card, candidates=len(pool), read=len(order), found=int(sum(relevant)),
        curve=tuple(int(v) for v in found), static_curve=tuple(float(v) for v in np.cumsum(expected)),
        random_curve=tuple(float(v) for v in expected_random_curve(len(pool), float(expected.sum()))),
        remaining=remaining(relevant, len(pool), ranking.probability, gains < 0), moved=moved, fitted=ranking.fitted,
        rerank_ms=ranking.seconds * 1000.0,
    )


def grade(con: duckdb.DuckDBPyConnection, matcher: Matcher, who, view: ScreenView, pmid: str, grade: Grade,
          note: str = "") -> tuple[Decision, ScreenView]:
    """Record a grade of one of the topic's cards (a decision of its relation) and return the next view.

    The decision's provenance is the card's hit, where the served search had ranked it, and a ``screening``
    entry: the order it was drawn by, how many had been read, whether the learner had ranked it.

    Raises:
        AccessDeniedError, CurationError: as :func:`curation.workflows.curate.record_judgement`; nothing is written.
    """
    topic = kept.get_topic(con, view.schema, view.values)
    if topic is None:
        raise ValueError("grade: the view's topic is not kept; open it with open_topic first")
    row = view.card if view.card is not None and view.card.pmid == pmid else None
    if row is None:  # graded from elsewhere than the card: its hit as kept
        entry = _entry(con, topic, view.strategy)
        row = _hit(pmid, entry.hits[entry.pool.index()[pmid]]) if pmid in entry.pool.index() else None
    provenance = ""
    if row is not None:
        data = json.loads(decision_provenance(row, row.rank, topic.version, topic.mode, view.concepts))
        data["screening"] = {"strategy": view.strategy, "read_before": view.read, "candidates": view.candidates,
                             "ranked_by_learner": view.fitted, "next": view.card is not None and view.card.pmid == pmid}
        provenance = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    decision = record_judgement(con, None, who, view.schema, view.values, pmid, grade, note=note,
                                provenance=provenance)
    kept.touch_topic(con, topic)
    return decision, _view(con, matcher, view.schema, dict(view.values), topic, view.strategy)
