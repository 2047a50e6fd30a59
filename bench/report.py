"""Render docs/BENCHMARKS.md from the JSON files under bench/results/.

Usage::

    python bench/report.py [--results bench/results] [--out docs/BENCHMARKS.md]

It also writes docs/RELIABILITY.md from ``bench/reliability.md.in``, whose ``{{name:path|format}}``
placeholders are figures looked up in ``bench/results/<name>.json``.

Every figure in the document is copied from a JSON written by a benchmark script; this script
only formats. Sections for benchmarks that have not been run are left out.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
METRICS = ("ndcg@10", "ndcg@50", "map@10", "map@50", "entity_recall@10", "entity_recall@50")


def _load(results: Path, name: str) -> dict | None:
    path = results / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _f(value, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if isinstance(value, int | float) else "–"


def _metric_table(systems: dict, names: list[str] | None = None, labels: dict[str, str] | None = None) -> list[str]:
    """A metrics table of ``systems`` (in the order of ``names``), rows named by ``labels`` or `name`."""
    rows = ["| system | " + " | ".join(METRICS) + " |", "| --- |" + " ---: |" * len(METRICS)]
    for name in names or list(systems):
        if name in systems:
            label = (labels or {}).get(name, f"`{name}`")
            rows.append(f"| {label} | " + " | ".join(_f(systems[name].get(m)) for m in METRICS) + " |")
    return rows


def matching_section(data: dict) -> list[str]:
    lines = [
        "## Text matching (`bench/matching.py`)",
        "",
        f"Run {data['date']}. Span-level precision and recall of `Matcher.find_all` against BioRED's gold "
        "mentions; dictionaries from CIViC, DrugBank, BioRED Train and BC5CDR only (BC5CDR documents that "
        "are also in BioRED Dev/Test left out). Dev was used while developing the matcher; Test was held out.",
        "",
        "| split | type | gold | exact P | exact R | exact F1 | overlap P | overlap R |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    system = data["systems"]["matcher"]
    for split in ("dev", "test"):
        for kind in ("variant", "chemical", "gene"):
            s = system[split][kind]
            lines.append(
                f"| {split} | {kind} | {s['gold']} | {_f(s['exact']['precision'])} | "
                f"{_f(s['exact']['recall'])} | {_f(s['exact']['f1'])} | {_f(s['overlap']['precision'])} | "
                f"{_f(s['overlap']['recall'])} |"
            )
    lines += [
        "",
        "Ablations (dev, exact spans, recall / precision):",
        "",
        "| system | variant R / P | chemical R / P | gene R / P |",
        "| --- | --- | --- | --- |",
    ]
    for name, s in data["systems"].items():
        cells = [
            f"{_f(s['dev'][k]['exact']['recall'])} / {_f(s['dev'][k]['exact']['precision'])}" if k in s["dev"] else "–"
            for k in ("variant", "chemical", "gene")
        ]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    t = data.get("timings_s", {})
    lines += [
        "",
        f"Speed: `find_all` {_f(t.get('find_all_ms_per_abstract'), 2)} ms per new abstract, "
        f"{_f(t.get('find_all_ms_per_abstract_cached_text'), 2)} ms when the text was seen before; "
        f"g(e, d) {_f(t.get('g_ed_ms_per_pair'), 2)} ms per pair; "
        f"matcher build {_f(t.get('matcher_build_s'), 1)} s.",
        "",
    ]
    for split in ("dev", "test"):
        v, c = system[split]["variant"]["exact"], system[split]["chemical"]["exact"]
        met = {
            "variant": v["recall"] >= 0.85 and v["precision"] >= 0.8,
            "chemical": c["recall"] >= 0.75 and c["precision"] >= 0.8,
        }
        verdict = ", ".join(f"{k} {'met' if ok else 'missed'}" for k, ok in met.items())
        lines.append(f"Goals on {split} (variant R ≥ 0.85, chemical R ≥ 0.75, each at P ≥ 0.8): {verdict}.")
    lines += [
        "",
        'Variant misses on Test are mostly bare codons ("G118", "Ser473") that BioRED counts as '
        'variants and the matcher does not report in free text, because cell-line names ("A549") look the '
        "same. Gene recall is low without an HGNC dictionary (`ingest-dict hgnc`).",
        "",
    ]
    return lines


def retrieval_section(data: dict) -> list[str]:
    c = data["counts"]
    lines = [
        "## Retrieval (`bench/retrieval.py`, BioRED-derived n-ary benchmark)",
        "",
        f"Run {data['date']}. Corpus {c.get('corpus_documents')} abstracts; {c.get('records')} records "
        f"({c.get('records_a')} gene–variant–chemical, {c.get('records_b')} gene–disease–chemical) over "
        f"{c.get('genes')} genes; test split: {c.get('queries_pair_test')} gene+variant/disease queries, "
        f"{c.get('queries_gene_test')} gene-only queries.",
        "",
        "Test split, query with the relation's two query entities:",
        "",
    ]
    lines += _metric_table(data["systems"])
    lines += ["", 'Test split, gene-only queries ("Treatment for gene {gene}?"):', ""]
    lines += _metric_table(data["systems_gene_only"])
    choice = data.get("params", {}).get("hybrid_choice")
    if choice:
        lines += ["", f"Hybrid chosen on dev: {choice}."]
    goals = data.get("params", {}).get("goals_on_test", {})
    if goals:
        verdicts = (f"{goal}: {'met' if ok else 'missed'}" for goal, ok in goals.items())
        lines += ["", "Goals on test: " + "; ".join(verdicts) + "."]
    lines += [line for note in data.get("params", {}).get("notes", []) for line in ("", note)]
    lat = data["latency_ms"]
    lines += ["", "| latency (ms) | p50 | p95 |", "| --- | ---: | ---: |"]
    for name, v in lat.items():
        lines.append(f"| {name} | {_f(v.get('p50'), 2)} | {_f(v.get('p95'), 2)} |")
    lines += ["", "Timings (s): " + ", ".join(f"{k} {_f(v, 2)}" for k, v in data.get("timings_s", {}).items()), ""]
    return lines


def scale_section(data: dict) -> list[str]:
    c = data["counts"]
    lines = [
        "## Scale (`bench/scale.py`)",
        "",
        f"Run {data['date']}: {c['vectors']:,} synthetic {c['dimension']}-d vectors (fitted to MiniLM "
        f"embeddings of the real corpus), {c['queries']} queries; {c['documents']:,} synthetic abstracts for "
        "BM25. Single-query latency. Details and the path to all of PubMed: [SCALING.md](SCALING.md).",
        "",
        "| system | recall@50 | p50 ms | p95 ms |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, s in data["systems"].items():
        lat = data["latency_ms"].get(name, {})
        lines.append(f"| `{name}` | {_f(s.get('recall@50'), 4)} | {_f(lat.get('p50'), 2)} | {_f(lat.get('p95'), 2)} |")
    goal = data.get("goal", {})
    if goal:
        lines += [
            "",
            f"Goal recall@50 ≥ {goal.get('recall@50')} and p95 ≤ {goal.get('p95_ms')} ms: met by "
            + ", ".join(f"`{m}`" for m in goal.get("met_by", []))
            + ".",
        ]
    return lines + [""]


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


def _variants(results: Path) -> list[tuple[str, dict]]:
    """Extra EDEL runs (``edel_*.json``: one system trained with other settings), labelled by them."""
    out = []
    for path in sorted(results.glob("edel_*.json")):
        extra = json.loads(path.read_text())
        t = extra["params"]["train"]
        per_class = extra["params"]["sampling"]["per_class"]
        label = f"EDEL ({t['epochs']} epochs, lr {t['learning_rate']}, per-class {per_class})"
        out.append((label, extra))
    return out


def edel_section(data: dict, results: Path | None = None) -> list[str]:
    extras = _variants(results) if results is not None else []
    params = data["params"]
    train = params["train"]
    lines = [
        "## EDEL training (`bench/edel.py`)",
        "",
        f"Run {data['date']} on {params.get('device', 'cpu')} ({params.get('torch_threads')} torch threads). "
        f"Base model {params['base_model']}; trained on the benchmark's train split "
        f"({data['counts'].get('train_records')} records), {train['epochs']} epoch(s), batch {train['batch_size']}, "
        f"learning rate {train['learning_rate']}, max sequence length {train['max_seq_length']}; "
        f"text matching g: {params['text_match']}. Test split, layout of the paper's Tables 3 and 4.",
        "",
    ]
    for key, title in (
        ("systems", "Both query entities (gene + variant / disease)"),
        ("systems_gene_only", "Gene-only queries"),
    ):
        systems = data[key]
        lines += [f"{title}:", "", "| model | " + " | ".join(METRICS) + " |", "| --- |" + " ---: |" * len(METRICS)]
        for name in EDEL_ORDER:
            if name in systems:
                lines.append(f"| {EDEL_LABELS[name]} | " + " | ".join(_f(systems[name].get(m)) for m in METRICS) + " |")
        for label, extra in extras:
            row = extra[key].get("edel", {})
            lines.append(f"| {label} | " + " | ".join(_f(row.get(m)) for m in METRICS) + " |")
        edel, zero, bm25 = systems.get("edel", {}), systems.get("zero_shot", {}), systems.get("bm25", {})
        hybrid = systems.get("edel_bm25_hybrid", {})
        lines += [
            "",
            f"EDEL / zero-shot: NDCG@10 {_ratio(edel.get('ndcg@10'), zero.get('ndcg@10'))}, EntityRecall@10 "
            f"{_ratio(edel.get('entity_recall@10'), zero.get('entity_recall@10'))} (goal ≥ 2×). "
            f"EDEL + BM25 vs BM25: NDCG@10 {_f(hybrid.get('ndcg@10'))} vs {_f(bm25.get('ndcg@10'))}, "
            f"EntityRecall@10 {_f(hybrid.get('entity_recall@10'))} vs {_f(bm25.get('entity_recall@10'))} "
            "(goal ≥). EDEL alone vs BM25 (stretch): NDCG@10 "
            f"{_f(edel.get('ndcg@10'))} vs {_f(bm25.get('ndcg@10'))}.",
            "",
        ]
        for label, extra in extras:
            row, hybrid_row = extra[key].get("edel", {}), extra[key].get("edel_bm25_hybrid", {})
            lines += [
                f"{label} / zero-shot: NDCG@10 {_ratio(row.get('ndcg@10'), zero.get('ndcg@10'))}, EntityRecall@10 "
                f"{_ratio(row.get('entity_recall@10'), zero.get('entity_recall@10'))}; fused with BM25 "
                f"(`{extra['params'].get('fusion_chosen_on_dev')}`): NDCG@10 {_f(hybrid_row.get('ndcg@10'))}, "
                f"EntityRecall@10 {_f(hybrid_row.get('entity_recall@10'))}.",
                "",
            ]
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
            "EDEL training pairs per margin class (the paper's Table 2):",
            "",
            "| class | margin | positives | negatives |",
            "| --- | ---: | ---: | ---: |",
        ]
        for name, counts in sorted(
            classes["classes"].items(), key=lambda kv: (classes["margins"].get(kv[0], 9), kv[0])
        ):
            lines.append(
                f"| {name} | {_f(classes['margins'].get(name), 1)} | {counts['positive']} | {counts['negative']} |"
            )
    lines += [
        "",
        f"Hybrid fusion chosen on dev: `{params.get('fusion_chosen_on_dev')}`.",
        "",
        "The paper's corpus is all of PubMed, where BM25 reaches 0.11 NDCG@10 on PO; on this 3,476-abstract "
        "corpus, whose queries reuse the evidence abstracts' own mention texts, BM25 is far stronger, so the "
        "paper's EDEL-over-BM25 ratios do not transfer.",
        "",
    ]
    for note in params.get("notes", []):
        lines += [note, ""]
    return lines


def app_section(data: dict) -> list[str]:
    c, params = data["counts"], data["params"]
    lines = [
        "## The app in a browser (`bench/app.py`)",
        "",
        f"Run {data['date']}: headless Chromium against `streamlit run app.py`, store of {c['store_documents']} "
        f"abstracts and {c['store_kb_records']} KB records, {c['pairs']} gene + variant pairs "
        f"({params.get('pairs_source')}); load average before/after "
        f"{params.get('load_average_1min_before_and_after')}.",
        "",
        "| path | p50 ms | p95 ms |",
        "| --- | ---: | ---: |",
    ]
    for name, v in data["latency_ms"].items():
        lines.append(f"| {name} | {_f(v.get('p50'), 0)} | {_f(v.get('p95'), 0)} |")
    lines += [
        "",
        f"Decisions confirmed in DuckDB: {c['decisions_confirmed_in_store']} of {c['clicks_timed']}; the pair's own "
        f"abstract was in the top 20 for {c['source_pmid_in_results']} of {c['pairs']}. One-off costs (s): "
        + ", ".join(f"{k} {_f(v, 1)}" for k, v in data.get("timings_s", {}).items()),
        "",
    ]
    return lines


FIRST_RUN_STEPS = (  # timing, what it spans, goal in the JSON's "goals"
    ("first_page_s", "first page: command start → page drawn with the Curator field", "first_page_s"),
    ("sample_load_s", "click on *Load the sample* → \"Sample loaded from\"", "sample_load_s_cpu"),
    ("first_results_after_load_s", "then on Curate: typing BRAF + V600E → ranked results",
     "first_results_after_load_s"),
)


def first_run_section(data: dict) -> list[str]:
    params, machine, c, t = data["params"], data["machine"], data["counts"], data["timings_s"]
    lines = [
        "## First run (`bench/first_run.py`)",
        "",
        f"Run {data['date']} on {machine.get('cpus')} CPU cores (load average {machine.get('load_average_before')} "
        f"before, {machine.get('load_average_after')} after): the README's first command, `{params['command']}`, "
        f"run as written on a fresh store, then headless Chromium; {c['runs_timed']} runs, each on its own fresh "
        f"store. The sample ({c['files']} files of {params['data_dir']}) holds {c.get('abstracts_loaded')} abstracts, "
        f"{c.get('kb_records_loaded')} KB records and {c.get('synonyms_loaded')} synonyms; BRAF + V600E showed "
        f"{c.get('results_shown')} results, {c.get('results_with_marks')} of them with highlighted entities.",
        "",
        "| step | min s | median s | max s | goal (median) |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    goals = data.get("goals", {})
    for name, label, goal_name in FIRST_RUN_STEPS:
        v, goal = t.get(name, {}), goals.get(goal_name)
        verdict = f"{goal['op']} {goal['target']:g} s: {'met' if goal['met'] else 'missed'}" if goal else "–"
        lines.append(f"| {label} | {_f(v.get('min'), 1)} | {_f(v.get('median'), 1)} | {_f(v.get('max'), 1)} "
                     f"| {verdict} |")
    cli = data.get("cli") or {}
    if cli.get("first_results_s") is not None:
        lines += [
            "",
            "The CLI path, once, on another fresh store: `python -m curation quickstart` "
            f"{_f(cli['quickstart_s'], 1)} s "
            f"(its own first-search check {_f(cli.get('quickstart_first_search_check_s_reported'), 1)} s), then the "
            f"README's command on that store: first page {_f(cli.get('first_page_s'), 1)} s, first results "
            f"(typing BRAF + V600E → ranked results) {_f(cli['first_results_s'], 1)} s.",
        ]
    if c.get("failures"):
        lines += ["", "Failed runs: " + "; ".join(c["failures"])]
    lines += [line for note in data.get("notes", []) for line in ("", note)]
    return lines + [""]


def reproduce_section(data: dict) -> list[str]:
    lines = [
        "## Reproducing the committed figures (`bench/reproduce.py`)",
        "",
        f"Run {data['date']}: each benchmark re-run through `python -m curation bench NAME` and every figure compared "
        f"with its committed JSON (absolute tolerance {data['params']['tolerance']:g}; timings, latencies, dates and "
        "machine facts left out, as they change from run to run).",
        "",
        "| benchmark | figures compared | differ | settings and notes that differ | re-run s |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, item in data["benchmarks"].items():
        lines.append(f"| {name} | {item.get('figures_compared', '–')} | {item.get('differ', 'did not finish')} | "
                     f"{item.get('params_and_notes_differ', '–')} | {_f(data['timings_s'].get(name), 0)} |")
    for name, item in data["benchmarks"].items():
        echoed = item.get("params_and_notes_differences") or {}
        if echoed:
            listed = ", ".join(f"`{k}`" for k in echoed)
            lines += ["", f"{name}: settings or notes that differ (not figures): {listed}"]
    return lines + [""]


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
    lines = [
        "## The feedback loop (`bench/feedback.py`)",
        "",
        f"Run {data['date']} on {params.get('cpu_count')} CPU cores (load average {_f(params.get('load_average'), 1)} "
        f"at the end). A simulated curator judged the served top-{params['judged_per_query']} of "
        f"{decisions.get('queries_pair', 0)} pair and {decisions.get('queries_gene', 0)} gene-only train queries "
        f"with the gold labels: {complete} complete, {rejected} not relevant "
        f"(record_decision p50 {_f(curator.get('record_decision_ms_p50'), 1)} ms). Each system after `before` is a "
        f"real retraining job (worker process) from the base model: {params['epochs']} epoch(s), batch "
        f"{params['batch_size']}, lr {params['learning_rate']}, sequences of {params['max_seq_length']} tokens, "
        f"schema {params['schema']}. Test split of the benchmark; the KB is its train split only.",
        "",
    ]
    for key, title in (
        ("systems", "Dense retriever, both query entities"),
        ("systems_gene_only", "Dense retriever, gene-only queries"),
        ("systems_served", "Served ranking (hybrid with the fusion chosen on the worker's dev split), both entities"),
        ("systems_served_gene_only", "Served ranking, gene-only queries"),
    ):
        lines += [f"{title}:", "", *_metric_table(data[key], list(FEEDBACK_LABELS), FEEDBACK_LABELS), ""]
    jobs = data.get("jobs", {})
    lines += ["| job | training pairs | train + index + eval (s) | click → serving (s) | fusion chosen |",
              "| --- | ---: | ---: | ---: | --- |"]
    for name, job in jobs.items():
        lines.append(f"| {name} | {job['training']['pairs']} | {_f(job['worker_timings_s'].get('total'), 0)} | "
                     f"{_f(t.get(f'{name}_click_to_serving'), 0)} | {job.get('fusion') or '–'} |")
    lines += [
        "",
        f"Click to serving (KB + decisions, from the Retrain call until the new version is active with its "
        f"retriever loaded): {_f(t.get('click_to_serving'), 0)} s.",
        "",
    ]
    return lines


SECTIONS = (
    ("matching", matching_section),
    ("retrieval", retrieval_section),
    ("scale", scale_section),
    ("edel", edel_section),
    ("app", app_section),
    ("first_run", first_run_section),
    ("feedback", feedback_section),
    ("reproduce", reproduce_section),
)


def render(results: Path) -> str:
    lines = [
        "# Benchmarks",
        "",
        "Generated by `python bench/report.py` from the JSON files in `bench/results/`; each JSON is "
        "written by the benchmark script named in its section. Machine: 2 CPU cores, 24 GiB, no GPU, unless "
        "a section says otherwise.",
        "",
    ]
    for name, section in SECTIONS:
        data = _load(results, name)
        if data is not None:
            lines += section(data, results) if section is edel_section else section(data)
    return "\n".join(lines).rstrip() + "\n"


PLACEHOLDER = re.compile(r"\{\{([a-z_]+)(?::([A-Za-z0-9_.]+))?(?:\|([a-z0-9]+))?\}\}")


def _lookup(data: dict, path: str, where: str):
    value = data
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            raise SystemExit(f"{where}: {path} is not in the JSON")
        value = value[part]
    return value


def _format(value, fmt: str | None) -> str:
    if fmt in (None, "s"):
        return str(value)
    if fmt == "date":
        return str(value)[:10]
    if fmt == "int":
        return f"{int(value):,}"
    if fmt in ("f0", "f1", "f2"):
        return f"{float(value):,.{fmt[1]}f}"
    if fmt == "mb":
        return f"{value / 2**20:.1f}"
    if fmt == "kb":
        return f"{value / 1024:.0f}"
    if fmt in ("range0", "range2"):
        digits = int(fmt[-1])
        return f"{min(value):.{digits}f}–{max(value):.{digits}f}"
    raise SystemExit(f"unknown format '{fmt}'")


def load_table(data: dict) -> str:
    rows = ["| sessions | decisions each | acknowledged | stored | errors | retrain running | p50 ms | p95 ms | max ms "
            "| decisions/s | load average |",
            "| ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in data["runs"]:
        lat = r["latency_ms"]
        rows.append(f"| {r['sessions']} | {r['decisions_per_session']} | {r['acknowledged']} | {r['stored']} | "
                    f"{r['errors']} | {'yes' if r['retrain_running'] else 'no'} | {_f(lat['p50'], 0)} | "
                    f"{_f(lat['p95'], 0)} | {_f(lat.get('max'), 0)} | {_f(r.get('decisions_per_s'), 1)} | "
                    f"{_f(r.get('load_average_1min'), 1)} |")
    c = data["counts"]
    rows += ["", f"Run {data['date']} on a store of {c['documents']:,} abstracts and {c['kb_records']:,} KB records "
                 f"({data['params']['data']} data)."]
    return "\n".join(rows)


def render_reliability(results: Path, template: Path) -> str:
    """The reliability document: the template's prose with its placeholders filled from the JSONs."""
    sources = {name: _load(results, name) for name in ("load", "backup", "app")}
    text = template.read_text()

    def fill(match: re.Match) -> str:
        name, path, fmt = match.groups()
        if name == "load_table":
            return load_table(sources["load"]) if sources["load"] else "(bench/load.py has not been run.)"
        data = sources.get(name)
        if data is None:
            raise SystemExit(f"{template}: {{{{{name}:…}}}} needs bench/results/{name}.json")
        return _format(_lookup(data, path, f"bench/results/{name}.json"), fmt)

    return PLACEHOLDER.sub(fill, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "BENCHMARKS.md")
    parser.add_argument("--reliability-out", type=Path, default=ROOT / "docs" / "RELIABILITY.md")
    args = parser.parse_args(argv)
    args.out.write_text(render(args.results))
    print(f"wrote {args.out}")
    args.reliability_out.write_text(render_reliability(args.results, ROOT / "bench" / "reliability.md.in"))
    print(f"wrote {args.reliability_out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
