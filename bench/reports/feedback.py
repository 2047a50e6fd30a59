"""bench/results/feedback.json -> the feedback-loop section of docs/BENCHMARKS.md."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bench.reports.ranker import RankerDev, RankerTest, ranker_lines, ranker_test_lines
from bench.reports.ranker_curve import LearningCurve, curve_lines
from bench.reports.ranker_session import SessionFeedback, session_lines
from bench.reports.readers import Forms, Goals, at_cutoffs, reader, with_forms_gathered
from bench.reports.text import fmt, forms_tables, goals_line, headline_table
from bench.reports.v2 import Counts, Leaks
from curation.versions.typed_json import OPTIONAL

FEEDBACK_LABELS = {
    "before": "before (zero-shot MiniLM, active)",
    "after_decisions": "after retraining on the decisions alone",
    "after_kb": "after retraining on the KB alone",
    "after_kb_and_decisions": "after retraining on KB + decisions",
}



@dataclass(frozen=True)
class Params:
    schema: str
    epochs: int
    batch_size: int
    learning_rate: object  # printed as written
    max_seq_length: int
    per_class: int
    max_steps: int
    seed: int
    queries_per_kind: int
    curator_kinds: tuple[str, ...]
    curator_form: str
    judged_per_query: int
    base_model: str
    cpu_count: int
    python: str
    statistics: str
    load_average_at_start: float | None = field(default=None, metadata=OPTIONAL)
    load_average: float | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class Curator:
    """The simulated curator: decisions per "kind:grade" and queries per kind."""

    decisions: Mapping[str, int]
    seconds: float
    record_decision_ms_p50: float | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class Job:
    """One real retraining job: its training set, the worker's timings and the gate's verdict."""

    job: int
    version: str
    message: str
    training: Mapping[str, object]  # pairs, the build's report, decisions used
    worker_timings_s: Mapping[str, float]
    device: str
    dev_metrics: Mapping[str, object]
    fusion: str | None = field(default=None, metadata=OPTIONAL)
    activated: bool | None = field(default=None, metadata=OPTIONAL)
    verdict: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class ServedFusion:
    """The dense share the worker chose for a version on its dev split (the version's serving policy)."""

    dense_share: float
    metric: str
    dev_scores: Mapping[str, float]
    queries: int
    dev_source: str
    rerank: bool
    rerank_k: int
    rerank_dev_scores: Mapping[str, float]
    rerank_p95_ms: float | None
    rerank_device: str
    rerank_gpu_only: bool
    rerank_rule: str


@dataclass(frozen=True)
class ServedGain:
    after: str
    before: str
    mean_difference: float
    ci95: tuple[float, float]
    queries: int


@dataclass(frozen=True)
class QueueParams:
    schema: str
    epochs: int
    batch_size: int
    learning_rate: float
    max_seq_length: int
    per_class: int
    max_steps: int
    seed: int
    rounds: int
    decisions_per_round: int
    pool: int
    queue_depth: int
    cuda: bool
    cpu_count: int
    evaluation: str


@dataclass(frozen=True)
class CurvePoint:
    """One round of one queue order: the decisions so far and the version built from them."""

    round: int
    decisions: int
    relevant: int
    version: str
    activated: bool
    ndcg_at_10: float
    seconds: float


@dataclass(frozen=True)
class QueueOrders:
    """``bench/feedback.py --queue-orders``: NDCG@10 after each round of decisions, per queue order."""

    date: str
    params: QueueParams
    before_ndcg_at_10: float
    decisions_to_gain: Mapping[str, int | None]
    best_gain: Mapping[str, float]
    gain_target: object  # printed as written
    curves: Mapping[str, tuple[CurvePoint, ...]]
    seconds: float


@dataclass(frozen=True)
class Feedback:
    """bench/feedback.py's result: retraining on a simulated curator's decisions, before and after."""

    date: str
    benchmark: str
    goals: Goals
    leaks: Leaks
    params: Params
    counts: Counts
    curator: Curator
    forms: Forms
    forms_served: Forms
    timings_s: Mapping[str, float]
    jobs: Mapping[str, Job] = field(default_factory=dict, metadata=OPTIONAL)
    fusions: Mapping[str, str] | None = field(default=None, metadata=OPTIONAL)
    forms_text_hybrid: Forms | None = field(default=None, metadata=OPTIONAL)
    served_gain: ServedGain | None = field(default=None, metadata=OPTIONAL)
    served_fusions: Mapping[str, ServedFusion | None] | None = field(default=None, metadata=OPTIONAL)
    queue_orders: QueueOrders | None = field(default=None, metadata=OPTIONAL)
    ranker_dev: RankerDev | None = field(default=None, metadata=OPTIONAL)
    session_feedback: SessionFeedback | None = field(default=None, metadata=OPTIONAL)
    learning_curve: LearningCurve | None = field(default=None, metadata=OPTIONAL)
    ranker_test: RankerTest | None = field(default=None, metadata=OPTIONAL)


def _prepare(data: object) -> object:
    """Metric keys gathered in the forms; ``ndcg@10`` spelled as a field in the queue orders."""
    if not isinstance(data, dict):
        return data
    out = dict(with_forms_gathered(data))
    queue = out.get("queue_orders")
    if isinstance(queue, dict):
        curves = queue.get("curves")
        if isinstance(curves, dict):
            queue = {**queue, "curves": {order: [at_cutoffs(pt) for pt in points] if isinstance(points, list)
                                         else points for order, points in curves.items()}}
        out["queue_orders"] = at_cutoffs(queue)
    return out


read = reader("feedback", Feedback, _prepare)


def feedback_section(data: Feedback) -> list[str]:
    params, curator, t = data.params, data.curator, data.timings_s
    decisions = curator.decisions
    complete = sum(v for k, v in decisions.items() if k.endswith(":complete"))
    rejected = sum(v for k, v in decisions.items() if k.endswith(":not_relevant"))
    judged = ", ".join(f"{decisions.get(f'queries_{k}', 0)} {k}" for k in params.curator_kinds)
    start = params.load_average_at_start
    lines = [
        "## The feedback loop on benchmark v2 (`bench/feedback.py`)",
        "",
        f"Run {data.date} on {params.cpu_count} CPU cores (load average "
        f"{fmt(start, 1) + ' at the start, ' if start is not None else ''}"
        f"{fmt(params.load_average, 1)} at the end: timings are inflated when other work shared the cores). "
        f"A simulated curator typed {judged} train queries with the KB's names and judged the served "
        f"top-{params.judged_per_query} with the gold labels: {complete} complete, {rejected} not relevant "
        f"(record_decision p50 {fmt(curator.record_decision_ms_p50, 1)} ms). Each system after `before` is a "
        f"real retraining job (worker process) from the base model: {params.epochs} epoch(s), batch "
        f"{params.batch_size}, lr {params.learning_rate}, sequences of {params.max_seq_length} tokens, "
        f"schema {params.schema}; the KB is the train split's gene + disease records "
        f"({data.counts.kb_train_records}).",
        "",
    ]
    lines += goals_line(data.goals)
    lines += ["Dense retriever, every kind pooled:", ""]
    systems = [s for s in FEEDBACK_LABELS if s in (FEEDBACK_LABELS if data.fusions is None else data.fusions)]
    lines += headline_table(data.forms, systems, FEEDBACK_LABELS)
    if data.forms_text_hybrid is not None:
        lines += ["Served ranking (the Curate page's concept search with the dense share the worker chose for "
                  "the version on its dev split), canonical form:", ""]
        lines += forms_tables(data.forms_served, systems, FEEDBACK_LABELS, form_names=("canonical",))
        gain = data.served_gain
        if gain:
            lines += [f"Served NDCG@10, {gain.after} − {gain.before} per query ({gain.queries} test "
                      f"queries): {fmt(gain.mean_difference, 4)}, 95% bootstrap interval "
                      f"[{fmt(gain.ci95[0], 4)}, {fmt(gain.ci95[1], 4)}].", ""]
        lines += ["Text hybrid (rendered query text, the version's text fusion), every kind pooled:", ""]
        lines += headline_table(data.forms_text_hybrid, systems, FEEDBACK_LABELS)
    else:
        lines += ["Served ranking (hybrid with the fusion the worker chose on its dev split), every kind pooled:", ""]
        lines += headline_table(data.forms_served, systems, FEEDBACK_LABELS)
        lines += forms_tables(data.forms_served, systems, FEEDBACK_LABELS, form_names=("canonical",))
    jobs = data.jobs
    shares = data.served_fusions or {}
    lines += ["| job | training pairs | train + index + eval (s) | click → serving (s) | text fusion | "
              "served dense share (dev) |", "| --- | ---: | ---: | ---: | --- | --- |"]
    for name, job in jobs.items():
        share = shares.get(name)
        chosen = f"{share.dense_share:g} ({share.queries} dev queries)" if share else "–"
        lines.append(f"| {name} | {job.training['pairs']} | {fmt(job.worker_timings_s.get('total'), 0)} | "
                     f"{fmt(t.get(f'{name}_click_to_serving'), 0)} | {job.fusion or '–'} | {chosen} |")
    lines += [
        "",
        f"Click to serving (KB + decisions, from the Retrain call until the new version is active with its "
        f"retriever loaded, or the gate kept it inactive): {fmt(t.get('click_to_serving'), 0)} s.",
        "",
    ]
    for name, job in jobs.items():
        if job.activated is not None:
            lines += [f"Gate, {name} ({'activated' if job.activated else 'not activated'}): "
                      f"{job.verdict or job.message}", ""]
    return (lines + ranker_lines(data.ranker_dev) + ranker_test_lines(data.ranker_test)
            + curve_lines(data.learning_curve) + session_lines(data.session_feedback)
            + queue_orders_lines(data.queue_orders))


def queue_orders_lines(q: QueueOrders | None) -> list[str]:
    """The annotation queue's orders (``bench/feedback.py --queue-orders``): NDCG@10 after each round."""
    if not q:
        return []
    p = q.params
    lines = [
        "### Which order should the annotation queue ask in? (`bench/feedback.py --queue-orders`)",
        "",
        f"Run {q.date} ({'GPU' if p.cuda else str(p.cpu_count) + ' CPU cores, no GPU'}). "
        f"From the zero-shot version (served NDCG@10 {fmt(q.before_ndcg_at_10, 4)}), a simulated annotator grades "
        f"{p.decisions_per_round} pairs per round with the gold labels, taken from the Annotate page's queue over "
        f"{p.pool} train relations (its top {p.queue_depth} each) in each order; a real retraining job "
        f"(KB + decisions, {p.epochs} epoch(s), max steps {p.max_steps or 'none'}) follows each round and the "
        f"version it built is evaluated: {p.evaluation}.",
        "",
        "| decisions | " + " | ".join(f"{o} NDCG@10 | {o} relevant in round" for o in q.curves) + " |",
        "| ---: | " + " | ".join("---: | ---:" for _ in q.curves) + " |",
    ]
    rounds = max(len(c) for c in q.curves.values())
    for i in range(rounds):
        points = [c[i] if i < len(c) else None for c in q.curves.values()]
        decided = next(pt.decisions for pt in points if pt)
        cells = " | ".join(f"{fmt(pt.ndcg_at_10, 4)} | {pt.relevant}" if pt else "– | –" for pt in points)
        lines.append(f"| {decided} | {cells} |")
    reached = ", ".join(f"{o}: {f'{n} decisions' if n is not None else 'not reached'} (best gain "
                        f"{fmt(q.best_gain[o], 4)})" for o, n in q.decisions_to_gain.items())
    points = [pt for c in q.curves.values() for pt in c]
    activated = sum(1 for pt in points if pt.activated)
    lines += ["", f"Decisions to a +{q.gain_target} NDCG@10 gain — {reached}. The gate activated {activated} of "
              f"the {len(points)} versions built.", ""]
    return lines

