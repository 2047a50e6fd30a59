"""The suggest benchmark's flagship cases (bench/suggest.py ``--parts flagship``): on the sample, as a new user has it.

A fresh store is loaded with the sample (the dictionaries and the shipped recogniser, as "Load the sample" ends with
it active; the benchmark's relation scorer active before the load, as the latency section does), and each case is
asked through ``workflows.suggest.suggest`` (the served search's top :data:`TOP_DOCS`, then the suggestions). A case
is one (gene, variant, drug): it *applies* when an abstract of the top :data:`TOP_DOCS` names the drug (any of its
lexicon names, whole word, any case) and the query's gene or variant; it is *met* when the drug is among the top
:data:`TOP` suggestions. The cases: :data:`FLAGSHIP` (written out: what a precision-oncology curator expects first),
then those the sample's CIViC records give (the PO pairs of ``bench/_treatments.treatment_queries`` and their KB
therapies). ``treatment_precision`` is ``bench/_treatments.judge_figures`` on the same store.
"""

from __future__ import annotations

import re
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

TOP_DOCS = 20
TOP = 5
CIVIC_QUERIES = 20  # CIViC (gene, variant) pairs asked


@dataclass(frozen=True)
class FlagshipCase:
    """A partial PO relation and the drugs a curator expects for it."""

    gene: str
    variant: str
    drugs: tuple[str, ...]
    source: str = "flagship"


FLAGSHIP = (
    FlagshipCase("BRAF", "V600E", ("vemurafenib", "dabrafenib")),
    FlagshipCase("ERBB2", "amplification", ("trastuzumab", "lapatinib")),
    FlagshipCase("HER2", "amplification", ("trastuzumab", "lapatinib")),
    FlagshipCase("EGFR", "L858R", ("erlotinib", "gefitinib")),
)
_PARTS = re.compile(r"\s*(?:,|\+|\(|\))\s*")


def civic_cases(con, n: int = CIVIC_QUERIES) -> list[FlagshipCase]:
    """The sample's CIViC PO pairs (those whose gene and variant one abstract names first) with their therapies."""
    from bench._treatments import treatment_queries
    from curation.store.kb import list_kb_answers

    out = []
    for gene, variant, _, _ in treatment_queries(con, n):
        therapies = {p.strip().casefold(): p.strip() for value, _ in list_kb_answers(
            con, "PO", "Treatment", {"Gene": [gene], "Variant": [variant]}) for p in _PARTS.split(value)
            if len(p.strip()) > 2}
        if therapies:
            out.append(FlagshipCase(gene, variant, tuple(sorted(therapies.values())), "civic"))
    return out


def _names(lexicon, drug: str) -> set[str]:
    """The drug's name and every lexicon name of the concepts it names."""
    names = {drug.casefold()}
    for _, cid in lexicon.lookup(drug, "chemical"):
        names |= {n.casefold() for n in lexicon.names("chemical", cid)}
    return {n for n in names if len(n) > 2}


def _named(text: str, names: set[str]) -> bool:
    low = text.casefold()
    return any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", low) for n in names)


def ask(con, searcher, engine, case: FlagshipCase) -> list[dict]:
    """Each drug of one case: applies, met, its rank and direction among the suggestions, the supporting sentence."""
    from curation.relations.suggestions import name_key
    from curation.schemas import PO
    from curation.store.corpus import get_documents
    from curation.workflows.suggest import suggest

    lexicon = searcher.matcher.lexicon
    values = {"Gene": case.gene, "Variant": case.variant}
    result = suggest(con, engine, searcher.linker, searcher.matcher, PO, values, top_docs=TOP_DOCS, mode="bm25")
    from curation.retrieval.relation_search import SearchOptions, search_relation

    hits = search_relation(engine, searcher.linker, searcher.matcher, searcher.source, searcher.documents, PO, values,
                           SearchOptions(mode="bm25", k=TOP_DOCS)).hits
    documents = get_documents(con, [h.pmid for h in hits])
    query_names = {case.gene.casefold(), case.variant.casefold(), *(
        c.canonical.casefold() for c in result.concepts if c.canonical)}
    rows = []
    for drug in case.drugs:
        names = _names(lexicon, drug)
        keys = {name_key(n) for n in names}
        naming = [d.pmid for d in documents if _named(d.text, names) and _named(d.text, query_names)]
        found = next((s for s in result.suggestions if name_key(s.name) in keys or any(
            name_key(n) in keys for cid in s.concept_ids for n in lexicon.names("chemical", cid)[:20])), None)
        rank = found.rank if found else None
        rows.append({"gene": case.gene, "variant": case.variant, "drug": drug, "source": case.source,
                     "applies": bool(naming), "abstracts_naming": naming[:5],
                     "rank": rank, "met": bool(rank is not None and rank <= TOP),
                     "direction": found.direction if found else "",
                     "sentence": " ".join(found.papers[0].sentence.split())[:300] if found and found.papers else "",
                     "top5": [f"{s.name} ({s.direction})" if s.direction else s.name
                              for s in result.suggestions[:TOP]],
                     "message": result.message})
    return rows


def flagship(data_dir: Path, scorer) -> dict:
    """The flagship section: the sample loaded into a fresh store, every case asked, the top-5 precision."""
    from bench._treatments import judge_figures
    from curation.config import Settings
    from curation.entities.annotation import Annotator
    from curation.entities.recogniser import load_recogniser
    from curation.learning.recogniser.shipped import shipped_recogniser
    from curation.relations.scorer_folder import write_scorer
    from curation.schemas import PO
    from curation.store.opening import open_store
    from curation.workflows.entities import dictionary_matcher
    from curation.workflows.quickstart import load_sample
    from curation.workflows.relation_scoring import activate_scorer
    from curation.workflows.search import Searcher

    shipped = shipped_recogniser(data_dir)  # what "Load the sample" activates; the dictionaries alone without one
    recogniser = load_recogniser(shipped.folder) if shipped is not None else None
    out: dict = {"top_docs": TOP_DOCS, "top": TOP, "cases": [],
                 "annotator": f"dictionaries + the shipped recogniser {shipped.provenance.name}" if shipped
                 else "dictionaries"}
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_scorer(Path(tmp) / "scorer", scorer, {"name": "bench"})
        settings = Settings(db_path=Path(tmp) / "store.duckdb", data_dir=data_dir, models_dir=Path(tmp) / "models",
                            cache_dir=Path(tmp) / "cache")
        con = open_store(settings.db_path)
        activate_scorer(con, folder)  # active before the load: documents are scored as they are annotated
        started = time.perf_counter()
        load_sample(con, settings, annotator=lambda: Annotator(dictionary_matcher(con), recogniser=recogniser))
        out["sample_load_s"] = round(time.perf_counter() - started, 1)
        searcher = Searcher(con)
        engine, _ = searcher.engine(PO)
        started = time.perf_counter()
        cases = [*FLAGSHIP, *civic_cases(con)]
        out["case_table"] = [asdict(c) for c in cases]
        for case in cases:
            out["cases"] += ask(con, searcher, engine, case)
        out["cases_s"] = round(time.perf_counter() - started, 1)
        applicable = [c for c in out["cases"] if c["applies"]]
        out["cases_applicable"] = len(applicable)
        out["cases_met"] = sum(c["met"] for c in applicable)
        out["flagship_applicable"] = sum(c["source"] == "flagship" for c in applicable)
        out["flagship_met"] = sum(c["met"] for c in applicable if c["source"] == "flagship")
        out["missed"] = [f"{c['gene']} {c['variant']} -> {c['drug']} (rank {c['rank']}; top 5: "
                         f"{', '.join(c['top5'])})" for c in applicable if not c["met"]]
        con.close()
        con = open_store(settings.db_path, read_only=True)
        try:
            out["treatment_precision"] = judge_figures(con, data_dir, mode="bm25")
        finally:
            con.close()
    return out
