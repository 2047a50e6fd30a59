"""Render docs/BENCHMARKS.md from the JSON files under bench/results/.

Usage::

    python -m bench.report [--results bench/results] [--out docs/BENCHMARKS.md]

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
        for kind in [k for k in ("variant", "chemical", "gene", "disease") if k in system[split]]:
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
        "| system | variant R / P | chemical R / P | gene R / P | disease R / P |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, s in data["systems"].items():
        cells = [
            f"{_f(s['dev'][k]['exact']['recall'])} / {_f(s['dev'][k]['exact']['precision'])}" if k in s["dev"] else "–"
            for k in ("variant", "chemical", "gene", "disease")
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


ENTITY_SPLITS = {"biored_dev": "BioRED Dev", "bc5cdr_dev": "BC5CDR Dev", "biored_test": "BioRED Test",
                 "bc5cdr_test": "BC5CDR Test"}
NER_LABELS = {"dictionary": "dictionaries only (no recogniser)", "recogniser": "recogniser (+ notation rules)",
              "union": "recogniser, then dictionaries", "per_kind": "per-kind policy chosen on dev"}


LINK_SETS = {"bc5cdr_chemical": "BC5CDR Test chemicals → MeSH", "bc5cdr_disease": "BC5CDR Test diseases → MeSH",
             "biored_dev_gene": "BioRED Dev genes → gene ids", "biored_test_gene": "BioRED Test genes → gene ids",
             "drugbank_held_out": "held-out DrugBank synonyms → DrugBank ids"}
LINK_SYSTEMS = ("exact", "tfidf", "zero_shot", "trained", "trained_prototype", "combined", "linker")


def linking_lines(linking: dict) -> list[str]:
    if not linking.get("tests"):
        return []
    counts = linking.get("counts", {})
    lines = [
        f"Linking (`bench/_linking.py`): accuracy@1 / @5 per mention of held-out names. The name encoder "
        f"`{linking.get('linker')}` was fine-tuned SapBERT-style (multi-similarity loss, online hard-pair mining; "
        f"{counts.get('train_concepts')} concepts, {counts.get('train_names')} names from BioRED Train, BC5CDR "
        f"Train and DrugBank) in {_f(linking.get('train_seconds'), 0)} s on {linking.get('device')}. Dictionary: "
        "the same training sources; 'unreachable' mentions have a concept the dictionary never names.",
        "",
        "| names | mentions | unreachable | " + " | ".join(LINK_SYSTEMS) + " | linker, reachable only |",
        "| --- | ---: | ---: |" + " ---: |" * (len(LINK_SYSTEMS) + 1),
    ]
    for key, title in LINK_SETS.items():
        t = linking["tests"].get(key)
        if not t:
            continue
        cells = [f"{_f(t[s]['mention_acc1'])} / {_f(t[s]['mention_acc5'])}" if s in t else "–" for s in LINK_SYSTEMS]
        reach = _f(t["linker"]["reachable_acc1"]) if "linker" in t else "–"
        lines.append(f"| {title} | {t['mentions']} | {t.get('unreachable_mentions', 0)} | " + " | ".join(cells)
                     + f" | {reach} |")
    auto = linking.get("auto_link", {})
    if auto:
        lines += [
            "",
            f"Links applied automatically on Test (thresholds chosen on BioRED Dev + BC5CDR Dev for precision ≥ "
            f"0.98): {auto['applied']} of {auto['mentions']} mentions ({_f(auto['coverage'])}), precision "
            f"{_f(auto['precision'])}; of these, {auto['fuzzy_applied']} were not exact dictionary names, precision "
            f"{_f(auto['fuzzy_precision'])}. Below the thresholds the candidates are offered, never applied.",
        ]
    dev_dict = linking.get("with_dev_dictionary", {})
    if dev_dict:
        parts = [f"{LINK_SETS.get(k, k)} {_f(v['linker']['mention_acc1'])}" for k, v in dev_dict.items()
                 if "linker" in v]
        lines += ["", "With the Dev names added to the dictionary (as BC5CDR linking work usually does), the "
                  "linker's acc@1: " + "; ".join(parts) + "."]
    return lines + [""]


def _default_matches(data: dict) -> bool:
    """Whether the code's default per-kind policy is the one chosen on dev in this run (checked when rendering)."""
    from curation.entities.annotation import DEFAULT_POLICY

    chosen = data["chosen_on_dev"]
    policy = chosen.get("policy", {})
    return chosen["system"] == "per_kind" and all(DEFAULT_POLICY.get(k, "recogniser_first") == v
                                                 for k, v in policy.items())


def entities_section(data: dict, results: Path | None = None) -> list[str]:
    chosen = data["chosen_on_dev"]["system"]
    manifest = data["params"].get("recogniser_manifest", {})
    lines = [
        "## Entities: recogniser, linker, concept index (`bench/entities.py`)",
        "",
        f"Run {data['date']}. Exact-span precision / recall / F1 (same start, end and type as a gold mention). "
        f"The recogniser (`{manifest.get('name', '?')}`, spaCy CNN NER, width "
        f"{manifest.get('settings', {}).get('width', '?')}) was trained on BioRED Train + BC5CDR Train in "
        f"{_f(manifest.get('train_seconds'), 0)} s on {manifest.get('device', '?')}, its checkpoint chosen on "
        "BioRED Dev; dictionaries come from the same training documents plus CIViC and DrugBank. "
        f"The system the app uses was chosen on BioRED Dev: **{NER_LABELS.get(chosen, chosen)}** "
        f"({data['chosen_on_dev']['rule']}; the per-kind policy: "
        + ", ".join(f"{k} {v.replace('_', '-')}" for k, v in data["chosen_on_dev"].get("policy", {}).items())
        + f"; the app's default (`DEFAULT_POLICY`) is this policy: {'yes' if _default_matches(data) else 'no'}"
        "). BC5CDR figures are chemicals and diseases only, without the documents BioRED Train holds.",
        "",
        "| split | system | gene P / R / F1 | variant P / R / F1 | chemical P / R / F1 | disease P / R / F1 |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for split, title in ENTITY_SPLITS.items():
        for name, per_split in data["ner"].items():
            if split not in per_split:
                continue
            scores = per_split[split]["scores"]
            cells = []
            for kind in ("gene", "variant", "chemical", "disease"):
                e = scores.get(kind, {}).get("exact")
                cells.append(f"{_f(e['precision'])} / {_f(e['recall'])} / {_f(e['f1'])}" if e else "–")
            lines.append(f"| {title} | {NER_LABELS.get(name, name)} | " + " | ".join(cells) + " |")
    t = data["throughput"]
    runs = "; ".join(f"{r['processes']} recogniser process(es): {_f(r['seconds'], 1)} s, "
                     f"{_f(r['abstracts_per_s'], 1)} abstracts/s" for r in t["by_processes"].values())
    lines += [
        "",
        f"Throughput ({NER_LABELS.get(t['system'], t['system'])} + linker, first sight of each text, "
        f"{data['params'].get('cpu_count')} CPU cores): {t['abstracts']} abstracts (every abstract of the data "
        f"directory, as ingest annotates them): {runs}. Loading the dictionaries, recogniser and linker took "
        f"{_f(t['setup_s'], 1)} s.",
        "",
    ]
    lines += linking_lines(data.get("linking") or {})
    edel = data.get("edel_before_after")
    if edel:
        lines += [
            "EDEL retrained with the concept index as g(e, d) (`bench/edel.py --g concepts`), against the text "
            "matcher alone (`bench/edel.py`), same records, seed and settings:",
            "",
            "| g(e, d) | pairs | margin classes | EDEL NDCG@10 canonical (test) | EDEL + BM25 |",
            "| --- | ---: | --- | ---: | ---: |",
        ]
        for label, entry in edel.items():
            classes = ", ".join(f"{k} {v}" for k, v in entry["classes"].items())
            lines.append(f"| {label} | {entry['pairs']} | {classes} | {_f(entry['edel'])} | {_f(entry['hybrid'])} |")
        lines.append("")
    return lines + goals_line(data)


FORM_ORDER = ("canonical", "reworded", "verbatim")
FORM_TITLES = {
    "canonical": "canonical (the KB's names: what a curator types)",
    "reworded": "reworded (another name of each concept, never the evidence's own)",
    "verbatim": "verbatim (the evidence abstract's own mention texts, as in v1)",
}
KIND_ORDER = ("gene_variant", "gene_disease", "gene_chemical", "chemical_disease", "gene", "all", "all_renamed")


def _cell(entry: dict, system: str, baseline: str) -> str:
    """ "0.412 [0.380, 0.441]" with † when the paired test against the baseline has Holm p < 0.05."""
    figures = entry["systems"].get(system)
    if figures is None:
        return "–"
    cell = f"{_f(figures['mean'])} [{_f(figures['ci95'][0])}, {_f(figures['ci95'][1])}]"
    comparison = entry.get("comparisons", {}).get(f"{system}_vs_{baseline}")
    if comparison is not None and comparison["p_holm"] < 0.05:
        cell += " †" if comparison["difference"] > 0 else " ‡"
    return cell


SIGNIFICANCE = ("Each cell: mean over queries [95% bootstrap interval]; † / ‡: significantly above / below the "
                "first row (paired two-sided sign-flip test, Holm-adjusted p < 0.05).")


def forms_tables(forms: dict, systems: list[str], labels: dict[str, str], metric: str = "ndcg@10",
                 form_names: tuple[str, ...] = FORM_ORDER) -> list[str]:
    """One table per form: systems × relation kinds (and every kind pooled), ``metric`` with intervals."""
    lines: list[str] = []
    for form in form_names:
        if form not in forms:
            continue
        per_kind = forms[form]
        kinds = [k for k in KIND_ORDER if k in per_kind and metric in per_kind[k]]
        baseline = per_kind["all"][metric]["baseline"]
        lines += [f"{metric}, {FORM_TITLES[form]}:", "",
                  "| system | " + " | ".join(f"{k} ({per_kind[k]['queries']})" for k in kinds) + " |",
                  "| --- |" + " ---: |" * len(kinds)]
        for name in systems:
            if name in per_kind["all"][metric]["systems"]:
                lines.append(f"| {labels.get(name, f'`{name}`')} | "
                             + " | ".join(_cell(per_kind[k][metric], name, baseline) for k in kinds) + " |")
        lines.append("")
    return lines


def headline_table(forms: dict, systems: list[str], labels: dict[str, str]) -> list[str]:
    """Every kind pooled: NDCG@10 per form (and on the renamed queries), EntityRecall@10 and Recall@50 (canonical)."""
    renamed = "all_renamed" in forms.get("reworded", {})
    lines = ["| system | " + " | ".join(f"{form} NDCG@10" for form in FORM_ORDER if form in forms)
             + (" | NDCG@10 canonical → reworded, renamed queries only" if renamed else "")
             + " | canonical EntityRecall@10 | canonical Recall@50 |",
             "| --- |" + " ---: |" * (len([f for f in FORM_ORDER if f in forms]) + 2 + renamed)]
    for name in systems:
        pooled = {form: forms[form]["all"] for form in FORM_ORDER if form in forms}
        if name not in pooled["canonical"]["ndcg@10"]["systems"]:
            continue
        baseline = pooled["canonical"]["ndcg@10"]["baseline"]
        cells = [_cell(pooled[form]["ndcg@10"], name, baseline) for form in pooled]
        if renamed:
            before, after = (forms[f]["all_renamed"]["ndcg@10"]["systems"][name]["mean"]
                             for f in ("canonical", "reworded"))
            cells.append(f"{_f(before)} → {_f(after)} ({forms['reworded']['all_renamed']['queries']} queries)")
        cells += [_cell(pooled["canonical"][m], name, baseline) for m in ("entity_recall@10", "recall@50")]
        lines.append(f"| {labels.get(name, f'`{name}`')} | " + " | ".join(cells) + " |")
    return lines + ["", SIGNIFICANCE, ""]


def goals_line(data: dict) -> list[str]:
    """The JSON's ``goals`` as one sentence (each computed by the script from its run)."""
    goals = data.get("goals", {})
    if not goals:
        return []
    verdicts = (f"`{name}` {g['value']} {g['op']} {g['target']}: {'met' if g['met'] else 'missed'}"
                for name, g in goals.items())
    return ["Goals (computed by the script from this run): " + "; ".join(verdicts) + ".", ""]


RETRIEVAL_LABELS = {
    "bm25": "BM25",
    "dense": "zero-shot dense (MiniLM)",
    "hybrid": "hybrid chosen on dev",
    "hybrid_mixed": "best fusion in which dense reorders",
    "rrf": "RRF",
    "bm25_expanded": "BM25 + expansion (every form)",
    "concepts": "concept search (lexical order)",
    "concepts_rm3": "concept search + RM3",
    "served": "served ranking (concept search, product default)",
}


def retrieval_section(data: dict) -> list[str]:
    c, params = data["counts"], data["params"]
    queries = c["queries"]
    leaks = data["leaks"]["test"]
    lines = [
        "## Retrieval, benchmark v2 (`bench/retrieval.py`)",
        "",
        f"Run {data['date']}. Corpus {c['corpus_documents']:,} abstracts (BioRED, BC5CDR, HoC). Records derived from "
        "BioRED's and BC5CDR's curated relations in five relation kinds; queries in three forms built from the same "
        "records (see `curation/learning/benchmark/`). Splits are saved (`bench/splits/benchmark_v2.json`), grouped "
        "by anchor concept and document-disjoint. Test queries per kind: "
        + ", ".join(f"{k} {v}" for k, v in queries["test"].items())
        + "; dev: " + ", ".join(f"{k} {v}" for k, v in queries["dev"].items()) + ".",
        "",
        "Leaks on test (every form): share of test positive documents that are training positives "
        f"{max(f['positive_docs_in_train'] for f in leaks.values())}, share of test query texts identical to a "
        f"training text {max(f['identical_query_texts'] for f in leaks.values())}. Records dropped as split "
        f"conflicts: {sum(c['split']['records_dropped_as_conflicts'].values())}; dev/test queries dropped for a text "
        f"identical to a training one: {sum(c['split']['queries_dropped_identical_to_train'].values())}. The "
        "reworded form renamed "
        + (f"{c['reworded_entities']['test']['renamed']} of {c['reworded_entities']['test']['total']} query entities "
           "on test; " if "reworded_entities" in c else "")
        + "the others have no name in the corpus that the evidence abstracts do not already use, so they keep the "
        f"canonical one: {sum(v for k, v in c['reworded_without_fresh_name'].items() if k.endswith(':test'))} of "
        f"{sum(queries['test'].values())} test queries keep at least one (mostly a gene known by one name only). The "
        "column 'renamed queries only' compares canonical and reworded on the queries where every entity was "
        "renamed.",
        "",
    ]
    lines += goals_line(data)
    systems = [s for s in ("bm25", "dense", "hybrid", "hybrid_mixed", "rrf", "bm25_expanded", "concepts",
                           "concepts_rm3", "served")
               if s in data["forms"]["canonical"]["all"]["ndcg@10"]["systems"]]
    lines += ["Every kind pooled, test split:", ""]
    lines += headline_table(data["forms"], systems, RETRIEVAL_LABELS)
    lines += ["Per relation kind (query counts in brackets), test split:", ""]
    lines += forms_tables(data["forms"], systems, RETRIEVAL_LABELS)
    if params.get("hybrid_choice"):
        lines += [f"Hybrid chosen on dev: {params['hybrid_choice']}.", ""]
    lines += [line for note in params.get("notes", []) for line in (note, "")]
    lines += concepts_lines(params.get("concepts"))
    lat = data["latency_ms"]
    lines += ["| latency (ms) | p50 | p95 |", "| --- | ---: | ---: |"]
    for name, v in lat.items():
        lines.append(f"| {name} | {_f(v.get('p50'), 2)} | {_f(v.get('p95'), 2)} |")
    lines += ["", "Timings (s): " + ", ".join(f"{k} {_f(v, 2)}" for k, v in data.get("timings_s", {}).items()), ""]
    return lines


def concepts_lines(concepts: dict | None) -> list[str]:
    """What the concept search knew, the one choice made on dev, and the precision of its "mentions all" group."""
    if not concepts:
        return []
    precision = concepts["mentions_all_precision"]
    lines = [
        f"Concept search. Lexicon: {concepts['lexicon']}. Concept index: {concepts['concept_index']}. Served: "
        f"{concepts['served']}.",
        "",
        f"Alias weight chosen on dev: {concepts['alternative_weight_chosen_on_dev']} (the code's default: "
        f"{concepts['alternative_weight_in_code']}). \"Mentions all\" precision against gold mentions: "
        f"{_f(precision['precision'])} ({precision['right']} of {precision['judged_hits']} hits; {precision['set']}).",
        "",
        "| dev (mean over every kind) | canonical NDCG@10 | canonical ER@10 | reworded NDCG@10 | reworded ER@10 |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    dev = concepts["dev"]
    for name in dev["canonical"]:
        lines.append(f"| {name} | {_f(dev['canonical'][name]['ndcg@10'])} | "
                     f"{_f(dev['canonical'][name]['entity_recall@10'])} | {_f(dev['reworded'][name]['ndcg@10'])} | "
                     f"{_f(dev['reworded'][name]['entity_recall@10'])} |")
    return [*lines, ""]


def v1_to_v2_section(v1: dict, v2: dict) -> list[str]:
    """The one paragraph comparing the v1 benchmark's published figures with v2's."""
    old, old_gene = v1["systems"], v1["systems_gene_only"]
    new = v2["forms"]

    def pooled(form: str, system: str, metric: str = "ndcg@10") -> str:
        return _f(new[form]["all"][metric]["systems"][system]["mean"])

    c1 = v1["counts"]
    return [
        "## Benchmark v1 → v2",
        "",
        f"v1 (run {v1['date'][:10]}, figures kept in `bench/results/v1/`) had {c1['queries_pair_test']} pair and "
        f"{c1['queries_gene_test']} gene-only test queries, named with the evidence abstracts' own mention texts, "
        "split by gene but not by document (so test positives were also training positives), and "
        f"{c1['records_a']} gene + variant records in all splits together. There BM25 scored NDCG@10 "
        f"{_f(old['bm25']['ndcg@10'])} (pair) / "
        f"{_f(old_gene['bm25']['ndcg@10'])} (gene only) and zero-shot dense {_f(old['dense']['ndcg@10'])} / "
        f"{_f(old_gene['dense']['ndcg@10'])}. v2 has {sum(v2['counts']['queries']['test'].values())} test queries "
        f"over five relation kinds ({v2['counts']['queries']['test'].get('gene_variant')} gene + variant), no "
        "document shared between training and evaluation positives, and three query forms. Every kind pooled, BM25 "
        f"scores {pooled('verbatim', 'bm25')} verbatim, {pooled('canonical', 'bm25')} canonical and "
        f"{pooled('reworded', 'bm25')} reworded; zero-shot dense {pooled('verbatim', 'dense')} / "
        f"{pooled('canonical', 'dense')} / {pooled('reworded', 'dense')}. From here on only v2 figures are "
        "published; canonical is the headline form.",
        "",
    ]


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
    return lines + [""] + scale_real_sections(data) + goals_line(data)


def _systems_table(systems: dict, quality: tuple[str, str, int], extra: tuple = ()) -> list[str]:
    """A table of ``systems``: a quality column (header, key, digits), p50 / p95 latency, build seconds, ``extra``."""
    columns = [quality[0], "p50 ms", "p95 ms", "build s", *(e[0] for e in extra)]
    rows = ["| system | " + " | ".join(columns) + " |", "| --- |" + " ---: |" * len(columns)]
    for name, system in systems.items():
        lat = system["latency_ms"]
        cells = [_f(system.get(quality[1]), quality[2]), _f(lat["p50"], 2), _f(lat["p95"], 2),
                 _f(system.get("build_s"), 1), *(_f(system.get(key), digits) for _, key, digits in extra)]
        rows.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return rows


def milvus_lines(data: dict) -> list[str]:
    """Milvus Lite against FAISS flat on the real corpus (scale.json's ``milvus``)."""
    m = data.get("milvus")
    if not m:
        return []
    lines = [
        f"Milvus Lite against FAISS flat ({m['date'][:10]}; {m['documents']:,} real abstracts, {m['queries']} dev "
        "queries, same MiniLM vectors; top-10):",
        "",
        *_systems_table(m["systems"], ("top-10 overlap with FAISS flat", "top10_overlap_with_faiss_flat", 4)),
    ]
    if "engine_bm25" in m:
        e = m["engine_bm25"]
        lines += ["", f"Milvus's own BM25 function against bm25s on the same query texts: top-10 overlap "
                      f"{_f(e['top10_overlap_with_bm25s'], 3)}, p95 {_f(e['latency_ms']['p95'], 2)} ms."]
    return lines + [""]


def milvus_synthetic_lines(data: dict) -> list[str]:
    """Milvus Lite per index kind on synthetic vectors (scale.json's ``milvus_synthetic``)."""
    m = data.get("milvus_synthetic")
    if not m:
        return []
    lines = [
        f"Milvus Lite per index kind ({m['date'][:10]}; {m['vectors']:,} synthetic {m['dimension']}-d vectors, "
        f"{m['queries']} held-out queries, recall@{m['k']} against exact search):",
        "",
        *_systems_table(m["systems"], ("recall@50", "recall@50", 4), extra=(("file MB", "file_mb", 1),)),
    ]
    return lines + [""]


def product_lines(data: dict) -> list[str]:
    """The product's query path per corpus size (scale.json's ``product_runs``, else ``product``)."""
    runs = data.get("product_runs") or ({str(data["product"]["documents"]): data["product"]} if "product" in data
                                        else {})
    if not runs:
        return []
    lines = ["| abstracts | p50 ms | p95 ms | mean ms | queries | peak RSS MB | BM25 build s | date |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for n in sorted(runs, key=int):
        r = runs[n]
        lat = r["latency_ms"]
        lines.append(f"| {int(n):,} | {_f(lat['p50'], 0)} | {_f(lat['p95'], 0)} | {_f(lat['mean'], 0)} | "
                     f"{r['queries']} | {r['peak_rss_mb']:,.0f} | {_f(r['build_s']['bm25'], 0)} | {r['date'][:10]} |")
    return lines + ["", f"Path: {runs[max(runs, key=int)]['path']}.", ""]


def ingest_lines(data: dict) -> list[str]:
    """PubMed XML ingestion and encoding throughput (scale.json's ``ingest``)."""
    i = data.get("ingest")
    if not i:
        return []
    phases = i["ingestion"]["phases"]
    runs = i["encoding"]["runs"]
    resumed = i["ingestion"]["kill_and_resume"]["no_loss_no_duplicate"]
    return [
        f"Ingestion ({i['date'][:10]}) of a {i['ingestion']['file']['records']:,}-record PubMed XML file: "
        + ", ".join(f"{name} {ph['records_per_s']:,.0f} records/s" for name, ph in phases.items()
                    if "records_per_s" in ph)
        + f"; killed and resumed without loss or duplicates: {resumed}."
        + " Encoding (MiniLM, abstracts/s): "
        + ", ".join(f"{name} {r['abstracts_per_s']}" for name, r in runs.items()) + ".",
        "",
    ]


def scale_real_sections(data: dict) -> list[str]:
    """scale.py's real-corpus sections (Milvus, the product's query path, ingestion and encoding), when run."""
    product = product_lines(data)
    if product:
        product = ["The product's query path (the real corpus replicated with new PMIDs; single queries):", "",
                   *product]
    return milvus_lines(data) + milvus_synthetic_lines(data) + product + ingest_lines(data)


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


def edel_section(data: dict, results: Path | None = None) -> list[str]:
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
                f"| {name} | {_f(classes['margins'].get(name), 1)} | {counts['positive']} | {counts['negative']} |"
            )
    lines += ["", f"Hybrid fusion chosen on dev: `{params.get('fusion_chosen_on_dev')}`.", ""]
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
    judged = ", ".join(f"{decisions.get(f'queries_{k}', 0)} {k}" for k in params.get("curator_kinds", []))
    lines = [
        "## The feedback loop on benchmark v2 (`bench/feedback.py`)",
        "",
        f"Run {data['date']} on {params.get('cpu_count')} CPU cores (load average "
        f"{_f(params['load_average_at_start'], 1) + ' at the start, ' if 'load_average_at_start' in params else ''}"
        f"{_f(params.get('load_average'), 1)} at the end: timings are inflated when other work shared the cores). "
        f"A simulated curator typed {judged} train queries with the KB's names and judged the served "
        f"top-{params['judged_per_query']} with the gold labels: {complete} complete, {rejected} not relevant "
        f"(record_decision p50 {_f(curator.get('record_decision_ms_p50'), 1)} ms). Each system after `before` is a "
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
                      f"queries): {_f(gain['mean_difference'], 4)}, 95% bootstrap interval "
                      f"[{_f(gain['ci95'][0], 4)}, {_f(gain['ci95'][1], 4)}].", ""]
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
        lines.append(f"| {name} | {job['training']['pairs']} | {_f(job['worker_timings_s'].get('total'), 0)} | "
                     f"{_f(t.get(f'{name}_click_to_serving'), 0)} | {job.get('fusion') or '–'} | {chosen} |")
    lines += [
        "",
        f"Click to serving (KB + decisions, from the Retrain call until the new version is active with its "
        f"retriever loaded, or the gate kept it inactive): {_f(t.get('click_to_serving'), 0)} s.",
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
        f"From the zero-shot version (served NDCG@10 {_f(q['before_ndcg@10'], 4)}), a simulated annotator grades "
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
        cells = " | ".join(f"{_f(pt['ndcg@10'], 4)} | {pt['relevant']}" if pt else "– | –" for pt in points)
        lines.append(f"| {decided} | {cells} |")
    reached = ", ".join(f"{o}: {f'{n} decisions' if n is not None else 'not reached'} (best gain "
                        f"{_f(q['best_gain'][o], 4)})" for o, n in q["decisions_to_gain"].items())
    points = [pt for c in q["curves"].values() for pt in c]
    activated = sum(1 for pt in points if pt.get("activated"))
    lines += ["", f"Decisions to a +{q['gain_target']} NDCG@10 gain — {reached}. The gate activated {activated} of "
              f"the {len(points)} versions built.", ""]
    return lines


def cross_encoder_section(data: dict) -> list[str]:
    n, rule, tr = data["ndcg@10"], data["cpu_rule"], data["training"]
    cfg = tr["config"]
    return [
        "## Cross-encoder re-ranking, dev only (`bench/_cross_encoder.py`)",
        "",
        f"A cross-encoder trained from the offline MiniLM weights on this CPU ({tr['examples']} graded examples from "
        f"{tr['records']}, {cfg['epochs']} epoch(s), {tr['steps']} steps, sequences of {cfg['max_length']} tokens, lr "
        f"{cfg['learning_rate']}), re-ranking BM25's top {data['k']} of {data['queries']} {data['split']} queries "
        f"({data['form']} form): NDCG@10 {_f(n['bm25']['mean'], 3)} → {_f(n['bm25_ce']['mean'], 3)} "
        f"(relative {_f(n['relative_gain'], 3)}); {rule['describe']}. It has not learned to rank in the steps a CPU "
        "job allows (its scores sit near the base rate of positives), so builds on a CPU do not train it by default "
        "and the build's dev check would switch it off. A GPU run, or a base model that is already a cross-encoder "
        "(MedCPT, when reachable), is what it needs.",
        "",
    ]


def suggest_section(data: dict) -> list[str]:
    """bench/suggest.py: the relation scorer against co-occurrence, and suggestions for the missing slot."""
    r = data["relation_extraction"]
    t = r["training"]
    lines = [
        "## Suggesting the missing slot (`bench/suggest.py`)",
        "",
        f"Run {data['date'][:10]}. **Relation extraction**: document-level, over co-mentioned concept pairs, gold "
        f"mentions. Trained on BioRED Train + BC5CDR Train ({t['documents']:,} documents, {t['pairs']:,} pairs, "
        f"{t['positives']:,} related; every Dev and Test PMID of both corpora held out, "
        f"{t['train_pmids_also_held_out']} Train PMIDs among them), threshold chosen out of fold on Train; scored on "
        "Dev. A gold relation with a concept that is never mentioned counts as a miss for every system.",
        "",
        "| Dev split | gold | system | precision | recall | F1 |",
        "| --- | ---: | --- | ---: | ---: | ---: |",
    ]
    labels = {"cooccurrence": "co-occurrence (every co-mentioned pair)", "same_sentence": "same sentence",
              "scorer_logreg": "scorer: logistic regression (kept)", "scorer_boosted": "scorer: gradient boosting"}
    names = {"biored": "BioRED, any relation", "bc5cdr": "BC5CDR, chemical-induced disease"}
    for corpus, d in r["dev"].items():
        for name, sc in d["systems"].items():
            lines.append(f"| {names.get(corpus, corpus)} | {d['gold_relations']:,} | {labels.get(name, name)} | "
                         f"{_f(sc['precision'])} | {_f(sc['recall'])} | {_f(sc['f1'])} |")
    s = data.get("suggestions")
    if s:
        q = s["queries"]
        setup = s["realistic_setup"]
        sel = s["selection"]
        lines += [
            "",
            f"**Suggestions** ({s['queries_total']:,} Dev queries: BioRED binary {q.get('biored_binary', 0):,}, "
            f"BioRED n-ary (a variant with its gene) {q.get('biored_nary', 0):,}, BC5CDR chemical ↔ disease "
            f"{q.get('bc5cdr_cid', 0):,}). A query is one concept of a gold relation with the other concept's kind "
            "missing; gold is every concept of that kind related to it in the split. MAP, MRR, Hits@1 and Recall@10 "
            "over the ranked candidates (ranx), 95% bootstrap intervals; the last column is the paired difference in "
            "MAP against co-occurrence over every document mentioning the query (what PubTator-style co-occurrence "
            "gives), with its interval.",
            "",
            f"*Realistic* (the product's setting): {setup['pool_documents']:,} abstracts (both Dev splits and "
            f"{setup['distractors_hoc']:,} HoC abstracts as distractors), mentions from the dictionary annotator over "
            "a lexicon without any Dev or Test name (DrugBank, CIViC, Train mentions), each slot typed as papers "
            "write it most often and linked by the query linker, the served search (BM25) for the top N; a predicted "
            "concept counts as the gold concept its mentions overlap most. *Gold mentions*: each corpus's Dev "
            "documents with their gold mentions (an upper bound).",
            "",
            "| setting | corpus | system | MAP | MRR | Hits@1 | Recall@10 | MAP − co-occurrence |",
            "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        system_names = {"frequency_prior": "frequency prior", "cooccurrence_all": "co-occurrence, every document",
                        "scorer_all": "relation scorer, every document",
                        "scorer_served_chosen": f"relation scorer, served top {sel['top_docs']} (the product)"}
        for setting in ("realistic", "gold_mentions"):
            for corpus, systems in s[setting].items():
                for name, m in systems.items():
                    if not isinstance(m, dict) or "map" not in m:
                        continue
                    label = system_names.get(name, name.replace("cooccurrence_served@", "co-occurrence, served top "))
                    diff = m.get("map_minus_cooccurrence")
                    delta = (f"{diff['mean']:+.3f} [{diff['ci95'][0]:+.3f}, {diff['ci95'][1]:+.3f}]" if diff else "")
                    lines.append(
                        f"| {setting.replace('_', ' ')} | {corpus} | {label} | {m['map']['mean']:.3f} "
                        f"[{m['map']['ci95'][0]:.3f}, {m['map']['ci95'][1]:.3f}] | {m['mrr']['mean']:.3f} | "
                        f"{m['hits@1']['mean']:.3f} | {m['recall@10']['mean']:.3f} | {delta} |")
        linked = {c: s["realistic"][c].get("queries_fully_linked") for c in s["realistic"]}
        lines += [
            "",
            f"Chosen on dev ({sel['by']}): top {sel['top_docs']} documents, rule {sel['rule']}, rank weight "
            f"{sel['weight']}, n-ary combine {sel['nary_combine']} (MAP {sel['map']:.4f}; best of every choice "
            f"{sel['best_map']:.4f}); the product uses it: {s['product']['matches_selection']}. Realistic queries "
            "whose every slot the linker linked: " + ", ".join(f"{c} {n:,}" for c, n in linked.items()) + ".",
        ]
    lat = data.get("latency")
    if lat:
        sug, sc = lat["suggest_top50"], lat["scoring_at_ingest"]
        default = next((v for k, v in lat.items() if k.startswith("suggest_top") and k != "suggest_top50"), None)
        lines += [
            "",
            f"**Latency** (this 2-core CPU; a fresh store loaded with the sample, {sc['documents']:,} abstracts): "
            f"scoring every co-mentioned pair at annotation {sc['pairs']:,} pairs in {sc['seconds']} s "
            f"({sc['documents_per_s_cpu']} abstracts/s); suggestions through `workflows.suggest` (the served search "
            f"plus the suggestions: the Curate page draws them from the search it has already run, so it adds less), "
            f"top {sug['top_docs']}, {sug['mode']}, for {sug['queries']} PO queries typed from the KB: p50 "
            f"{sug['p50_ms']} ms, p95 {sug['p95_ms']} ms"
            + (f" (top {default['top_docs']}, the product's default: p50 {default['p50_ms']} ms, p95 "
               f"{default['p95_ms']} ms)" if default else "")
            + f"; {sug['queries_with_suggestions']} had suggestions (mean {sug['mean_suggestions']}, "
            f"{sug['mean_new_to_kb']} new to the KB): the offline corpus holds few abstracts of CIViC's genes. The "
            f"app's matcher analyses the corpus ahead ({lat.get('matcher_warm_s', '?')} s here), as the app does.",
        ]
    return lines + [""] + goals_line(data)


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
            lines.append(f"| {corpus} | {label} | {_f(sc['precision'])} | {_f(sc['recall'])} | {_f(sc['f1'])} | "
                         f"{ms} |")
    return lines + [""]


def suggest_test_section(data: dict) -> list[str]:
    """bench/suggest.py --test: the Test splits, read once with everything chosen on dev."""
    r = data["relation_extraction"]["test"]
    s = data["suggestions"]
    lines = [
        "## Suggesting the missing slot: Test splits, read once (`bench/suggest.py --test`)",
        "",
        f"Run {data['date'][:10]}, everything as chosen on dev (the product's rule: top {s['product']['top_docs']}, "
        f"{s['product']['rule']}, {s['product']['weight']}, n-ary {s['product']['nary_combine']}); "
        f"{s['queries_total']:,} Test queries (" + ", ".join(f"{k} {v:,}" for k, v in s["queries"].items()) + ").",
        "",
        "| | co-occurrence | relation scorer (the product) |",
        "| --- | ---: | ---: |",
    ]
    for corpus, d in r.items():
        systems = d["systems"]
        lines.append(f"| relation extraction F1, {corpus} | {_f(systems['cooccurrence']['f1'])} | "
                     f"{_f(systems['scorer_logreg']['f1'])} |")
    for corpus, systems in s["realistic"].items():
        cooc, ours = systems["cooccurrence_all"]["map"], systems["scorer_served_chosen"]
        diff = ours["map_minus_cooccurrence"]
        lines.append(f"| suggestion MAP (realistic), {corpus} | {cooc['mean']:.3f} | {ours['map']['mean']:.3f} "
                     f"({diff['mean']:+.3f} [{diff['ci95'][0]:+.3f}, {diff['ci95'][1]:+.3f}]) |")
    return lines + [""] + goals_line(data)


def team_section(data: dict) -> list[str]:
    """bench/team.py: the enforcement matrix, the role check's cost on a decision, the OIDC sign-in time."""
    p, e, o = data["params"], data["enforcement"], data["overhead"]
    people = e["people"]
    lines = [
        "## Team mode: enforced roles, their cost, signing in (`bench/team.py`)",
        "",
        f"Run {data['date'][:10]} on a store of {p['store']['documents']:,} abstracts and "
        f"{p['store']['kb_records']:,} KB records (CIViC, BioRED, BC5CDR). Every write workflow called by each kind "
        "of person; `refused` = AccessDeniedError, `passed` = the role check let it through (heavy work stopped "
        f"right after it). {e['cells']} cells, {e['refused']} refused; cells that differ from the policy "
        f"(`curation.access.ROLE_ACTIONS`): {len(e['mismatches'])}; refusals that changed any table's row "
        f"count: {len(e['refusals_that_wrote'])}.",
        "",
        "| write path | " + " | ".join(people) + " |",
        "| --- | " + " | ".join("---" for _ in people) + " |",
    ]
    for row in e["rows"]:
        lines.append(f"| {row['write path']} | " + " | ".join(row[k] for k in people) + " |")
    rj = o["record_judgement_ms"]
    lines += [
        "",
        f"`record_judgement` (one committed, journaled decision), {rj['personal']['n']} each, alternating in "
        f"batches of 20 on copies of the same store: personal mode p50 {rj['personal']['p50']} ms / p95 "
        f"{rj['personal']['p95']} ms; team mode (a signed-in curator, roles read per write) p50 {rj['team']['p50']} "
        f"ms / p95 {rj['team']['p95']} ms. `access.require` alone: p50 {o['require_us']['p50']} µs, p95 "
        f"{o['require_us']['p95']} µs.",
    ]
    if s := data.get("sign_in"):
        lines += ["", f"Signing in through a local OpenID Connect provider in headless Chromium ({s['what']}): "
                      f"median {s['median_s']} s over {len(s['seconds'])} fresh browser profiles ({s['seconds']})."]
    goals = data["goals"]
    lines += ["", "Goals: " + "; ".join(f"{k} {v['value']} {v['op']} {v['target']}: "
                                       f"{'met' if v['met'] else 'MISSED'}" for k, v in goals.items()) + ".", ""]
    return lines


SECTIONS = (
    ("retrieval", retrieval_section),
    ("cross_encoder_dev", cross_encoder_section),
    ("edel", edel_section),
    ("feedback", feedback_section),
    ("entities", entities_section),
    ("matching", matching_section),
    ("scale", scale_section),
    ("suggest", suggest_section),
    ("suggest_cross_encoder", suggest_cross_encoder_section),
    ("suggest_test", suggest_test_section),
    ("app", app_section),
    ("first_run", first_run_section),
    ("reproduce", reproduce_section),
    ("team", team_section),
)


def render(results: Path) -> str:
    lines = [
        "# Benchmarks",
        "",
        "Generated by `python -m bench.report` from the JSON files in `bench/results/`; each JSON is "
        "written by the benchmark script named in its section. Machine: 2 CPU cores, 24 GiB, no GPU, unless "
        "a section says otherwise.",
        "",
    ]
    for name, section in SECTIONS:
        data = _load(results, name)
        if data is not None:
            lines += section(data, results) if section in (edel_section, entities_section) else section(data)
        if name == "retrieval" and data is not None and _load(results / "v1", "retrieval") is not None:
            lines += v1_to_v2_section(_load(results / "v1", "retrieval"), data)
    return "\n".join(lines).rstrip() + "\n"


PLACEHOLDER = re.compile(r"\{\{([a-z_0-9]+)(?::([A-Za-z0-9_.@-]+))?(?:\|([a-z0-9]+))?\}\}")


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
    if fmt in ("f0", "f1", "f2", "f3", "f4"):
        return f"{float(value):,.{fmt[1]}f}"
    if fmt == "mb":
        return f"{value / 2**20:.1f}"
    if fmt == "kb":
        return f"{value / 1024:.0f}"
    if fmt in ("range0", "range2"):
        digits = int(fmt[-1])
        return f"{min(value):.{digits}f}–{max(value):.{digits}f}"
    raise SystemExit(f"unknown format '{fmt}'")


SIZING_LABELS = {
    "faiss_flat": "FAISS flat (exact)", "faiss_hnsw": "FAISS HNSW M32, ef 128",
    "faiss_ivfpq_sq8_refine": "FAISS IVF-PQ m48 + SQ8 refine ×8", "milvus_lite_flat": "Milvus FLAT",
    "milvus_lite_hnsw": "Milvus HNSW M32, ef 128", "milvus_lite_ivf_sq8": "Milvus IVF_SQ8",
    "bm25s": "BM25 (bm25s, memory-mapped)",
}


def per_million_table(data: dict) -> str:
    """Measured memory, disk, build time and latency per million abstracts, per backend and index kind."""
    rows = ["| backend and kind | RAM MB / M | disk MB / M | build s / M (1 core) | recall@50 | p95 ms | measured at |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, f in data.get("per_million", {}).items():
        rows.append(f"| {SIZING_LABELS.get(name, name)} | {_f(f.get('ram_mb'), 0)} | {_f(f['disk_mb'], 0)} | "
                    f"{_f(f['build_s'], 0)} | {_f(f.get('recall@50'), 4)} | "
                    f"{_f(f.get('p95_ms_at_measured_size'), 2)} | {f['measured_at']:,} |")
    return "\n".join(rows)


def sizing_table(data: dict) -> str:
    """All of PubMed, from the per-million figures (every cell an estimate)."""
    sizing = data.get("sizing_36m", {})
    rows = [f"| {sizing.get('documents', 0) / 1e6:.0f}M abstracts, {sizing.get('dimension')}-d | RAM GB | disk GB | "
            f"build hours (1 core) | machines of {sizing.get('machine_gib')} GiB (half for the index) |",
            "| --- | ---: | ---: | ---: | ---: |"]
    for name, r in sizing.get("rows", {}).items():
        rows.append(f"| {SIZING_LABELS.get(name, name)} | {_f(r.get('ram_gb'), 1)} | {_f(r['disk_gb'], 1)} | "
                    f"{_f(r['build_hours_one_core'], 1)} | {r.get('machines_of_128_gib', '–')} |")
    return "\n".join(rows)


def dense_table(data: dict) -> str:
    """The synthetic section's dense systems: recall@50, latency, build time and index size."""
    rows = ["| setting | recall@50 | p50 ms | p95 ms | build s | index file MB |",
            "| --- | ---: | ---: | ---: | ---: | ---: |"]
    memory, timings = data.get("memory_mb", {}), data.get("timings_s", {})
    for name, s in data.get("systems", {}).items():
        lat = data["latency_ms"].get(name, {})
        index = s.get("index", "")
        rows.append(f"| `{name}` | {_f(s.get('recall@50'), 4)} | {_f(lat.get('p50'), 2)} | {_f(lat.get('p95'), 2)} | "
                    f"{_f(timings.get(index + '_build'), 1)} | {_f(memory.get(index, {}).get('index_file'), 1)} |")
    return "\n".join(rows)


TABLES = {"per_million_table": per_million_table, "sizing_table": sizing_table, "dense_table": dense_table,
          "milvus_table": lambda d: "\n".join(milvus_lines(d)).strip(),
          "milvus_synthetic_table": lambda d: "\n".join(milvus_synthetic_lines(d)).strip(),
          "product_table": lambda d: "\n".join(product_lines(d)).strip(),
          "ingest_line": lambda d: "\n".join(ingest_lines(d)).strip()}


def load_table(data: dict) -> str:
    rows = ["| sessions | decisions each | acknowledged | stored | errors | retrain running | click p50 ms "
            "| click p95 ms | click max ms | server p50 ms | server p95 ms | write p95 ms | decisions/s "
            "| load average |",
            "| ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in data["runs"]:
        lat = r["latency_ms"]
        server = r.get("server_decision_ms") or {}  # absent in runs before the server logged its time
        write = r.get("server_callback_ms") or {}
        rows.append(f"| {r['sessions']} | {r['decisions_per_session']} | {r['acknowledged']} | {r['stored']} | "
                    f"{r['errors']} | {'yes' if r['retrain_running'] else 'no'} | {_f(lat['p50'], 0)} | "
                    f"{_f(lat['p95'], 0)} | {_f(lat.get('max'), 0)} | {_f(server.get('p50'), 0)} | "
                    f"{_f(server.get('p95'), 0)} | {_f(write.get('p95'), 0)} | {_f(r.get('decisions_per_s'), 1)} | "
                    f"{_f(r.get('load_average_1min'), 1)} |")
    c = data["counts"]
    rows += ["", f"Run {data['date']} on a store of {c['documents']:,} abstracts and {c['kb_records']:,} KB records "
                 f"({data['params']['data']} data)."]
    return "\n".join(rows)


def render_reliability(results: Path, template: Path) -> str:
    """The reliability document: the template's prose with its placeholders filled from the JSONs."""
    return render_template(results, template, ("load", "backup", "app"))


def render_template(results: Path, template: Path, names: tuple[str, ...]) -> str:
    """A document template's prose with its ``{{name:path|format}}`` placeholders filled from the JSONs ``names``."""
    sources = {name: _load(results, name) for name in names}
    text = template.read_text()

    def fill(match: re.Match) -> str:
        name, path, fmt = match.groups()
        if name == "load_table":
            return load_table(sources["load"]) if sources["load"] else "(bench/load.py has not been run.)"
        if name in TABLES:  # {{sizing_table:scale}}: a table drawn from that JSON
            return TABLES[name](sources.get(path) or {})
        if name == "goals":  # {{goals:backup}}: that JSON's goals as one sentence
            return "\n".join(goals_line(sources.get(path) or {})).strip() or "(no goals in this run.)"
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
    parser.add_argument("--scaling-out", type=Path, default=ROOT / "docs" / "SCALING.md")
    args = parser.parse_args(argv)
    args.out.write_text(render(args.results))
    print(f"wrote {args.out}")
    args.reliability_out.write_text(render_reliability(args.results, ROOT / "bench" / "reliability.md.in"))
    print(f"wrote {args.reliability_out}")
    args.scaling_out.write_text(render_template(args.results, ROOT / "bench" / "scaling.md.in", ("scale",)))
    print(f"wrote {args.scaling_out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
