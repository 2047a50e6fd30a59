"""bench/results/suggest.json -> the slot-suggestion section of docs/BENCHMARKS.md.

Its records are shared with bench/results/suggest_test.json (the same script with ``--test``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bench.reports.flagship import Flagship, flagship_lines
from bench.reports.readers import Goals, at_cutoffs, decode_result, read_result
from bench.reports.text import fmt, goals_line
from curation.versions.typed_json import OPTIONAL


@dataclass(frozen=True)
class PairScores:
    """Pair-level precision, recall and F1 with their counts."""

    precision: float
    recall: float
    f1: float
    tp: int
    fp: int
    fn: int


@dataclass(frozen=True)
class RelationTraining:
    documents: int
    pairs: int
    positives: int
    held_out_pmids: int
    train_pmids_also_held_out: int
    seconds: float
    threshold_logreg: float
    threshold_boosted: float
    # the pair text model's training figures (pairs one sentence holds, CIViC statements, tokens); older runs: none
    pair_text: Mapping[str, object] | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class RelationSplit:
    """Relation extraction on one corpus's split: every system's pair scores."""

    documents: int
    candidate_pairs: int
    gold_relations: int
    gold_without_candidate: int
    systems: Mapping[str, PairScores]
    scoring_ms_per_1000_pairs: float


@dataclass(frozen=True)
class RelationExtraction:
    training: RelationTraining
    dev: Mapping[str, RelationSplit] | None = field(default=None, metadata=OPTIONAL)
    test: Mapping[str, RelationSplit] | None = field(default=None, metadata=OPTIONAL)
    # the direction model trained with the scorer: per head its examples and dev figures (printed as written)
    direction: Mapping[str, object] | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class MeanCi:
    mean: float
    ci95: tuple[float, float]
    p_value: float | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class Ranking:
    """One suggestion system's ranking figures over the queries (ranx), with intervals."""

    map: MeanCi
    mrr: MeanCi
    hits_at_1: MeanCi
    recall_at_10: MeanCi
    map_minus_cooccurrence: MeanCi | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class RealisticSetup:
    pool_documents: int
    distractors_hoc: int
    predicted_mentions: int
    aligned_concepts: int
    seconds: float


@dataclass(frozen=True)
class Selection:
    """The suggestion rule chosen on dev, and the MAP of every rule tried."""

    split: str
    by: str
    top_docs: int
    rule: str
    weight: str
    nary_combine: str
    map: float
    best_map: float
    all: Mapping[str, float]
    sentence: bool | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class Product:
    """The rule the product uses (and whether it is the one chosen on dev)."""

    top_docs: int
    rule: str
    weight: str
    nary_combine: str
    matches_selection: bool
    sentence: bool | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class Suggestions:
    queries: Mapping[str, int]
    # setting → corpus → system → ranking figures, beside counts (queries_fully_linked, map_by_kind)
    gold_mentions: Mapping[str, Mapping[str, object]]
    realistic: Mapping[str, Mapping[str, object]]
    realistic_setup: RealisticSetup
    selection: Selection
    queries_total: int
    seconds: float
    product: Product
    # the generic-concept list and what it was chosen from (per corpus: top-3 counts, gold counts, MAP)
    generic: Mapping[str, object] | None = field(default=None, metadata=OPTIONAL)

    def rankings(self, setting: str, corpus: str) -> dict[str, Ranking]:
        """The systems of one setting and corpus with their ranking figures (the counts beside them left out)."""
        entries = self.gold_mentions if setting == "gold_mentions" else self.realistic
        return {name: decode_result(Ranking, at_cutoffs(m), f"suggestions.{setting}.{corpus}.{name}")
                for name, m in entries[corpus].items() if isinstance(m, dict) and "map" in m}


@dataclass(frozen=True)
class ScoringAtIngest:
    documents: int
    pairs: int
    seconds: object  # printed as written
    documents_per_s_cpu: object


@dataclass(frozen=True)
class SuggestLatency:
    """``workflows.suggest`` timed over PO queries typed from the KB (figures printed as written)."""

    queries: int
    top_docs: int
    mode: str
    p50_ms: object
    p95_ms: object
    max_ms: object
    queries_with_suggestions: int
    mean_suggestions: object
    mean_new_to_kb: object


@dataclass(frozen=True)
class Latency:
    """Timings on a fresh store loaded with the sample; ``suggest_topN`` entries, one per N tried."""

    sample_load_s: float
    annotation_with_scoring: str
    scoring_at_ingest: ScoringAtIngest
    by_top: Mapping[str, SuggestLatency]
    matcher_warm_s: object = field(default="?", metadata=OPTIONAL)


def _latency(data: object) -> object:
    """The raw ``latency`` with its ``suggest_topN`` entries gathered under ``by_top``."""
    if not isinstance(data, dict):
        return data
    latency = data.get("latency")
    if isinstance(latency, dict):
        tops = {k: v for k, v in latency.items() if k.startswith("suggest_top")}
        latency = {**{k: v for k, v in latency.items() if k not in tops}, "by_top": tops}
        return {**data, "latency": latency}
    return data


@dataclass(frozen=True)
class Suggest:
    """bench/suggest.py's result (and, with ``--test``, suggest_test.json's)."""

    date: str
    params: Mapping[str, object]
    relation_extraction: RelationExtraction
    suggestions: Suggestions
    best_scorer_f1: Mapping[str, float]
    goals: Goals = field(default_factory=dict, metadata=OPTIONAL)
    latency: Latency | None = field(default=None, metadata=OPTIONAL)
    flagship: Flagship | None = field(default=None, metadata=OPTIONAL)


def read(results: Path, name: str = "suggest") -> Suggest | None:
    """bench/results/suggest.json (or ``name``.json), None when it was not run."""
    return read_result(results, name, Suggest, _latency)


def suggest_section(data: Suggest) -> list[str]:
    """bench/suggest.py: the relation scorer against co-occurrence, and suggestions for the missing slot."""
    r = data.relation_extraction
    t = r.training
    lines = [
        "## Suggesting the missing slot (`bench/suggest.py`)",
        "",
        f"Run {data.date[:10]}. **Relation extraction**: document-level, over co-mentioned concept pairs, gold "
        f"mentions. Trained on BioRED Train + BC5CDR Train ({t.documents:,} documents, {t.pairs:,} pairs, "
        f"{t.positives:,} related; every Dev and Test PMID of both corpora held out, "
        f"{t.train_pmids_also_held_out} Train PMIDs among them), threshold chosen out of fold on Train; scored on "
        "Dev. A gold relation with a concept that is never mentioned counts as a miss for every system."
        + (f" The pair text model (the words of the sentences holding both concepts) learned from "
           f"{t.pair_text.get('pairs', 0):,} such Train pairs and {t.pair_text.get('civic_statements', 0):,} CIViC "
           "therapy statements; the scorer reads it out of fold." if t.pair_text else ""),
        "",
        "| Dev split | gold | system | precision | recall | F1 |",
        "| --- | ---: | --- | ---: | ---: | ---: |",
    ]
    labels = {"cooccurrence": "co-occurrence (every co-mentioned pair)", "same_sentence": "same sentence",
              "scorer_logreg": "scorer: logistic regression (kept)", "scorer_boosted": "scorer: gradient boosting",
              "scorer_without_text": "scorer without the pair text model (the ablation)",
              "scorer_induces": "scorer, and the direction model says induces (the product's Chemical-Disease rule)"}
    names = {"biored": "BioRED, any relation", "bc5cdr": "BC5CDR, chemical-induced disease"}
    for corpus, d in (r.dev or {}).items():
        for name, sc in d.systems.items():
            lines.append(f"| {names.get(corpus, corpus)} | {d.gold_relations:,} | {labels.get(name, name)} | "
                         f"{fmt(sc.precision)} | {fmt(sc.recall)} | {fmt(sc.f1)} |")
    lines += direction_lines(r.direction)
    s = data.suggestions
    if s:
        q = s.queries
        setup = s.realistic_setup
        sel = s.selection
        lines += [
            "",
            f"**Suggestions** ({s.queries_total:,} Dev queries: BioRED binary {q.get('biored_binary', 0):,}, "
            f"BioRED n-ary (a variant with its gene) {q.get('biored_nary', 0):,}, BC5CDR chemical ↔ disease "
            f"{q.get('bc5cdr_cid', 0):,}). A query is one concept of a gold relation with the other concept's kind "
            "missing; gold is every concept of that kind related to it in the split. MAP, MRR, Hits@1 and Recall@10 "
            "over the ranked candidates (ranx), 95% bootstrap intervals; the last column is the paired difference in "
            "MAP against co-occurrence over every document mentioning the query (what PubTator-style co-occurrence "
            "gives), with its interval.",
            "",
            f"*Realistic* (the product's setting): {setup.pool_documents:,} abstracts (both Dev splits and "
            f"{setup.distractors_hoc:,} HoC abstracts as distractors), mentions from the dictionary annotator over "
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
                        "scorer_served_chosen": f"relation scorer, served top {sel.top_docs} (the product)"}
        for setting in ("realistic", "gold_mentions"):
            for corpus in (s.gold_mentions if setting == "gold_mentions" else s.realistic):
                for name, m in s.rankings(setting, corpus).items():
                    label = system_names.get(name, name.replace("cooccurrence_served@", "co-occurrence, served top "))
                    diff = m.map_minus_cooccurrence
                    delta = f"{diff.mean:+.3f} [{diff.ci95[0]:+.3f}, {diff.ci95[1]:+.3f}]" if diff else ""
                    lines.append(
                        f"| {setting.replace('_', ' ')} | {corpus} | {label} | {m.map.mean:.3f} "
                        f"[{m.map.ci95[0]:.3f}, {m.map.ci95[1]:.3f}] | {m.mrr.mean:.3f} | "
                        f"{m.hits_at_1.mean:.3f} | {m.recall_at_10.mean:.3f} | {delta} |")
        linked = {c: s.realistic[c].get("queries_fully_linked") for c in s.realistic}
        lines += [
            "",
            f"Chosen on dev ({sel.by}): top {sel.top_docs} documents, rule {sel.rule}, rank weight "
            f"{sel.weight}, n-ary combine {sel.nary_combine}"
            + (f", sentence pairs only: {sel.sentence}" if sel.sentence is not None else "")
            + f" (MAP {sel.map:.4f}; best of every choice {sel.best_map:.4f}); the product uses it: "
            f"{s.product.matches_selection} (top {s.product.top_docs}, {s.product.rule}/{s.product.weight}, "
            f"n-ary {s.product.nary_combine}"
            + (f", sentence pairs only: {s.product.sentence}" if s.product.sentence is not None else "")
            + "). Realistic queries whose every slot the linker linked: "
            + ", ".join(f"{c} {n:,}" for c, n in linked.items()) + ".",
        ]
        lines += generic_lines(s.generic)
    lat = data.latency
    if lat:
        sug, sc = lat.by_top["suggest_top50"], lat.scoring_at_ingest
        default = next((v for k, v in lat.by_top.items() if k != "suggest_top50"), None)
        lines += [
            "",
            f"**Latency** (this 2-core CPU; a fresh store loaded with the sample, {sc.documents:,} abstracts): "
            f"scoring every co-mentioned pair at annotation {sc.pairs:,} pairs in {sc.seconds} s "
            f"({sc.documents_per_s_cpu} abstracts/s); suggestions through `workflows.suggest` (the served search "
            f"plus the suggestions: the Curate page draws them from the search it has already run, so it adds less), "
            f"top {sug.top_docs}, {sug.mode}, for {sug.queries} PO queries typed from the KB: p50 "
            f"{sug.p50_ms} ms, p95 {sug.p95_ms} ms"
            + (f" (top {default.top_docs}, the product's default: p50 {default.p50_ms} ms, p95 "
               f"{default.p95_ms} ms)" if default else "")
            + f"; {sug.queries_with_suggestions} had suggestions (mean {sug.mean_suggestions}, "
            f"{sug.mean_new_to_kb} new to the KB): the offline corpus holds few abstracts of CIViC's genes. The "
            f"app's matcher analyses the corpus ahead ({lat.matcher_warm_s} s here), as the app does.",
        ]
    lines += flagship_lines(data.flagship)
    return lines + [""] + goals_line(data.goals)


def direction_lines(direction: Mapping[str, object] | None) -> list[str]:
    """The direction model's training data and dev figures, one paragraph."""
    if not direction:
        return []
    parts = []
    for head, labels in (("therapy", "responds to / resistance"), ("disease", "treats / induces")):
        d = direction.get(head)
        if not isinstance(d, Mapping):
            continue
        dev = d.get("dev_civic_pmid_split") or d.get("dev_corpora") or {}
        where = ("CIViC statements of one PMID in five, held out of that fit" if "dev_civic_pmid_split" in d
                 else "the split's chemical-disease sentences")
        per_label = ", ".join(f"{k} {v:,}" for k, v in d.get("per_label", {}).items())
        sources = ", ".join(f"{k} {v:,}" for k, v in d.get("per_source", {}).items())
        scores = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in dev.items() if k != "examples")
        parts.append(f"*{head}* ({labels}): {d.get('examples', 0):,} sentences ({per_label}; from {sources}); on "
                     f"{where} ({int(dev.get('examples', 0)):,}): {scores}")
    return ["", "**Direction** (`curation/relations/direction.py`, trained with the scorer in "
            f"{direction.get('seconds', '?')} s; {direction.get('held_out_pmids', 0):,} Dev/Test PMIDs held out, "
            "CIViC statements citing them too): " + "; ".join(parts) + "."]


def generic_lines(generic: Mapping[str, object] | None) -> list[str]:
    """The generic-concept list, what it was chosen from, and what it changes."""
    if not generic:
        return []
    lines = ["", "**Generic concepts** left out of the suggestions (`curation/relations/generic_concepts.py`: "
             + ", ".join(str(c) for c in generic.get("list", ())) + "), chosen from the candidates most often in "
             "a Dev query's top 3 under the product's rule without the list, and how often they were gold there:", ""]
    for corpus, d in generic.items():
        if not isinstance(d, Mapping):
            continue
        top = "; ".join(f"{x['concept']} {x['top3']} ({x['gold']} gold)" for x in d.get("most_in_top3", [])[:12])
        listed = d.get("queries_with_listed_in_top3", {})
        maps = d.get("map_top20", {})
        lines.append(f"- {corpus} ({d.get('queries', 0):,} queries): a listed concept in the top 3 of "
                     f"{listed.get('unfiltered')} queries without the list, {listed.get('filtered')} with it; MAP "
                     f"(top 20) {maps.get('unfiltered')} without, {maps.get('filtered')} with; most in the top 3: "
                     f"{top}")
    return lines
