"""Retrieval evaluation: NDCG and MAP from ranx, and EDEL's EntityRecall.

``evaluate(run, qrels, ...)`` takes the one hit shape (:data:`index.hits.Run`, ``{qid: {doc_id: score}}``)
and returns ``{"ndcg@10": ..., "map@50": ..., "entity_recall@10": ...}`` as fractions in
[0, 1], averaged over queries. It is the same function for the CLI, the benchmarks and the app.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from index.hits import Run, ranked

Qrels = Mapping[str, Mapping[str, int]]  # query id -> doc id -> relevance (> 0: relevant)
CUTOFFS = (10, 50)


@dataclass(frozen=True)
class AnswerKey:
    """What EntityRecall needs (EDEL §5.3).

    Attributes:
        answers: per query, the concepts of its answer entities (from the KB records it groups).
        query_concepts: per query, the concepts of its query gene/protein (any synonym of it).
        doc_concepts: per document, the concepts mentioned in it (gold annotations or the matcher).
    """

    answers: Mapping[str, Collection[str]]
    query_concepts: Mapping[str, Collection[str]]
    doc_concepts: Mapping[str, Collection[str]]

    def answers_of(self, qid: str) -> set[str]:
        return set(self.answers.get(qid, ()))

    def answers_in(self, qid: str, doc: str) -> set[str]:
        """The query's answers this document mentions, if it also mentions the query gene."""
        concepts = set(self.doc_concepts.get(doc, ()))
        if not set(self.query_concepts.get(qid, ())) & concepts:
            return set()
        return self.answers_of(qid) & concepts


@dataclass(frozen=True)
class MatcherAnswerKey:
    """EntityRecall judged by the text matcher (for corpora without gold annotations).

    Attributes:
        answers: per query, the answer entities as (value, kind).
        query_entities: per query, the gene/protein as (value, kind).
        matched: g(e, d): ``matched(value, kind, doc_id) -> bool``.
    """

    answers: Mapping[str, Collection[tuple[str, str]]]
    query_entities: Mapping[str, Collection[tuple[str, str]]]
    matched: Callable[[str, str, str], bool]

    def answers_of(self, qid: str) -> set[str]:
        return {value for value, _ in self.answers.get(qid, ())}

    def answers_in(self, qid: str, doc: str) -> set[str]:
        if not any(self.matched(value, kind, doc) for value, kind in self.query_entities.get(qid, ())):
            return set()
        return {value for value, kind in self.answers.get(qid, ()) if self.matched(value, kind, doc)}


def entity_recall(run: Run, key: AnswerKey | MatcherAnswerKey, k: int) -> float:
    """Mean over queries of the share of answer entities found in the top-k documents.

    An answer counts as found when some top-k document mentions it and also mentions the
    query gene/protein (a document likely describing a relation between the two). Queries
    without answers are left out of the mean.
    """
    per_query = entity_recall_per_query(run, key, k)
    return sum(per_query.values()) / len(per_query) if per_query else 0.0


def entity_recall_per_query(run: Run, key: AnswerKey | MatcherAnswerKey, k: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for qid in key.answers:
        answers = key.answers_of(qid)
        if not answers:
            continue
        found: set[str] = set()
        for doc, _ in ranked(run.get(qid, {}))[:k]:
            found |= key.answers_in(qid, doc)
        out[qid] = len(found) / len(answers)
    return out


def ir_metrics(run: Run, qrels: Qrels, cutoffs: Sequence[int] = CUTOFFS) -> dict[str, float]:
    """NDCG@k and MAP@k with ranx; queries in ``qrels`` missing from ``run`` score 0."""
    from ranx import Qrels as RanxQrels
    from ranx import Run as RanxRun
    from ranx import evaluate as ranx_evaluate

    judged = {q: {d: int(r) for d, r in docs.items() if r > 0} for q, docs in qrels.items()}
    judged = {q: docs for q, docs in judged.items() if docs}
    if not judged:
        raise ValueError("no query has a relevant document; nothing to evaluate")
    # ranx needs every judged query in the run; an empty result list is scored 0.
    sentinel = "\x00no-hit"
    filled = {q: (dict(run[q]) if run.get(q) else {sentinel: 0.0}) for q in judged}
    metrics = [f"{m}@{k}" for k in cutoffs for m in ("ndcg", "map")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = ranx_evaluate(RanxQrels(judged), RanxRun(filled), metrics, make_comparable=True)
    if isinstance(scores, float):
        scores = {metrics[0]: scores}
    return {name: float(scores[name]) for name in metrics}


def evaluate(
    run: Run, qrels: Qrels, answer_key: AnswerKey | MatcherAnswerKey | None = None, cutoffs: Sequence[int] = CUTOFFS
) -> dict[str, float]:
    """NDCG, MAP and (with an answer key) EntityRecall at each cutoff."""
    out = ir_metrics(run, qrels, cutoffs)
    if answer_key is not None:
        for k in cutoffs:
            out[f"entity_recall@{k}"] = entity_recall(run, answer_key, k)
    return out
