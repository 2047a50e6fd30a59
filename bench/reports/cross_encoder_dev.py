"""bench/results/cross_encoder_dev.json -> the cross-encoder section of docs/BENCHMARKS.md."""

from __future__ import annotations

from bench.reports.text import fmt


def cross_encoder_section(data: dict) -> list[str]:
    n, rule, tr = data["ndcg@10"], data["cpu_rule"], data["training"]
    cfg = tr["config"]
    return [
        "## Cross-encoder re-ranking, dev only (`bench/_cross_encoder.py`)",
        "",
        f"A cross-encoder trained from the offline MiniLM weights on this CPU ({tr['examples']} graded examples from "
        f"{tr['records']}, {cfg['epochs']} epoch(s), {tr['steps']} steps, sequences of {cfg['max_length']} tokens, lr "
        f"{cfg['learning_rate']}), re-ranking BM25's top {data['k']} of {data['queries']} {data['split']} queries "
        f"({data['form']} form): NDCG@10 {fmt(n['bm25']['mean'], 3)} → {fmt(n['bm25_ce']['mean'], 3)} "
        f"(relative {fmt(n['relative_gain'], 3)}); {rule['describe']}. It has not learned to rank in the steps a CPU "
        "job allows (its scores sit near the base rate of positives), so builds on a CPU do not train it by default "
        "and the build's dev check would switch it off. A GPU run, or a base model that is already a cross-encoder "
        "(MedCPT, when reachable), is what it needs.",
        "",
    ]
