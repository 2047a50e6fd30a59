"""bench/results/feedback.json -> the feedback-loop section of docs/BENCHMARKS.md."""

from __future__ import annotations

from bench.reports.text import fmt, forms_tables, goals_line, headline_table

FEEDBACK_LABELS = {
    "before": "before (zero-shot MiniLM, active)",
    "after_decisions": "after retraining on the decisions alone",
    "after_kb": "after retraining on the KB alone",
    "after_kb_and_decisions": "after retraining on KB + decisions",
}


def feedback_section(data: dict) -> list[str]:
    params, curator, t = data["params"], data["curator"], data["timings_s"]
    decisions = curator["decisions"]
    complete = sum(v for k, v in decisions.items() if k.endswith(":complete"))
    rejected = sum(v for k, v in decisions.items() if k.endswith(":not_relevant"))
    judged = ", ".join(f"{decisions.get(f'queries_{k}', 0)} {k}" for k in params.get("curator_kinds", []))
    lines = [
        "## The feedback loop on benchmark v2 (`bench/feedback.py`)",
        "",
        f"Run {data['date']} on {params.get('cpu_count')} CPU cores (load average "
        f"{fmt(params['load_average_at_start'], 1) + ' at the start, ' if 'load_average_at_start' in params else ''}"
        f"{fmt(params.get('load_average'), 1)} at the end: timings are inflated when other work shared the cores). "
        f"A simulated curator typed {judged} train queries with the KB's names and judged the served "
        f"top-{params['judged_per_query']} with the gold labels: {complete} complete, {rejected} not relevant "
        f"(record_decision p50 {fmt(curator.get('record_decision_ms_p50'), 1)} ms). Each system after `before` is a "
        f"real retraining job (worker process) from the base model: {params['epochs']} epoch(s), batch "
        f"{params['batch_size']}, lr {params['learning_rate']}, sequences of {params['max_seq_length']} tokens, "
        f"schema {params['schema']}; the KB is the train split's gene + disease records "
        f"({data['counts'].get('kb_train_records')}).",
        "",
    ]
    lines += goals_line(data)
    lines += ["Dense retriever, every kind pooled:", ""]
    systems = [s for s in FEEDBACK_LABELS if s in data.get("fusions", FEEDBACK_LABELS)]
    lines += headline_table(data["forms"], systems, FEEDBACK_LABELS)
    if "forms_text_hybrid" in data:
        lines += ["Served ranking (the Curate page's concept search with the dense share the worker chose for "
                  "the version on its dev split), canonical form:", ""]
        lines += forms_tables(data["forms_served"], systems, FEEDBACK_LABELS, form_names=("canonical",))
        gain = data.get("served_gain")
        if gain:
            lines += [f"Served NDCG@10, {gain['after']} − {gain['before']} per query ({gain['queries']} test "
                      f"queries): {fmt(gain['mean_difference'], 4)}, 95% bootstrap interval "
                      f"[{fmt(gain['ci95'][0], 4)}, {fmt(gain['ci95'][1], 4)}].", ""]
        lines += ["Text hybrid (rendered query text, the version's text fusion), every kind pooled:", ""]
        lines += headline_table(data["forms_text_hybrid"], systems, FEEDBACK_LABELS)
    else:
        lines += ["Served ranking (hybrid with the fusion the worker chose on its dev split), every kind pooled:", ""]
        lines += headline_table(data["forms_served"], systems, FEEDBACK_LABELS)
        lines += forms_tables(data["forms_served"], systems, FEEDBACK_LABELS, form_names=("canonical",))
    jobs = data.get("jobs", {})
    shares = data.get("served_fusions") or {}
    lines += ["| job | training pairs | train + index + eval (s) | click → serving (s) | text fusion | "
              "served dense share (dev) |", "| --- | ---: | ---: | ---: | --- | --- |"]
    for name, job in jobs.items():
        share = shares.get(name)
        chosen = f"{share['dense_share']:g} ({share['queries']} dev queries)" if share else "–"
        lines.append(f"| {name} | {job['training']['pairs']} | {fmt(job['worker_timings_s'].get('total'), 0)} | "
                     f"{fmt(t.get(f'{name}_click_to_serving'), 0)} | {job.get('fusion') or '–'} | {chosen} |")
    lines += [
        "",
        f"Click to serving (KB + decisions, from the Retrain call until the new version is active with its "
        f"retriever loaded, or the gate kept it inactive): {fmt(t.get('click_to_serving'), 0)} s.",
        "",
    ]
    for name, job in jobs.items():
        if "activated" in job:
            lines += [f"Gate, {name} ({'activated' if job['activated'] else 'not activated'}): "
                      f"{job.get('verdict') or job.get('message')}", ""]
    return lines + queue_orders_lines(data.get("queue_orders"))


def queue_orders_lines(q: dict | None) -> list[str]:
    """The annotation queue's orders (``bench/feedback.py --queue-orders``): NDCG@10 after each round."""
    if not q:
        return []
    p = q["params"]
    lines = [
        "### Which order should the annotation queue ask in? (`bench/feedback.py --queue-orders`)",
        "",
        f"Run {q['date']} ({'GPU' if p.get('cuda') else str(p.get('cpu_count')) + ' CPU cores, no GPU'}). "
        f"From the zero-shot version (served NDCG@10 {fmt(q['before_ndcg@10'], 4)}), a simulated annotator grades "
        f"{p['decisions_per_round']} pairs per round with the gold labels, taken from the Annotate page's queue over "
        f"{p['pool']} train relations (its top {p['queue_depth']} each) in each order; a real retraining job "
        f"(KB + decisions, {p['epochs']} epoch(s), max steps {p['max_steps'] or 'none'}) follows each round and the "
        f"version it built is evaluated: {p['evaluation']}.",
        "",
        "| decisions | " + " | ".join(f"{o} NDCG@10 | {o} relevant in round" for o in q["curves"]) + " |",
        "| ---: | " + " | ".join("---: | ---:" for _ in q["curves"]) + " |",
    ]
    rounds = max(len(c) for c in q["curves"].values())
    for i in range(rounds):
        points = [c[i] if i < len(c) else None for c in q["curves"].values()]
        decided = next(pt["decisions"] for pt in points if pt)
        cells = " | ".join(f"{fmt(pt['ndcg@10'], 4)} | {pt['relevant']}" if pt else "– | –" for pt in points)
        lines.append(f"| {decided} | {cells} |")
    reached = ", ".join(f"{o}: {f'{n} decisions' if n is not None else 'not reached'} (best gain "
                        f"{fmt(q['best_gain'][o], 4)})" for o, n in q["decisions_to_gain"].items())
    points = [pt for c in q["curves"].values() for pt in c]
    activated = sum(1 for pt in points if pt.get("activated"))
    lines += ["", f"Decisions to a +{q['gain_target']} NDCG@10 gain — {reached}. The gate activated {activated} of "
              f"the {len(points)} versions built.", ""]
    return lines
