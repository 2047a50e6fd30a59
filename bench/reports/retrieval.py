"""bench/results/retrieval.json (and v1/retrieval.json) -> the retrieval sections of docs/BENCHMARKS.md."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from bench.reports.readers import Forms, Goals, read_result, with_forms_gathered
from bench.reports.text import fmt, forms_tables, goals_line, headline_table
from bench.reports.v2 import Counts, Leaks
from curation.versions.typed_json import OPTIONAL

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



@dataclass(frozen=True)
class MentionsAll:
    """Precision of the concept search's "mentions all" group against gold mentions."""

    precision: float
    judged_hits: int
    right: int
    set: str


@dataclass(frozen=True)
class Concepts:
    """What the concept search knew, the one choice made on dev, and its dev figures."""

    lexicon: str
    concept_index: str
    served: str
    alternative_weight_chosen_on_dev: object  # printed as written
    alternative_weight_in_code: object
    dev: Mapping[str, Mapping[str, Mapping[str, float]]]  # form → system → metric → mean
    mentions_all_precision: MentionsAll


@dataclass(frozen=True)
class Params:
    data_dir: str
    seed: int
    split_file: str
    encoder: str
    dense_index: str
    corpus_embeddings_cached: bool
    eval_k: int
    split_evaluated: str
    hybrid: Mapping[str, object]
    hybrid_mixed: Mapping[str, object]
    served: Mapping[str, object]
    selection_rule: str
    statistics: str
    candidates: Mapping[str, object]
    dev: Mapping[str, object]
    latency: str
    first_search_after_start: str
    load_average_1min_before_and_after_latency: tuple[object, ...]
    machine: Mapping[str, object]
    hybrid_choice: str | None = field(default=None, metadata=OPTIONAL)
    concepts: Concepts | None = field(default=None, metadata=OPTIONAL)
    notes: tuple[str, ...] = field(default=(), metadata=OPTIONAL)


@dataclass(frozen=True)
class Retrieval:
    """bench/retrieval.py's result: every retriever on benchmark v2's test split, three query forms."""

    date: str
    benchmark: str
    goals: Goals
    params: Params
    counts: Counts
    leaks: Leaks
    forms: Forms
    latency_ms: Mapping[str, Mapping[str, object]]  # path → p50, p95 (and what the curator path measured)
    timings_s: Mapping[str, float]


@dataclass(frozen=True)
class RetrievalV1:
    """The v1 benchmark's published figures (bench/results/v1/retrieval.json), kept for the comparison."""

    date: str
    params: Mapping[str, object]
    counts: Mapping[str, int]
    systems: Mapping[str, Mapping[str, float]]
    systems_gene_only: Mapping[str, Mapping[str, float]]
    latency_ms: Mapping[str, object]
    timings_s: Mapping[str, float]


class Results(NamedTuple):
    """retrieval.json and, when kept, v1's."""

    v2: Retrieval
    v1: RetrievalV1 | None


def read(results: Path) -> Results | None:
    """bench/results/retrieval.json and v1/retrieval.json; None when the benchmark was not run."""
    v2 = read_result(results, "retrieval", Retrieval, with_forms_gathered)
    return None if v2 is None else Results(v2, read_result(results / "v1", "retrieval", RetrievalV1))


def retrieval_sections(results: Results) -> list[str]:
    """The v2 section, then the paragraph comparing v1 with v2 when v1's figures are kept."""
    lines = retrieval_section(results.v2)
    return lines + (v1_to_v2_section(results.v1, results.v2) if results.v1 is not None else [])


def retrieval_section(data: Retrieval) -> list[str]:
    c, params = data.counts, data.params
    queries = c.queries
    leaks = data.leaks["test"]
    lines = [
        "## Retrieval, benchmark v2 (`bench/retrieval.py`)",
        "",
        f"Run {data.date}. Corpus {c.corpus_documents:,} abstracts (BioRED, BC5CDR, HoC). Records derived from "
        "BioRED's and BC5CDR's curated relations in five relation kinds; queries in three forms built from the same "
        "records (see `curation/learning/benchmark/`). Splits are saved (`bench/splits/benchmark_v2.json`), grouped "
        "by anchor concept and document-disjoint. Test queries per kind: "
        + ", ".join(f"{k} {v}" for k, v in queries["test"].items())
        + "; dev: " + ", ".join(f"{k} {v}" for k, v in queries["dev"].items()) + ".",
        "",
        "Leaks on test (every form): share of test positive documents that are training positives "
        f"{max(f.positive_docs_in_train for f in leaks.values())}, share of test query texts identical to a "
        f"training text {max(f.identical_query_texts for f in leaks.values())}. Records dropped as split "
        f"conflicts: {sum(c.split.records_dropped_as_conflicts.values())}; dev/test queries dropped for a text "
        f"identical to a training one: {sum(c.split.queries_dropped_identical_to_train.values())}. The "
        "reworded form renamed "
        + (f"{c.reworded_entities['test'].renamed} of {c.reworded_entities['test'].total} query entities "
           "on test; " if c.reworded_entities is not None else "")
        + "the others have no name in the corpus that the evidence abstracts do not already use, so they keep the "
        f"canonical one: {sum(v for k, v in c.reworded_without_fresh_name.items() if k.endswith(':test'))} of "
        f"{sum(queries['test'].values())} test queries keep at least one (mostly a gene known by one name only). The "
        "column 'renamed queries only' compares canonical and reworded on the queries where every entity was "
        "renamed.",
        "",
    ]
    lines += goals_line(data.goals)
    systems = [s for s in ("bm25", "dense", "hybrid", "hybrid_mixed", "rrf", "bm25_expanded", "concepts",
                           "concepts_rm3", "served")
               if s in data.forms["canonical"]["all"].metrics["ndcg@10"].systems]
    lines += ["Every kind pooled, test split:", ""]
    lines += headline_table(data.forms, systems, RETRIEVAL_LABELS)
    lines += ["Per relation kind (query counts in brackets), test split:", ""]
    lines += forms_tables(data.forms, systems, RETRIEVAL_LABELS)
    if params.hybrid_choice:
        lines += [f"Hybrid chosen on dev: {params.hybrid_choice}.", ""]
    lines += [line for note in params.notes for line in (note, "")]
    lines += concepts_lines(params.concepts)
    lat = data.latency_ms
    lines += ["| latency (ms) | p50 | p95 |", "| --- | ---: | ---: |"]
    for name, v in lat.items():
        lines.append(f"| {name} | {fmt(v.get('p50'), 2)} | {fmt(v.get('p95'), 2)} |")
    lines += ["", "Timings (s): " + ", ".join(f"{k} {fmt(v, 2)}" for k, v in data.timings_s.items()), ""]
    return lines


def concepts_lines(concepts: Concepts | None) -> list[str]:
    """What the concept search knew, the one choice made on dev, and the precision of its "mentions all" group."""
    if not concepts:
        return []
    precision = concepts.mentions_all_precision
    lines = [
        f"Concept search. Lexicon: {concepts.lexicon}. Concept index: {concepts.concept_index}. Served: "
        f"{concepts.served}.",
        "",
        f"Alias weight chosen on dev: {concepts.alternative_weight_chosen_on_dev} (the code's default: "
        f"{concepts.alternative_weight_in_code}). \"Mentions all\" precision against gold mentions: "
        f"{fmt(precision.precision)} ({precision.right} of {precision.judged_hits} hits; {precision.set}).",
        "",
        "| dev (mean over every kind) | canonical NDCG@10 | canonical ER@10 | reworded NDCG@10 | reworded ER@10 |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    dev = concepts.dev
    for name in dev["canonical"]:
        lines.append(f"| {name} | {fmt(dev['canonical'][name]['ndcg@10'])} | "
                     f"{fmt(dev['canonical'][name]['entity_recall@10'])} | {fmt(dev['reworded'][name]['ndcg@10'])} | "
                     f"{fmt(dev['reworded'][name]['entity_recall@10'])} |")
    return [*lines, ""]


def v1_to_v2_section(v1: RetrievalV1, v2: Retrieval) -> list[str]:
    """The one paragraph comparing the v1 benchmark's published figures with v2's."""
    old, old_gene = v1.systems, v1.systems_gene_only
    new = v2.forms

    def pooled(form: str, system: str, metric: str = "ndcg@10") -> str:
        return fmt(new[form]["all"].metrics[metric].systems[system].mean)

    c1 = v1.counts
    return [
        "## Benchmark v1 → v2",
        "",
        f"v1 (run {v1.date[:10]}, figures kept in `bench/results/v1/`) had {c1['queries_pair_test']} pair and "
        f"{c1['queries_gene_test']} gene-only test queries, named with the evidence abstracts' own mention texts, "
        "split by gene but not by document (so test positives were also training positives), and "
        f"{c1['records_a']} gene + variant records in all splits together. There BM25 scored NDCG@10 "
        f"{fmt(old['bm25']['ndcg@10'])} (pair) / "
        f"{fmt(old_gene['bm25']['ndcg@10'])} (gene only) and zero-shot dense {fmt(old['dense']['ndcg@10'])} / "
        f"{fmt(old_gene['dense']['ndcg@10'])}. v2 has {sum(v2.counts.queries['test'].values())} test queries "
        f"over five relation kinds ({v2.counts.queries['test'].get('gene_variant')} gene + variant), no "
        "document shared between training and evaluation positives, and three query forms. Every kind pooled, BM25 "
        f"scores {pooled('verbatim', 'bm25')} verbatim, {pooled('canonical', 'bm25')} canonical and "
        f"{pooled('reworded', 'bm25')} reworded; zero-shot dense {pooled('verbatim', 'dense')} / "
        f"{pooled('canonical', 'dense')} / {pooled('reworded', 'dense')}. From here on only v2 figures are "
        "published; canonical is the headline form.",
        "",
    ]
