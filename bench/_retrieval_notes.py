"""The retrieval benchmark's notes: sentences on what the figures mean, built from the run's own figures."""

from __future__ import annotations

from collections.abc import Mapping

from bench._dev_choices import (
    CANDIDATES,
    dense_share,
    shortfall,
)


def notes(report: Mapping, chosen: str, mixed: str, dev: Mapping) -> list[str]:
    """Sentences on what the figures mean, built from this run's figures."""
    counts, latency_ms, forms = report["counts"], report["latency_ms"], report["forms"]
    derivation = counts["derivation"]

    def ndcg(form: str, system: str) -> float:
        return forms[form]["all"]["ndcg@10"]["systems"][system]["mean"]

    out = [
        f"gene_variant records: {derivation['variant_relations']} variant-chemical/disease relations over "
        f"{derivation['variants_with_gene'] + derivation['variants_without_gene']} (document, variant) pairs; "
        f"{derivation['variants_with_gene']} got the gene whose single-id mention lies nearest (character gap; ties "
        "to the more often mentioned gene, then the smaller id), "
        f"{derivation['variants_without_gene']} had no gene mention; median gap "
        f"{derivation['variant_gene_gap_median_chars']} characters, {derivation['variant_gene_gap_over_100_chars']} "
        "over 100 (rs numbers in association studies are often far from their gene: the likeliest wrong genes).",
        f"Names matter more than models: BM25 NDCG@10 over every test query is {ndcg('verbatim', 'bm25'):.3f} when "
        f"queries quote the evidence (verbatim), {ndcg('canonical', 'bm25'):.3f} with the KB's names (canonical) and "
        f"{ndcg('reworded', 'bm25'):.3f} with other documents' names (reworded); zero-shot dense "
        f"{ndcg('verbatim', 'dense'):.3f} / {ndcg('canonical', 'dense'):.3f} / {ndcg('reworded', 'dense'):.3f}.",
    ]
    if dense_share(CANDIDATES[chosen]) == 0:
        out.append(
            f"The hybrid chosen on dev keeps BM25's order (dense fills the list only when BM25 finds fewer than k): "
            f"every fusion in which the zero-shot MiniLM changes BM25's order fell below BM25 on dev (the closest, "
            f"{mixed}, by {shortfall(dev, mixed):.4f}). A trained encoder is judged by the same dev rule."
        )
    served = latency_ms["curator_path"]["p95"]
    renamed = forms["canonical"]["all_renamed"]["ndcg@10"]["systems"]
    out.append(
        "Served over BM25 on the canonical form, NDCG@10: "
        f"{ndcg('canonical', 'served') / ndcg('canonical', 'bm25'):.3f} over every query; a 1.25 ratio would need "
        f"NDCG@10 {1.25 * ndcg('canonical', 'bm25'):.3f} "
        f"({'above' if 1.25 * ndcg('canonical', 'bm25') > 1 else 'within'} the metric's ceiling of 1). On the "
        f"{forms['canonical']['all_renamed']['queries']} queries whose reworded form renames every entity (where the "
        f"canonical name is least often the evidence's), the ratio is "
        f"{renamed['served']['mean'] / renamed['bm25']['mean']:.3f}."
    )
    out.append(
        f"Concept search: served NDCG@10 {ndcg('canonical', 'served'):.3f} canonical / "
        f"{ndcg('reworded', 'served'):.3f} reworded against BM25's {ndcg('canonical', 'bm25'):.3f} / "
        f"{ndcg('reworded', 'bm25'):.3f}; BM25 over every form alone (bm25_expanded) "
        f"{ndcg('canonical', 'bm25_expanded'):.3f} / {ndcg('reworded', 'bm25_expanded'):.3f}; with RM3 "
        f"{ndcg('canonical', 'concepts_rm3'):.3f} / {ndcg('reworded', 'concepts_rm3'):.3f}."
    )
    out.append(
        f"Curator path p95 <= 100 ms: {'met' if served <= 100 else 'missed'} ({served:.0f} ms through curate_search on "
        f"a real store, the concept index in it)."
    )
    return out
