"""bench/results/suggest.json -> the slot-suggestion section of docs/BENCHMARKS.md."""

from __future__ import annotations

from bench.reports.text import fmt, goals_line


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
                         f"{fmt(sc['precision'])} | {fmt(sc['recall'])} | {fmt(sc['f1'])} |")
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
