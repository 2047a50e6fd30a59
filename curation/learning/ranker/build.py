"""Update the ranker: the KB and the curators' decisions → a learned stage with its dev evidence, in seconds.

The one chain "Update the ranker" needs (the page's action and the job around it are not here):

1. the KB is split by gene (:func:`curation.learning.splits.kb_split`, the same hash as the encoder's builds) and
   the dev set is chosen as for them (:func:`curation.learning.holdout.choose_dev`: the KB's dev genes, else a
   held-out share of the decisions), the KB's dev queries joined by the decisions on dev genes;
   decisions on dev or test genes are never trained on
   (:func:`curation.learning.holdout.trainable`);
2. the train KB records and the trainable decisions become graded query lists over the served candidates
   (:mod:`curation.learning.ranker.training`) and a LambdaMART ranker is trained on them;
3. the dev queries are ranked by the concept search alone and with the ranker re-ordering its top N; the
   activation evidence is the gate's own (:func:`curation.learning.gate.evidence`: paired bootstrap interval of
   the per-query NDCG@10 gain) and is kept in the ranker's manifest, with the dev queries whose order changed most
   (:func:`changed_queries`: each one's documents with their ranks before and after).

**Topics** (:func:`topic_update`): when the curators' decisions of the schema grade :data:`MIN_TOPICS` or more topics
(a topic: one set of typed query values, e.g. a disease screened in "Screen this topic", or a gene + variant
searched on Curate) with at least one relevant grade each, the gate judges on held-out topics instead: the topics
are dealt into at most :data:`TOPIC_FOLDS` folds, each fold's topics are ranked by a ranker trained on the KB's
train records and every other topic's decisions, and the unit of the paired bootstrap is the topic (its NDCG@10
over the curator's grades, with and without the ranker). No topic's grades are in both a ranker's training and its
dev. The version kept is then trained on every topic. Decisions on the KB's test genes are never trained on, as
above (they are still judged as held-out topics, which reads them, never learns them). With three topics the
percentile interval excludes zero only when every held-out topic gains.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from curation.entities.matching import Matcher
from curation.learning.gate import METRIC, evidence
from curation.learning.holdout import TOPICS, choose_dev, decision_gene, trainable
from curation.learning.ranker.training import (
    DEPTH,
    CandidateLists,
    LabelledQuery,
    candidate_lists,
    decision_queries,
    kb_queries,
    merge_queries,
    ranked_runs,
    train_ranker,
)
from curation.learning.served_fusion import ServedSearch
from curation.learning.splits import gene_part, kb_split, unit_hash
from curation.learning.statistics import per_query
from curation.ranking.features import PRODUCT_FEATURES, Signals
from curation.ranking.model import RankerModel
from curation.records import Decision, Document, KBRecord
from curation.schemas import RelationSchema
from curation.versions.manifest import GateEvidence

BASELINE = "concept search alone"
MIN_TOPICS = 3  # graded topics before the gate judges leave-topic-out (a realistic session: 3 topics x 30 grades)
TOPIC_FOLDS = 5
CHANGED_SHOWN = 5  # dev queries kept per version, those whose top 10 moved most
MOVES_SHOWN = 5  # documents kept per query, those that moved most


def _ranks(run: Mapping[str, float]) -> dict[str, int]:
    return {p: r for r, p in enumerate(sorted(run, key=run.get, reverse=True), start=1)}


def changed_queries(before: Mapping[str, Mapping[str, float]], after: Mapping[str, Mapping[str, float]],
                    queries: Mapping[str, LabelledQuery], scores: tuple[Mapping[str, float], Mapping[str, float]],
                    top: int = 10) -> list[dict]:
    """The dev queries whose top ``top`` moved most between two runs (score 1/rank), largest move first.

    Each entry: the query's slot values, its NDCG@10 before and after, and the documents that moved most with
    their ranks before and after (None: not in the list) and their gain.
    """
    out = []
    for key, query in queries.items():
        old, new = _ranks(before.get(key, {})), _ranks(after.get(key, {}))
        shown = [p for p in {**old, **new} if min(old.get(p, top + 1), new.get(p, top + 1)) <= top]
        moves = sorted(((abs(old.get(p, 0) - new.get(p, 0)), p) for p in shown if old.get(p) != new.get(p)),
                       reverse=True)
        if not moves:
            continue
        out.append({"values": dict(query.values), "moved": sum(m for m, _ in moves),
                    "ndcg10_before": round(scores[0].get(key, 0.0), 4),
                    "ndcg10_after": round(scores[1].get(key, 0.0), 4),
                    "documents": [{"pmid": p, "before": old.get(p), "after": new.get(p),
                                   "gain": int(query.gains.get(p, 0))} for _, p in moves[:MOVES_SHOWN]]})
    return sorted(out, key=lambda q: -q["moved"])[:CHANGED_SHOWN]


@dataclass(frozen=True)
class RankerUpdate:
    """What one update produced: the ranker, its dev evidence, where it was saved, and how long each step took."""

    model: RankerModel
    evidence: GateEvidence
    folder: Path | None
    held_out_decisions: int
    seconds: Mapping[str, float]


def update_ranker(
    schema: RelationSchema, records: Sequence[KBRecord], decisions: Sequence[Decision],
    documents: Mapping[str, Document], matcher: Matcher, search: ServedSearch, engine, signals: Signals | None,
    folder: Path | None = None, depth: int = DEPTH, features: Sequence[str] = PRODUCT_FEATURES, seed: int = 13,
    params: Mapping[str, object] | None = None,
) -> RankerUpdate:
    """Train a ranker from the KB and the decisions and measure it on dev (see the module docstring).

    Args:
        engine: the served retriever (its learned stage, if any, is ignored: candidates are the concept search's).
        signals: the store's evidence about documents (:class:`curation.ranking.signals.StoreSignals`).
        folder: where to save it (None: not saved).
        params: LightGBM settings over :data:`curation.learning.ranker.training.PARAMS` (a benchmark's grid).

    Raises:
        ValueError: nothing to learn from (no train query has both a relevant and a lower-graded candidate).
    """
    clock = time.perf_counter()
    seconds: dict[str, float] = {}
    split = kb_split(schema, records, documents, matcher, seed)
    topics = judged_topics(schema, decisions, documents)
    if len(topics) >= MIN_TOPICS:
        return _topic_update(schema, split.train, decisions, topics, search, engine, signals, folder, depth, features,
                             seed, params)
    choice = choose_dev(schema, split, decisions, documents, seed, with_dev_decisions=True)
    kept, held = trainable(schema, decisions, choice, seed)
    queries = merge_queries(kb_queries(schema, split.train), decision_queries(schema, kept))
    lists = candidate_lists(search, engine, queries, signals, depth)
    seconds["candidates"] = time.perf_counter() - clock
    model, seconds["train"] = train_ranker(lists, features, depth, params, seed=seed)
    clock = time.perf_counter()
    dev = choice.dev
    judged = {q: LabelledQuery(v, dev.qrels[q]) for q, v in dev.values.items()
              if v and q in dev.qrels and any(r > 0 for r in dev.qrels[q].values())}
    dev_lists = candidate_lists(search, engine, judged, signals, depth)
    qrels = {q: dict(judged[q].gains) for q in judged}
    served, learned = ranked_runs(dev_lists, None), ranked_runs(dev_lists, model)
    if qrels:
        before = per_query({q: served.get(q, {}) for q in qrels}, qrels, METRIC)  # no candidate: scores 0 in both
        after = per_query({q: learned.get(q, {}) for q in qrels}, qrels, METRIC)
    else:  # no dev query with a relevant document (a small KB, few held-out decisions): nothing to compare on
        before, after = {}, {}
    found = evidence(after, before, BASELINE, choice.source, seed)
    found = replace(found, system=f"served concept search + learned ranker (top {depth}) vs {BASELINE}")
    seconds["dev"] = time.perf_counter() - clock
    changed = changed_queries(served, learned, judged, (before, after))
    return _kept(model, found, changed, {"kb_records": len(split.train), "decisions_trained_on": len(kept),
                                         "decisions_held_out": held, "dev_source": choice.source}, folder, seconds)


def _kept(model: RankerModel, found: GateEvidence, changed: list[dict], trained_on: Mapping[str, object],
          folder: Path | None, seconds: Mapping[str, float]) -> RankerUpdate:
    """The update: ``model`` with its dev evidence, changed queries and what it learned from in its manifest, saved
    to ``folder`` (None: not saved)."""
    model = RankerModel(model.booster, replace(model.manifest, dev=asdict(found), changed=changed,
                                               trained_on={**model.manifest.trained_on, **trained_on}))
    if folder is not None:
        model.save(folder)
    return RankerUpdate(model, found, folder, int(trained_on["decisions_held_out"]),
                        {k: round(v, 3) for k, v in seconds.items()})


def judged_topics(schema: RelationSchema, decisions: Sequence[Decision], documents: Mapping[str, Document]
                  ) -> dict[str, LabelledQuery]:
    """The schema's graded topics (query key → its grades, resolved as training reads them) with a relevant grade."""
    graded = decision_queries(schema, [d for d in decisions if d.pmid in documents])
    return {k: q for k, q in graded.items() if any(g > 0 for g in q.gains.values())}


def topic_folds(keys: Sequence[str], seed: int = 13, folds: int = TOPIC_FOLDS) -> list[list[str]]:
    """The topics dealt into at most ``folds`` folds, in a hashed order (a topic's fold depends on the topics)."""
    ordered = sorted(keys, key=lambda k: (unit_hash(k, seed, "topics"), k))
    n = min(folds, len(ordered))
    return [ordered[i::n] for i in range(n)]


def _select(lists: CandidateLists, keys: set[str], gains: Mapping[str, LabelledQuery] | None = None
            ) -> CandidateLists:
    """The lists of ``keys`` only; with ``gains``, their labels re-read from those queries (0: ungraded)."""
    keep = [(k, s) for k, s in lists.lists() if k in keys]
    index = np.concatenate([np.arange(s.start, s.stop) for _, s in keep]) if keep else np.zeros(0, dtype=int)
    pmids = [lists.pmids[i] for i in index]
    labels = lists.gains[index]
    if gains is not None:
        labels = np.asarray([gains[k].gains.get(p, 0) for k, s in keep for p in lists.pmids[s]], dtype=np.int32)
    rows = lists.rows[index] if len(lists.rows) else lists.rows
    return CandidateLists([k for k, _ in keep], [s.stop - s.start for _, s in keep], rows, labels, pmids,
                          lists.seconds)


def _topic_update(schema: RelationSchema, train_records: Sequence[KBRecord], decisions: Sequence[Decision],
                  topics: Mapping[str, LabelledQuery], search: ServedSearch, engine, signals: Signals | None,
                  folder: Path | None, depth: int, features: Sequence[str], seed: int,
                  params: Mapping[str, object] | None = None) -> RankerUpdate:
    """The update judged leave-topic-out (module docstring, **Topics**)."""
    clock = time.perf_counter()
    seconds: dict[str, float] = {}
    own = [d for d in decisions if d.schema == schema.name]

    def on_test_gene(d: Decision) -> bool:
        gene = decision_gene(schema, d)
        return bool(gene) and gene_part(gene, seed) == "test"

    kept = [d for d in own if not on_test_gene(d)]
    held = sum(1 for d in own if on_test_gene(d) and d.superseded_by is None)
    queries = merge_queries(kb_queries(schema, train_records), decision_queries(schema, kept))
    lists = candidate_lists(search, engine, {**{k: q for k, q in topics.items() if k not in queries}, **queries},
                            signals, depth)
    seconds["candidates"] = time.perf_counter() - clock
    clock = time.perf_counter()
    served, learned = {}, {}
    for fold in topic_folds(sorted(topics), seed):
        out = set(fold)
        try:
            model, _ = train_ranker(_select(lists, set(queries) - out), features, depth, params, seed=seed)
        except ValueError:  # the other topics teach no order: the fold's topics are served as before
            model = None
        judged = _select(lists, out, topics)
        served.update(ranked_runs(judged, None))
        learned.update(ranked_runs(judged, model))
    qrels = {k: dict(q.gains) for k, q in topics.items() if k in served}
    before = per_query({k: served[k] for k in qrels}, qrels, METRIC) if qrels else {}
    after = per_query({k: learned[k] for k in qrels}, qrels, METRIC) if qrels else {}
    found = evidence(after, before, BASELINE, TOPICS, seed, minimum=MIN_TOPICS, unit="held-out topics")
    found = replace(found, system=f"served concept search + learned ranker (top {depth}) vs {BASELINE}; each topic "
                                  "ranked by a ranker trained without its grades")
    seconds["dev"] = time.perf_counter() - clock
    model, seconds["train"] = train_ranker(_select(lists, set(queries)), features, depth, params, seed=seed)
    changed = changed_queries(served, learned, topics, (before, after))
    return _kept(model, found, changed, {"kb_records": len(train_records), "decisions_trained_on": len(kept),
                                         "decisions_held_out": held, "dev_source": TOPICS, "topics": len(topics)},
                 folder, seconds)
