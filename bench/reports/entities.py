"""bench/results/entities.json -> the entities section (recogniser, linker) of docs/BENCHMARKS.md."""

from __future__ import annotations

from bench.reports.text import fmt, goals_line

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
        f"Train and DrugBank) in {fmt(linking.get('train_seconds'), 0)} s on {linking.get('device')}. Dictionary: "
        "the same training sources; 'unreachable' mentions have a concept the dictionary never names.",
        "",
        "| names | mentions | unreachable | " + " | ".join(LINK_SYSTEMS) + " | linker, reachable only |",
        "| --- | ---: | ---: |" + " ---: |" * (len(LINK_SYSTEMS) + 1),
    ]
    for key, title in LINK_SETS.items():
        t = linking["tests"].get(key)
        if not t:
            continue
        cells = [f"{fmt(t[s]['mention_acc1'])} / {fmt(t[s]['mention_acc5'])}" if s in t else "–" for s in LINK_SYSTEMS]
        reach = fmt(t["linker"]["reachable_acc1"]) if "linker" in t else "–"
        lines.append(f"| {title} | {t['mentions']} | {t.get('unreachable_mentions', 0)} | " + " | ".join(cells)
                     + f" | {reach} |")
    auto = linking.get("auto_link", {})
    if auto:
        lines += [
            "",
            f"Links applied automatically on Test (thresholds chosen on BioRED Dev + BC5CDR Dev for precision ≥ "
            f"0.98): {auto['applied']} of {auto['mentions']} mentions ({fmt(auto['coverage'])}), precision "
            f"{fmt(auto['precision'])}; of these, {auto['fuzzy_applied']} were not exact dictionary names, precision "
            f"{fmt(auto['fuzzy_precision'])}. Below the thresholds the candidates are offered, never applied.",
        ]
    dev_dict = linking.get("with_dev_dictionary", {})
    if dev_dict:
        parts = [f"{LINK_SETS.get(k, k)} {fmt(v['linker']['mention_acc1'])}" for k, v in dev_dict.items()
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


def entities_section(data: dict) -> list[str]:
    chosen = data["chosen_on_dev"]["system"]
    manifest = data["params"].get("recogniser_manifest", {})
    lines = [
        "## Entities: recogniser, linker, concept index (`bench/entities.py`)",
        "",
        f"Run {data['date']}. Exact-span precision / recall / F1 (same start, end and type as a gold mention). "
        f"The recogniser (`{manifest.get('name', '?')}`, spaCy CNN NER, width "
        f"{manifest.get('settings', {}).get('width', '?')}) was trained on BioRED Train + BC5CDR Train in "
        f"{fmt(manifest.get('train_seconds'), 0)} s on {manifest.get('device', '?')}, its checkpoint chosen on "
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
                cells.append(f"{fmt(e['precision'])} / {fmt(e['recall'])} / {fmt(e['f1'])}" if e else "–")
            lines.append(f"| {title} | {NER_LABELS.get(name, name)} | " + " | ".join(cells) + " |")
    t = data["throughput"]
    runs = "; ".join(f"{r['processes']} recogniser process(es): {fmt(r['seconds'], 1)} s, "
                     f"{fmt(r['abstracts_per_s'], 1)} abstracts/s" for r in t["by_processes"].values())
    lines += [
        "",
        f"Throughput ({NER_LABELS.get(t['system'], t['system'])} + linker, first sight of each text, "
        f"{data['params'].get('cpu_count')} CPU cores): {t['abstracts']} abstracts (every abstract of the data "
        f"directory, as ingest annotates them): {runs}. Loading the dictionaries, recogniser and linker took "
        f"{fmt(t['setup_s'], 1)} s.",
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
            lines.append(f"| {label} | {entry['pairs']} | {classes} | {fmt(entry['edel'])} | {fmt(entry['hybrid'])} |")
        lines.append("")
    return lines + goals_line(data)
