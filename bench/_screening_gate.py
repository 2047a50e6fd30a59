"""Screening grades across topics: does "Update the ranker" activate after a realistic session, and only when it helps?

A simulated session: a curator screens :data:`GRADES` candidates of each of :data:`TOPICS_PER_SESSION` topics of one
schema (the same slot and answer: e.g. three diseases, the chemical missing) in the product learner's order, grading
each from the answer key (gain 2: complete, 1: partial, else not relevant). Then the product's update runs on those
decisions alone (:func:`curation.learning.ranker.build.update_ranker`: no KB, so the gate judges leave-topic-out) and
its verdict is read. Per split:

- ``session``: the first session, fixed before any run: the first :data:`TOPICS_PER_SESSION` topics (by topic id) of
  the schema with the most topics;
- ``activation_rate``: over :data:`SESSIONS` seeded random sessions;
- ``false_activation_rate``: the same sessions with each topic's grades shuffled among its read candidates (a ranker
  that learns from them can only learn noise, so an activation is a false one);
- ``served_gain_when_activated``: for the activated sessions, the kept ranker's mean NDCG@10 gain (top 50, answer
  key) on the schema's other topics of the split, never graded in the session: whether activating was right.

On dev, :func:`leaf_grid` also runs the sessions with smaller LightGBM leaves (``min_child_samples``, :data:`LEAVES`;
the product's 50 was chosen on many-query benchmarks and lets a 3 x 30 session's trees make no split): a setting
would replace the product's only if it activates more often with no false activation and a positive served gain
on the other topics whenever it activates.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import numpy as np

from bench import _concepts
from curation.grades import Grade
from curation.learning.ranker.build import update_ranker
from curation.learning.ranker.training import PARAMS, LabelledQuery, candidate_lists, ranked_runs
from curation.learning.served_fusion import ServedSearch
from curation.learning.statistics import per_query
from curation.ranking.features import query_key
from curation.records import Decision
from curation.screening.simulation import simulate, static_prior

GRADES = 30
TOPICS_PER_SESSION = 3
SESSIONS = 20
GRADE_OF_GAIN = {2: Grade.COMPLETE, 1: Grade.PARTIAL, 0: Grade.NOT_RELEVANT}
LEAVES = (50, 20, 10, 5)
GRID_SESSIONS = 10


def _schema(topic) -> _concepts.BenchSchema:
    return _concepts.BenchSchema(f"{topic.slot}_{topic.answer}_topic", (topic.slot,), "{" + topic.slot + "}",
                                 topic.answer)


def _session_grades(entry: Mapping, schema, shuffled: bool, seed: int) -> list[Decision]:
    """The first :data:`GRADES` reads of the learner on the topic's whole-store pool, as decisions."""
    topic = entry["topic"]
    pool, gains, _ = entry["store"]
    read = list(simulate(pool, gains, static_prior(gains)).order[:GRADES])
    grades = [int(gains[i]) for i in read]
    if shuffled:
        random.Random(f"{topic.topic_id}:{seed}").shuffle(grades)
    values = ((topic.slot, topic.name),)
    return [Decision(n, "sim", schema.name, topic.name, values, pool.pmids[i], GRADE_OF_GAIN[g])
            for n, (i, g) in enumerate(zip(read, grades, strict=True), start=1)]


def _served_gain(model, others: Sequence[Mapping], search: ServedSearch, engine, signals) -> float:
    """The ranker's mean NDCG@10 gain over the served order on topics the session never graded (answer key)."""
    queries = {query_key({e["topic"].slot: e["topic"].name}): LabelledQuery({e["topic"].slot: e["topic"].name},
                                                                           dict(e["topic"].relevant))
               for e in others}
    lists = candidate_lists(search, engine, queries, signals)
    qrels = {k: dict(q.gains) for k, q in queries.items() if k in set(lists.keys)}
    if not qrels:
        return 0.0
    before = per_query(ranked_runs(lists, None), qrels, "ndcg@10")
    after = per_query(ranked_runs(lists, model), qrels, "ndcg@10")
    return float(np.mean([after[k] - before[k] for k in qrels]))


def _run(session: Sequence[Mapping], others: Sequence[Mapping], bench: _concepts.ConceptBench, engine, signals,
         shuffled: bool, seed: int, params: Mapping | None = None) -> dict:
    schema = _schema(session[0]["topic"])
    decisions = [d for entry in session for d in _session_grades(entry, schema, shuffled, seed)]
    decisions = [Decision(n, d.curator, d.schema, d.query, d.query_entities, d.pmid, d.grade)
                 for n, d in enumerate(decisions, start=1)]

    def documents(pmids):
        return {p: bench.documents[p] for p in pmids if p in bench.documents}

    search = ServedSearch(bench.linker, bench.matcher, bench.source, documents, schema)
    update = update_ranker(schema, [], decisions, bench.documents, bench.matcher, search, engine, signals,
                           params=params)
    found = update.evidence
    out = {"topics": [e["topic"].topic_id for e in session], "dev_source": found.dev_source,
           "activated": int(found.improved), "gain": found.mean_delta, "low": found.low, "high": found.high,
           "verdict": found.verdict}
    if found.improved and others:
        out["served_gain_other_topics"] = round(_served_gain(update.model, others, search, engine, signals), 4)
    return out


def measure(pools: Mapping[str, dict], bench: _concepts.ConceptBench, engine, signals, sessions: int = SESSIONS,
            params: Mapping | None = None) -> dict:
    """The gate after simulated sessions on ``pools`` (one split's topics), as the module docstring says."""
    by_schema: dict[str, list[Mapping]] = {}
    for topic_id in sorted(pools):
        entry = pools[topic_id]
        if "store" in entry:
            by_schema.setdefault(_schema(entry["topic"]).name, []).append(entry)
    name, entries = max(by_schema.items(), key=lambda kv: (len(kv[1]), kv[0]))
    if len(entries) < TOPICS_PER_SESSION:
        return {"error": f"{name}: {len(entries)} topics, fewer than a session's {TOPICS_PER_SESSION}"}

    def others(session):
        chosen = {e["topic"].topic_id for e in session}
        return [e for e in entries if e["topic"].topic_id not in chosen]

    first = entries[:TOPICS_PER_SESSION]
    rng = random.Random(13)
    drawn = [rng.sample(entries, TOPICS_PER_SESSION) for _ in range(sessions)]
    true = [_run(s, others(s), bench, engine, signals, False, i, params) for i, s in enumerate(drawn)]
    noise = [_run(s, [], bench, engine, signals, True, i, params) for i, s in enumerate(drawn)]
    helped = [r["served_gain_other_topics"] for r in true if "served_gain_other_topics" in r]
    return {
        "schema": name, "topics": len(entries), "grades_per_topic": GRADES, "topics_per_session": TOPICS_PER_SESSION,
        "session": _run(first, others(first), bench, engine, signals, False, 0, params),
        "sessions": sessions,
        "activation_rate": round(float(np.mean([r["activated"] for r in true])), 4),
        "false_activation_rate": round(float(np.mean([r["activated"] for r in noise])), 4),
        "served_gain_when_activated": round(float(np.mean(helped)), 4) if helped else None,
        "runs": true, "shuffled_runs": noise,
    }


def leaf_grid(pools: Mapping[str, dict], bench: _concepts.ConceptBench, engine, signals) -> dict:
    """Dev only: the sessions under each leaf size of :data:`LEAVES`, and the choice (module docstring)."""
    rows = []
    for leaf in LEAVES:
        found = measure(pools, bench, engine, signals, GRID_SESSIONS, {"min_child_samples": leaf})
        rows.append({"min_child_samples": leaf, **{k: found.get(k) for k in (
            "activation_rate", "false_activation_rate", "served_gain_when_activated")}})
    safe = [r for r in rows if r["false_activation_rate"] == 0 and (r["served_gain_when_activated"] or 0) > 0]
    chosen = max(safe, key=lambda r: r["activation_rate"])["min_child_samples"] if safe else PARAMS[
        "min_child_samples"]
    return {"grid": rows, "chosen_min_child_samples": chosen,
            "product_equals_choice": chosen == PARAMS["min_child_samples"]}


def report(splits: Mapping[str, dict], bench, engine, signals) -> dict:
    """The cross-topic update after simulated sessions (this module): per split, and the dev grid."""
    out: dict[str, object] = {"dev_grid": leaf_grid(splits["dev"], bench, engine, signals)}
    out.update({s: measure(p, bench, engine, signals) for s, p in splits.items()})
    return out
