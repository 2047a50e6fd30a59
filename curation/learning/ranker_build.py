"""Update the ranker: the KB and the curators' decisions → a learned stage with its dev evidence, in seconds.

The one chain "Update the ranker" needs (the page's action and the job around it are not here):

1. the KB is split by gene (:func:`curation.learning.splits.kb_split`, the same hash as the encoder's builds) and
   the dev set is chosen as for them (:func:`curation.learning.holdout.choose_dev`: the KB's dev genes, else a
   held-out share of the decisions), the KB's dev queries joined by the decisions on dev genes;
   decisions on dev or test genes are never trained on
   (:func:`curation.learning.holdout.trainable`);
2. the train KB records and the trainable decisions become graded query lists over the served candidates
   (:mod:`curation.learning.ranker_training`) and a LambdaMART ranker is trained on them;
3. the dev queries are ranked by the concept search alone and with the ranker re-ordering its top N; the
   activation evidence is the gate's own (:func:`curation.learning.gate.evidence`: paired bootstrap interval of
   the per-query NDCG@10 gain) and is kept in the ranker's manifest, with the dev queries whose order changed most
   (:func:`changed_queries`: each one's documents with their ranks before and after).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from curation.entities.matching import Matcher
from curation.learning.gate import METRIC, evidence
from curation.learning.holdout import choose_dev, trainable
from curation.learning.ranker_training import (
    DEPTH,
    LabelledQuery,
    candidate_lists,
    decision_queries,
    kb_queries,
    merge_queries,
    ranked_runs,
    train_ranker,
)
from curation.learning.served_fusion import ServedSearch
from curation.learning.splits import kb_split
from curation.learning.statistics import per_query
from curation.ranking.features import PRODUCT_FEATURES, Signals
from curation.ranking.model import RankerModel
from curation.records import Decision, Document, KBRecord
from curation.schemas import RelationSchema
from curation.versions.manifest import GateEvidence

BASELINE = "concept search alone"
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
) -> RankerUpdate:
    """Train a ranker from the KB and the decisions and measure it on dev (see the module docstring).

    Args:
        engine: the served retriever (its learned stage, if any, is ignored: candidates are the concept search's).
        signals: the store's evidence about documents (:class:`curation.ranking.signals.StoreSignals`).
        folder: where to save it (None: not saved).

    Raises:
        ValueError: nothing to learn from (no train query has both a relevant and a lower-graded candidate).
    """
    clock = time.perf_counter()
    seconds: dict[str, float] = {}
    split = kb_split(schema, records, documents, matcher, seed)
    choice = choose_dev(schema, split, decisions, documents, seed, with_dev_decisions=True)
    kept, held = trainable(schema, decisions, choice, seed)
    queries = merge_queries(kb_queries(schema, split.train), decision_queries(schema, kept))
    lists = candidate_lists(search, engine, queries, signals, depth)
    seconds["candidates"] = time.perf_counter() - clock
    model, seconds["train"] = train_ranker(lists, features, depth, seed=seed)
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
    model = RankerModel(model.booster, replace(model.manifest, dev=asdict(found), changed=changed, trained_on={
        **model.manifest.trained_on, "kb_records": len(split.train), "decisions_trained_on": len(kept),
        "decisions_held_out": held, "dev_source": choice.source}))
    if folder is not None:
        model.save(folder)
    return RankerUpdate(model, found, folder, held, {k: round(v, 3) for k, v in seconds.items()})
