"""``suggestion_top5_treatment_precision`` for bench/first_run.py: are the top 5 Treatment suggestions drugs?

Queries: the CIViC (Gene, Variant) pairs of the store's KB whose gene the store's concept index finds in an
abstract, those whose gene and variant one abstract names first (the sample holds 21 such pairs), then by the
abstracts naming the gene, at most :data:`PER_GENE` variants a gene; the first :data:`QUERIES`. Each is
searched once (the served search, as ``python -m curation suggest`` does) and its suggestions drawn twice from the
same ranking: without the answer-kind filter (before) and with it (after).

The judge is not the filter: a suggestion is a drug or therapy when one of its names (its display name and the
lexicon's names of its concept ids, compared case-insensitively) is

* a drug of the installed ``drug-named-entity-recognition`` vocabulary (read through its package) that has a
  MedlinePlus drug monograph or an NHS medicines page, i.e. a medicine people are given, or
* a therapy of CIViC's two exports in the data folder (the 2026 file's ``therapies`` column, the 2018 file's
  ``drugs`` column; each part of a combination or a parenthesis).

The filter never reads MedlinePlus or NHS links; it learns from the KB's names, so the CIViC half of the judge
and the filter's "the KB says so" share a source: :func:`judge_figures` also gives the share judged by the
medicine half alone (fully independent) and by DrugBank membership in the drug vocabulary (lenient: water and
formaldehyde have DrugBank ids).
"""

from __future__ import annotations

import csv
import importlib
import re
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

QUERIES = 50
TOP = 5
TOP_DOCS = 20  # the documents a suggestion reads (the product's default, chosen on dev)
PER_GENE = 3  # variants of one gene at most, so the few genes the corpus names most do not fill the set
# (gene, variant, abstracts naming both, abstracts naming the gene) for the KB's PO pairs whose gene the concept
# index finds (by text or canonical name, any case; variants by notation key or text).
SQL_QUERIES = """
WITH named AS (
    SELECT json_extract_string(entities, '$.Gene') AS gene, json_extract_string(entities, '$.Variant') AS variant
    FROM kb_records WHERE schema_name = 'PO'
), pairs AS (
    SELECT gene, min(variant) AS variant FROM named GROUP BY gene, lower(variant)
), genes AS (
    SELECT DISTINCT pmid, lower(text) AS name FROM annotations WHERE entity_type = 'gene'
    UNION SELECT DISTINCT pmid, lower(canonical) FROM annotations WHERE entity_type = 'gene'
), variants AS (
    SELECT DISTINCT pmid, lower(concept_id) AS name FROM annotations WHERE entity_type = 'variant'
    UNION SELECT DISTINCT pmid, lower(text) FROM annotations WHERE entity_type = 'variant'
), counted AS (
    SELECT p.gene, p.variant, count(DISTINCT v.pmid) AS both_named, count(DISTINCT g.pmid) AS gene_named
    FROM pairs p JOIN genes g ON g.name = lower(p.gene)
    LEFT JOIN variants v ON v.pmid = g.pmid AND v.name = lower(p.variant)
    WHERE p.gene <> '' AND p.variant <> ''
    GROUP BY 1, 2
), ranked AS (
    SELECT *, row_number() OVER (PARTITION BY gene ORDER BY both_named DESC, variant) AS nth FROM counted
)
SELECT gene, variant, both_named, gene_named FROM ranked WHERE nth <= ?
ORDER BY both_named DESC, gene_named DESC, gene, variant LIMIT ?
"""
_CIVIC_PARTS = re.compile(r"\s*(?:,|\+|\(|\))\s*")
CIVIC_FILES = (("civic_evidence_2026-05.tsv", "therapies"), ("civic_evidence_2018-05_v1schema.tsv", "drugs"))


def treatment_queries(con, n: int = QUERIES) -> list[tuple[str, str, int, int]]:
    """(gene, variant, abstracts naming both, abstracts naming the gene) for the first ``n`` CIViC pairs."""
    return [(g, v, int(b), int(k)) for g, v, b, k in con.execute(SQL_QUERIES, [PER_GENE, n]).fetchall()]


class DrugJudge:
    """Whether a name is a medicine (MedlinePlus / NHS in the drug vocabulary) or a CIViC therapy."""

    def __init__(self, civic_dir: Path) -> None:
        finder = importlib.import_module("drug_named_entity_recognition.drugs_finder")
        self.medicines: set[str] = set()
        self.drugbank: set[str] = set()
        for canonical, data in finder.drug_canonical_to_data.items():  # read, never changed
            names = {canonical, data.get("name") or "", *(data.get("synonyms") or ())}
            names = {str(n).casefold() for n in names if n}
            if data.get("medline_plus_id") or data.get("nhs_url"):
                self.medicines |= names
            if data.get("drugbank_id"):
                self.drugbank |= names
        self.civic: set[str] = set()
        for name, column in CIVIC_FILES:
            with (civic_dir / name).open(newline="", encoding="utf-8") as handle:
                for row in csv.DictReader(handle, delimiter="\t"):
                    self.civic |= {p.casefold() for p in _CIVIC_PARTS.split(row.get(column) or "") if p.strip()}

    def judge(self, names: Sequence[str]) -> dict[str, bool]:
        folded = {n.casefold() for n in names if n}
        medicine, civic = bool(folded & self.medicines), bool(folded & self.civic)
        return {"medicine_or_civic": medicine or civic, "medicine": medicine, "drugbank": bool(folded & self.drugbank)}


def judge_figures(con, data_dir: Path, queries: int = QUERIES, mode: str = "hybrid") -> dict:
    """Top-5 Treatment precision before (no kind filter) and after (the filter), on the same queries and
    rankings, with the judges of the module docstring; the names judged not a drug, most frequent first."""
    from curation.config import load_settings
    from curation.entities.postings import StorePostings
    from curation.relations import answer_filter as answers
    from curation.relations.answer_filter import answer_filter, choose_on_dev, training_examples
    from curation.retrieval.relation_search import SearchOptions, search_relation
    from curation.schemas import PO
    from curation.store.corpus import get_documents
    from curation.workflows.search import Searcher
    from curation.workflows.suggest import suggest_from

    judge = DrugJudge(data_dir / "civic")
    clock = time.perf_counter()
    searcher = Searcher(con)
    lexicon = searcher.matcher.lexicon
    engine, _ = searcher.engine(PO)
    build_s = time.perf_counter() - clock
    cache_dir = load_settings().cache_dir / "answers"
    clock = time.perf_counter()
    answer_filter(con, PO, lexicon)  # learned (no decisions kept yet): what the first process pays
    learn_s = time.perf_counter() - clock
    answers._CACHE.clear()
    answer_filter(con, PO, lexicon, cache_dir)  # the decisions written (or found there)
    answers._CACHE.clear()
    clock = time.perf_counter()
    answer_filter(con, PO, lexicon, cache_dir)  # read back: what every later process pays
    read_s = time.perf_counter() - clock
    asked = treatment_queries(con, queries)
    tallies = {when: Counter() for when in ("before", "after")}
    wrong: dict[str, Counter] = {when: Counter() for when in tallies}
    with_suggestions = Counter()
    for gene, variant, _, _ in asked:
        values = {"Gene": gene, "Variant": variant}
        result = search_relation(engine, searcher.linker, searcher.matcher, StorePostings(con),
                                 lambda pmids: {d.pmid: d for d in get_documents(con, list(pmids))}, PO, values,
                                 SearchOptions(mode=mode, k=TOP_DOCS))
        ranks = {h.pmid: h.rank for h in result.hits}
        for when, flag in (("before", False), ("after", True)):
            shown = suggest_from(con, searcher.matcher, PO, values, result.concepts, ranks, TOP_DOCS,
                                 kind_filter=flag).suggestions[:TOP]
            with_suggestions[when] += bool(shown)
            for s in shown:
                names = [s.name, *(n for cid in s.concept_ids for n in lexicon.names("chemical", cid))]
                verdict = judge.judge(names)
                tallies[when]["shown"] += 1
                tallies[when].update(k for k, v in verdict.items() if v)
                if not verdict["medicine_or_civic"]:
                    wrong[when][s.name] += 1
    examples, _ = training_examples(con, PO, lexicon)
    dev = choose_on_dev(examples)

    def share(when: str, key: str) -> float | None:
        shown = tallies[when]["shown"]
        return round(tallies[when][key] / shown, 4) if shown else None

    return {
        "queries": [f"{g} {v}" for g, v, _, _ in asked],
        "queries_with_abstracts_naming_both": sum(b > 0 for _, _, b, _ in asked),
        "queries_with_suggestions": dict(with_suggestions),
        "suggestions_judged": {w: tallies[w]["shown"] for w in tallies},
        "precision": {w: {k: share(w, k) for k in ("medicine_or_civic", "medicine", "drugbank")} for w in tallies},
        "not_drugs": {w: [f"{n} ({k})" for n, k in wrong[w].most_common(25)] for w in wrong},
        "filter_dev": dev,
        "searcher_build_s": round(build_s, 1),
        "filter_learn_s": round(learn_s, 2),
        "filter_read_s": round(read_s, 2),
        "mode": mode,
        "top_docs": TOP_DOCS,
        "judge": "medicine_or_civic: a drug of drug-named-entity-recognition with a MedlinePlus monograph or NHS "
                 "page, or a therapy of CIViC's 2026 and 2018 exports; medicine: the first half alone; drugbank: "
                 "any drug of drug-named-entity-recognition with a DrugBank id; by any name of the suggestion "
                 "(display name, the lexicon's names of its concept ids), case-insensitive",
    }


# On the judge "medicine" (after the filter): the one that shares no source with the filter. "medicine_or_civic"
# counts every KB therapy as a drug, and the filter always keeps a name the KB holds, so that judge would pass
# what the filter let through on the KB's word alone; it is reported beside, not used for the goal.
GOAL = ("suggestion_top5_treatment_precision", 0.9, ">=")
GOAL_JUDGE = "medicine"


def first_run_suggestions(db: Path, data_dir: Path) -> tuple[dict, dict[str, dict]]:
    """bench/first_run.py's "suggestions" section and its goal, from a loaded store (opened read-only)."""
    from bench._scaffold import goal
    from curation.store.opening import open_store

    con = open_store(db, read_only=True)
    try:
        figures = judge_figures(con, data_dir)
    finally:
        con.close()
    value = figures["precision"]["after"][GOAL_JUDGE]
    name, target, op = GOAL
    return figures, ({name: goal(value, target, op)} if value is not None else {})
