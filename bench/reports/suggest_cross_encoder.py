"""bench/results/suggest_cross_encoder.json -> its section of docs/BENCHMARKS.md."""

from __future__ import annotations

from bench.reports.text import fmt


def suggest_cross_encoder_section(data: dict) -> list[str]:
    """bench/suggest_cross_encoder.py: the sentence-pair cross-encoder against the feature scorer (Dev)."""
    p = data["params"]
    lines = [
        "## The relation scorer's second candidate: a sentence-pair cross-encoder (`bench/suggest_cross_encoder.py`)",
        "",
        f"Run {data['date'][:10]} on {p['device']}: {p['base_model']} as a cross-encoder over (the two names, the "
        f"sentence relating them best with both concepts marked), {p['steps']} steps of {p['batch_size']} on "
        f"{p['train_pairs']:,} sampled training pairs ({p['train_positives']:,} related; {p['train_s']} s), threshold "
        f"{p['threshold']} chosen on {p['threshold_pairs']:,} pairs of held-out training documents. Dev pair "
        "precision / recall / F1, gold mentions, next to the feature scorer the product keeps.",
        "",
        "| Dev split | system | precision | recall | F1 | ms per pair (CPU) |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for corpus, d in data["dev"].items():
        for name, label in (("scorer_logreg", "features + logistic regression (kept)"),
                            ("scorer_cross_encoder", "sentence-pair cross-encoder")):
            sc = d[name]
            ms = d["cross_encoder_ms_per_pair_cpu"] if name == "scorer_cross_encoder" else ""
            lines.append(f"| {corpus} | {label} | {fmt(sc['precision'])} | {fmt(sc['recall'])} | {fmt(sc['f1'])} | "
                         f"{ms} |")
    return lines + [""]
