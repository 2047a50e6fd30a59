"""bench/results/matching.json -> the text-matching section of docs/BENCHMARKS.md."""

from __future__ import annotations

from bench.reports.text import fmt


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
                f"| {split} | {kind} | {s['gold']} | {fmt(s['exact']['precision'])} | "
                f"{fmt(s['exact']['recall'])} | {fmt(s['exact']['f1'])} | {fmt(s['overlap']['precision'])} | "
                f"{fmt(s['overlap']['recall'])} |"
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
            f"{fmt(s['dev'][k]['exact']['recall'])} / {fmt(s['dev'][k]['exact']['precision'])}"
            if k in s["dev"] else "–"
            for k in ("variant", "chemical", "gene", "disease")
        ]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    t = data.get("timings_s", {})
    lines += [
        "",
        f"Speed: `find_all` {fmt(t.get('find_all_ms_per_abstract'), 2)} ms per new abstract, "
        f"{fmt(t.get('find_all_ms_per_abstract_cached_text'), 2)} ms when the text was seen before; "
        f"g(e, d) {fmt(t.get('g_ed_ms_per_pair'), 2)} ms per pair; "
        f"matcher build {fmt(t.get('matcher_build_s'), 1)} s.",
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
