"""The concept search as bench/retrieval.py scores it: the served search, run without a store.

What the served system may know is what a deployment would know, never the evaluated documents' gold:

- **lexicon**: DrugBank, the CIViC knowledge base (both exports) and the gold mention names of the
  annotated documents that are *not* a positive of any dev or test query (the name filter is also
  measured on those only), so a reworded name is linked only when a training document or a dictionary
  gives it;
- **concept index**: every corpus document annotated by the dictionaries and notation rules over that
  lexicon (what ``annotate`` stores at ingest without a trained recogniser); no gold annotation.

The systems (each a ``{qid: text} -> run`` function, as bench/_benchmark.py scores them):
``bm25_expanded`` (BM25 over every surface form of the linked concepts, no mention check, no grouping),
``concepts`` (the concept search, lexical order), ``concepts_rm3`` (the same with RM3) and ``served``
(:func:`curation.retrieval.relation_search.search_relation` in hybrid mode with the product's default fusion: what
the Curate page and ``python -m curation search`` serve).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from curation.entities.annotation import Annotator
from curation.entities.dictionaries import assemble_lexicon, merged_synonyms
from curation.entities.lexicon import Lexicon
from curation.entities.matching import Matcher
from curation.entities.normalise import Normaliser
from curation.entities.postings import MemoryPostings, concept_query
from curation.entities.query import QueryLinker
from curation.entities.synonyms import drugbank_synonyms
from curation.entities.variants import variant_keys
from curation.ingest.civic import read_civic
from curation.ingest.problems import Problems
from curation.learning.benchmark import Benchmark, kind_of
from curation.learning.benchmark.corpus import ENTITY_TYPES, concept_parts
from curation.records import Document
from curation.retrieval.relation_search import SearchOptions, search_relation
from curation.schemas import PO
from index.hits import Run
from index.search import Retriever

KIND_OF_TYPE = {"Gene": "gene", "Variant": "variant", "Chemical": "chemical", "Disease": "disease"}


@dataclass(frozen=True)
class BenchSchema:
    """A benchmark relation kind seen as the search sees a schema (slots, their kinds, the query template)."""

    name: str
    query_types: tuple[str, ...]
    template: str
    answer: str = ""  # the missing slot's first entity type (the learned stage counts its kind's mentions)
    species: str | None = None  # the linker's own preference, as every benchmark figure was measured

    def kind(self, entity_type: str) -> str:
        return KIND_OF_TYPE.get(entity_type, "generic")

    def render_query(self, values: Mapping[str, str]) -> str:
        return self.template.format(**{t: values.get(t, "") for t in self.query_types})


def evaluated_documents(benchmark: Benchmark) -> set[str]:
    """Every positive document of a dev or test query."""
    return {pmid for (split, _, form), qs in benchmark.query_sets.items() if split != "train" and form == "canonical"
            for qrels in qs.qrels.values() for pmid in qrels}


@dataclass
class ConceptBench:
    """What the served search needs, built once for the whole run."""

    lexicon: Lexicon
    matcher: Matcher
    linker: QueryLinker
    source: MemoryPostings
    documents: Mapping[str, Document]
    seconds: Mapping[str, float]
    lexicon_documents: int
    kinds: Mapping[str, Mapping[str, int]] = field(default_factory=dict)  # pmid → mentions per kind it annotated
    annotations: Mapping[str, Sequence] = field(default_factory=dict)  # pmid → what the annotator found


def build(benchmark: Benchmark, data_dir: Path, clock: Callable[[], float]) -> ConceptBench:
    """The lexicon, matcher, concept index and linker (see the module docstring)."""
    held_out = evaluated_documents(benchmark)
    return build_over(benchmark.corpus, [d for d in benchmark.corpus if d.mentions and d.pmid not in held_out],
                      data_dir, clock)


def build_over(corpus: Sequence[Document], kept: Sequence[Document], data_dir: Path,
               clock: Callable[[], float]) -> ConceptBench:
    """:func:`build` over any ``corpus``, the lexicon taking gold names from ``kept`` only."""
    times: dict[str, float] = {}
    t = clock()
    drugbank = data_dir / "dicts" / "drugbank_vocabulary.csv"
    dictionary = drugbank_synonyms(drugbank) if drugbank.exists() else []
    records = []
    for path in sorted((data_dir / "civic").glob("*.tsv")):
        problems = Problems(path, lenient=True)
        records += [r for r in read_civic(path, problems) if r.schema == PO.name]
    synonyms = merged_synonyms(dictionary, [(PO, records)], [m for d in kept for m in d.mentions])
    lexicon = assemble_lexicon(synonyms, kept)
    times["lexicon"] = clock() - t
    t = clock()
    matcher = Matcher(lexicon, cache_size=len(corpus) + 16)
    matcher.analyse_many(d.text for d in corpus)
    times["matcher_analyse_corpus"] = clock() - t
    t = clock()
    texts = [d.text for d in corpus]
    found = Annotator(matcher).annotate(texts)
    source = MemoryPostings({d.pmid: a for d, a in zip(corpus, found, strict=True)})
    times["annotate_corpus"] = clock() - t
    t = clock()
    keys = {k for text in source.texts("variant") for k in variant_keys(text)}
    linker = QueryLinker(lexicon, Normaliser(lexicon).fit(), None, keys)
    times["normaliser_fit"] = clock() - t
    print(f"concept bench: lexicon from {len(kept)} documents + dictionaries, {sum(times.values()):.0f} s",
          file=sys.stderr)
    kinds = {d.pmid: dict(Counter(a.type for a in annotations)) for d, annotations in zip(corpus, found, strict=True)}
    return ConceptBench(lexicon, matcher, linker, source, {d.pmid: d for d in corpus}, times, len(kept), kinds,
                        {d.pmid: tuple(a) for d, a in zip(corpus, found, strict=True)})


def _lookup(benchmark: Benchmark, split: str) -> dict[tuple[str, str], tuple[BenchSchema, Mapping[str, str]]]:
    """(qid, text) → (schema, slot values), over every kind and form of a split."""
    out = {}
    for (s, kind, _), qs in benchmark.query_sets.items():
        if s != split:
            continue
        relation = kind_of(kind)
        schema = BenchSchema(kind, relation.query_types, relation.template, relation.answer_types[0])
        for qid, text in qs.queries.items():
            out[(qid, text)] = (schema, qs.values[qid])
    return out


def served_system(
    bench: ConceptBench, engine: Retriever, benchmark: Benchmark, split: str, options: SearchOptions,
) -> Callable[[Mapping[str, str]], Run]:
    """search_relation over the benchmark's typed values, as a run (score = 1 / rank)."""
    lookup = _lookup(benchmark, split)

    def documents(pmids: Sequence[str]) -> dict[str, Document]:
        return {p: bench.documents[p] for p in pmids if p in bench.documents}

    def retrieve(queries: Mapping[str, str]) -> Run:
        run = {}
        for qid, text in queries.items():
            schema, values = lookup[(qid, text)]
            found = search_relation(engine, bench.linker, bench.matcher, bench.source, documents, schema, values,
                                    options)
            run[qid] = {h.pmid: 1.0 / h.rank for h in found.hits}
        return run

    return retrieve


def expanded_system(
    bench: ConceptBench, engine: Retriever, benchmark: Benchmark, split: str, k: int, alternative_weight: float = 0.5,
) -> Callable[[Mapping[str, str]], Run]:
    """BM25 over every surface form of the linked concepts: no concept index, no mention check, no grouping."""
    lookup = _lookup(benchmark, split)

    def retrieve(queries: Mapping[str, str]) -> Run:
        run = {}
        for qid, text in queries.items():
            schema, values = lookup[(qid, text)]
            kinds = {slot: schema.kind(slot) for slot in schema.query_types}
            weights: dict[int, float] = {}
            for concept in bench.linker.link_all(kinds, values):
                forms = concept_query(concept, bench.source, alternative_weight).forms
                for term, weight in engine.lexical.term_weights(forms).items():
                    weights[term] = weights.get(term, 0.0) + weight
            run[qid] = dict(engine.lexical.search_weighted(weights, k)) if weights else {}
        return run

    return retrieve


def mentions_all_precision(
    bench: ConceptBench, engine: Retriever, benchmark: Benchmark, gold_pmids: set[str], options: SearchOptions,
    forms: Sequence[str] = ("canonical", "reworded"),
) -> dict[str, float]:
    """Of the "mentions all" hits that are gold-annotated documents, the share whose gold mentions hold every
    query concept (dev queries of every kind; a slot's gold concepts: the ids its records give it)."""
    gold: dict[str, set[tuple[str, str]]] = {}
    for document in benchmark.corpus:
        if document.pmid in gold_pmids:
            pairs = gold.setdefault(document.pmid, set())
            for m in document.mentions:
                if m.type in ENTITY_TYPES:
                    pairs.update((ENTITY_TYPES[m.type], c) for c in concept_parts(m.concept_id, m.type))

    def documents(pmids: Sequence[str]) -> dict[str, Document]:
        return {p: bench.documents[p] for p in pmids if p in bench.documents}

    right = judged = 0
    for (split, kind, form), qs in benchmark.query_sets.items():
        if split != "dev" or form not in forms:
            continue
        relation = kind_of(kind)
        schema = BenchSchema(kind, relation.query_types, relation.template, relation.answer_types[0])
        for qid, values in qs.values.items():
            wanted = {t: {(t, c) for r in qs.records[qid] for t2, c in r.entities if t2 == t}
                      for t in relation.query_types}
            found = search_relation(engine, bench.linker, bench.matcher, bench.source, documents, schema, values,
                                    options)
            for hit in found.hits:
                if hit.group != "all" or hit.pmid not in gold:
                    continue
                judged += 1
                right += all(wanted[t] & gold[hit.pmid] for t in relation.query_types)
    return {"precision": round(right / judged, 4) if judged else 0.0, "judged_hits": judged, "right": right}


def typed_values(benchmark: Benchmark, split: str, text: str, form: str = "canonical") -> tuple[BenchSchema, dict]:
    """(schema, slot values) of the first query of ``split`` whose ``form`` text is ``text``."""
    for (s, kind, f), qs in benchmark.query_sets.items():
        if s == split and f == form:
            for qid, query in qs.queries.items():
                if query == text:
                    relation = kind_of(kind)
                    schema = BenchSchema(kind, relation.query_types, relation.template, relation.answer_types[0])
                    return schema, dict(qs.values[qid])
    raise KeyError(text)


def one_search(bench: ConceptBench, engine: Retriever, options: SearchOptions):
    """A (schema, values) → RelationSearch function over the benchmark's concept index."""
    def documents(pmids: Sequence[str]) -> dict[str, Document]:
        return {p: bench.documents[p] for p in pmids if p in bench.documents}

    return lambda schema, values: search_relation(engine, bench.linker, bench.matcher, bench.source, documents,
                                                  schema, values, options)


def po_values(benchmark: Benchmark, split: str, n: int) -> list[dict[str, str]]:
    """Up to ``n`` canonical Gene (+ Variant) values of the split's gene_variant and gene queries, evenly spaced:
    what a CIViC curator types in the PO schema."""
    every = []
    for kind in ("gene_variant", "gene"):
        qs = benchmark.query_set(split, kind, "canonical")
        every += [{t: v for t, v in qs.values[qid].items() if t in ("Gene", "Variant")} for qid in qs.queries]
    return every[:: max(1, len(every) // n)][:n]
