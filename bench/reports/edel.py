"""bench/results/edel.json -> the EDEL section of docs/BENCHMARKS.md."""

from __future__ import annotations

from bench.reports.text import fmt, forms_tables, goals_line, headline_table

EDEL_ORDER = [
    "bm25",
    "zero_shot",
    "edel_no_hard_neg",
    "edel_no_noisy_pos",
    "edel_no_multimargin",
    "edel",
    "edel_bm25_hybrid",
]


EDEL_LABELS = {
    "bm25": "BM25",
    "zero_shot": "zero-shot MiniLM",
    "edel": "EDEL",
    "edel_no_multimargin": "EDEL (−MultiMargin)",
    "edel_no_noisy_pos": "EDEL (−MultiMargin, −NoisyPos)",
    "edel_no_hard_neg": "EDEL (−MultiMargin, −NoisyPos, −HardNeg)",
    "edel_bm25_hybrid": "EDEL + BM25 (hybrid)",
}


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}×" if isinstance(a, float) and isinstance(b, float) and b > 0 else "–"


def edel_section(data: dict) -> list[str]:
    params = data["params"]
    train = params["train"]
    lines = [
        "## EDEL training on benchmark v2 (`bench/edel.py`)",
        "",
        f"Run {data['date']} on {params.get('device', 'cpu')} ({params.get('torch_threads')} torch threads). "
        f"Base model {params['base_model']}; {params['training_records']}; training documents: "
        f"{params['training_documents']}. {train['epochs']} epoch(s), batch {train['batch_size']}, learning rate "
        f"{train['learning_rate']}, max sequence length {train['max_seq_length']}; text matching g: "
        f"{params['text_match']}. Test split; systems in the layout of the paper's Tables 3 and 4.",
        "",
    ]
    lines += goals_line(data)
    systems = [s for s in EDEL_ORDER if s in data["forms"]["canonical"]["all"]["ndcg@10"]["systems"]]
    lines += headline_table(data["forms"], systems, EDEL_LABELS)
    lines += forms_tables(data["forms"], systems, EDEL_LABELS, form_names=("canonical", "reworded"))
    pooled = data["forms"]["canonical"]["all"]
    edel = pooled["ndcg@10"]["systems"].get("edel", {}).get("mean")
    zero = pooled["ndcg@10"]["systems"].get("zero_shot", {}).get("mean")
    lines += [f"EDEL / zero-shot, canonical, every kind: NDCG@10 {_ratio(edel, zero)} (the paper's goal: ≥ 2×).", ""]
    lines += [
        "Training time and data per model:",
        "",
        "| model | pairs | steps | train s | pairs/s | device |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for name, info in params.get("trained", {}).items():
        pairs = params.get("training_sets", {}).get(name, {}).get("pairs")
        lines.append(
            f"| {EDEL_LABELS.get(name, name)} | {pairs} | {info['steps']} | {info['seconds']} | "
            f"{info['pairs_per_s']} | {info['device']} |"
        )
    classes = params.get("training_sets", {}).get("edel", {})
    if classes:
        lines += [
            "",
            "EDEL training pairs per margin class (the paper's Table 2), classes from the matcher on the abstracts:",
            "",
            "| class | margin | positives | negatives |",
            "| --- | ---: | ---: | ---: |",
        ]
        for name, counts in sorted(
            classes["classes"].items(), key=lambda kv: (classes["margins"].get(kv[0], 9), kv[0])
        ):
            lines.append(
                f"| {name} | {fmt(classes['margins'].get(name), 1)} | {counts['positive']} | {counts['negative']} |"
            )
    lines += ["", f"Hybrid fusion chosen on dev: `{params.get('fusion_chosen_on_dev')}`.", ""]
    for note in params.get("notes", []):
        lines += [note, ""]
    return lines
