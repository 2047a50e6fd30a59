"""A retrieval benchmark of n-ary records derived from BioRED's curated relations.

No offline abstracts exist for CIViC's PMIDs, so the first real benchmark builds KB-style
records from BioRED, whose document-level relations mirror precision-oncology evidence:

* **type A** (gene, variant, chemical, PMID): every relation between a ChemicalEntity id and
  a SequenceVariant id. BioRED's variant ids carry no gene, so the variant is given the gene
  of :func:`nearest_gene` (see there for the rule and its known misses).
* **type B** (gene, disease, chemical, PMID): in one document, a Gene–Chemical and a
  Chemical–Disease relation sharing the chemical, or a Gene–Disease and a Chemical–Disease
  relation sharing the disease.

Entity types are told apart by looking each relation id up among the document's mentions
(ids are NCBI Gene numbers, MeSH ids, or variant ids such as ``rs74805019``,
``p|SUB|V|600|E``). A name is the most frequent mention text of an id in its document.

Two query forms group the records: ``pair`` (gene + variant, or gene + disease: the KB
record without its answer) and ``gene`` (the gene alone, the partial relation a curator
starts from). A query's relevant documents are the PMIDs of the records it groups; its
answers (for EntityRecall) are their chemical ids. Splits are grouped by gene id, so no gene
is in two splits. The corpus is every distinct PMID of BioRED, BC5CDR and HoC.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from curation.errors import CurationError
from curation.ingest.jsonl import read_jsonl
from curation.ingest.problems import Problems
from curation.ingest.pubtator import read_pubtator
from curation.learning.evaluation import AnswerKey
from curation.records import Document

GENE = "GeneOrGeneProduct"
VARIANT = "SequenceVariant"
CHEMICAL = "ChemicalEntity"
DISEASE = "DiseaseOrPhenotypicFeature"
FORMS = ("pair", "gene")
SPLITS = ("train", "dev", "test")
FRACTIONS = (0.6, 0.2, 0.2)
TEMPLATES = {
    "A": "Treatment for gene {gene} and variant {second}?",
    "B": "Treatment for gene {gene} and disease {second}?",
    "gene": "Treatment for gene {gene}?",
}
# Corpus sources in order of precedence: a PMID in several keeps the first one's text
# (BioRED has titles and gene annotations; HoC has neither titles nor original spacing).
SOURCES = (("biored", "*.PubTator"), ("bc5cdr", "*.PubTator.txt"), ("hoc", "*.jsonl"))
# Composite mention ids ("3172,3651,6927", BC5CDR's "D002318|D012131"). "|" is also the
# field separator inside BioRED variant ids ("p|SUB|V|600|E"), so variants split on , ; only.
_COMPOSITE = re.compile(r"[,;|]")
_VARIANT_COMPOSITE = re.compile(r"[,;]")


class BenchmarkError(CurationError):
    """The benchmark cannot be built from the given data folder."""


@dataclass(frozen=True)
class BenchRecord:
    """One derived KB record.

    Attributes:
        kind: "A" (second entity is a variant) or "B" (second entity is a disease).
        gene_id, gene_name: NCBI Gene id and its most frequent mention text in the document.
        second_id, second_name: the variant or disease id and name.
        chemical_id, chemical_name: the answer (MeSH id) and its name.
        pmid: the evidence document.
    """

    kind: str
    gene_id: str
    gene_name: str
    second_id: str
    second_name: str
    chemical_id: str
    chemical_name: str
    pmid: str


@dataclass(frozen=True)
class QuerySet:
    """The queries of one split and form, with everything evaluation needs."""

    split: str
    form: str
    queries: Mapping[str, str]  # query id → text
    qrels: Mapping[str, Mapping[str, int]]  # query id → {pmid: 1}
    answer_key: AnswerKey
    records: Mapping[str, tuple[BenchRecord, ...]]  # query id → the records it groups


@dataclass(frozen=True)
class BuildStats:
    """What derivation did, for the benchmark's report.

    Attributes:
        chemical_variant_relations: BioRED relations between a chemical and a variant.
        variants_without_gene: (pmid, variant id) of related variants in documents with no
            single-gene mention, which therefore gave no type A record.
        b_via_chemical, b_via_disease: type B records found by each join (a record found by
            both counts in both).
        gene_gaps: (pmid, variant id, gene id, character gap) of every variant given a gene;
            large gaps are the likeliest wrong assignments.
    """

    chemical_variant_relations: int
    variants_without_gene: tuple[tuple[str, str], ...]
    b_via_chemical: int
    b_via_disease: int
    gene_gaps: tuple[tuple[str, str, str, int], ...] = ()


@dataclass(frozen=True)
class Benchmark:
    corpus: tuple[Document, ...]
    records: tuple[BenchRecord, ...]
    gene_split: Mapping[str, str]  # gene id → split
    query_sets: Mapping[tuple[str, str], QuerySet]  # (split, form) → queries
    stats: BuildStats
    seed: int

    def query_set(self, split: str, form: str) -> QuerySet:
        if (split, form) not in self.query_sets:
            raise BenchmarkError(f"no query set '{split}'/'{form}'; splits are {SPLITS}, forms {FORMS}")
        return self.query_sets[(split, form)]

    def counts(self) -> dict[str, int]:
        out = {
            "corpus_documents": len(self.corpus),
            "records": len(self.records),
            "records_a": sum(r.kind == "A" for r in self.records),
            "records_b": sum(r.kind == "B" for r in self.records),
            "genes": len(self.gene_split),
            "chemical_variant_relations": self.stats.chemical_variant_relations,
            "variants_without_gene": len(self.stats.variants_without_gene),
            "variants_gene_gap_over_100_chars": sum(gap > 100 for *_, gap in self.stats.gene_gaps),
        }
        for (split, form), query_set in sorted(self.query_sets.items()):
            out[f"queries_{form}_{split}"] = len(query_set.queries)
        return out


# --- ids and names ------------------------------------------------------------------------


def concept_parts(concept_id: str, mention_type: str = "") -> tuple[str, ...]:
    """The single ids of a possibly composite mention id ("-" and empty parts dropped)."""
    pattern = _VARIANT_COMPOSITE if mention_type == VARIANT else _COMPOSITE
    return tuple(p for p in (part.strip() for part in pattern.split(concept_id)) if p and p != "-")


def id_types(document: Document) -> dict[str, set[str]]:
    """Mention types of each id in a document (an id inside a composite mention counts)."""
    types: dict[str, set[str]] = defaultdict(set)
    for mention in document.mentions:
        for part in concept_parts(mention.concept_id, mention.type):
            types[part].add(mention.type)
    return types


def name_of(document: Document, concept_id: str) -> str:
    """The most frequent mention text of an id in a document (first seen wins a tie).

    Mentions annotated with this id alone are preferred over composite ones ("MODY" for three
    genes names none of them well).
    """
    single = Counter(m.text for m in document.mentions if m.concept_id == concept_id)
    if single:
        return single.most_common(1)[0][0]
    shared = Counter(m.text for m in document.mentions if concept_id in concept_parts(m.concept_id, m.type))
    return shared.most_common(1)[0][0] if shared else concept_id


def nearest_gene(document: Document, variant_id: str) -> str | None:
    """The gene a variant belongs to, by proximity of mentions in the document.

    Rule: over every (variant mention, gene mention) pair, the character gap between the two
    spans (0 when they touch or overlap); the gene with the smallest gap wins. Ties go to the
    gene mentioned more often in the document, then to the smaller id (as text), so the
    result is deterministic. Only gene mentions annotated with one id count.

    Known misses: a variant whose gene is never mentioned (an rs number of an intergenic
    locus, a gene named only in the title of a different annotation) gets the nearest
    *other* gene; two genes in one sentence ("BRCA1 and BRCA2 185delAG") can pick the wrong
    one; a gene named only in composite mentions is not seen. No gene mention at all → None.
    """
    gaps = gene_gaps(document, variant_id)
    if not gaps:
        return None
    frequency = Counter(m.concept_id for m in document.mentions if m.type == GENE)
    return min(gaps, key=lambda gene: (gaps[gene], -frequency[gene], gene))


def gene_gaps(document: Document, variant_id: str) -> dict[str, int]:
    """Per gene with a single-id mention, the smallest character gap between one of its mentions
    and one of the variant's (0 when they touch or overlap)."""
    variants = [
        m for m in document.mentions if m.type == VARIANT and variant_id in concept_parts(m.concept_id, VARIANT)
    ]
    genes = [m for m in document.mentions if m.type == GENE and len(concept_parts(m.concept_id, GENE)) == 1]
    gaps: dict[str, int] = {}
    for v in variants:
        for g in genes:
            distance = max(0, g.start - v.end, v.start - g.end)
            gaps[g.concept_id] = min(distance, gaps.get(g.concept_id, distance))
    return gaps


# --- records ------------------------------------------------------------------------------


def _typed_pairs(document: Document, types: Mapping[str, set[str]], first: str, second: str) -> set[tuple[str, str]]:
    """(id of type ``first``, id of type ``second``) for each relation between the two types."""
    out = set()
    for relation in document.relations:
        for a, b in ((relation.concept1, relation.concept2), (relation.concept2, relation.concept1)):
            if first in types.get(a, ()) and second in types.get(b, ()):
                out.add((a, b))
    return out


def derive_records(document: Document) -> tuple[list[BenchRecord], BuildStats]:
    """Type A and B records of one annotated document, and what was left out."""
    types = id_types(document)
    pmid = document.pmid
    records: dict[BenchRecord, None] = {}
    missing: list[tuple[str, str]] = []
    chemical_variant = sorted(_typed_pairs(document, types, CHEMICAL, VARIANT))
    genes_of: dict[str, str | None] = {}
    gaps: list[tuple[str, str, str, int]] = []
    for chemical, variant in chemical_variant:
        if variant not in genes_of:
            genes_of[variant] = nearest_gene(document, variant)
            if genes_of[variant] is None:
                missing.append((pmid, variant))
            else:
                gaps.append((pmid, variant, genes_of[variant], gene_gaps(document, variant)[genes_of[variant]]))
        gene = genes_of[variant]
        if gene is not None:
            records[_record(document, "A", gene, variant, chemical)] = None
    gene_chemical = _typed_pairs(document, types, GENE, CHEMICAL)
    chemical_disease = _typed_pairs(document, types, CHEMICAL, DISEASE)
    gene_disease = _typed_pairs(document, types, GENE, DISEASE)
    via_chemical = {(g, d, c) for g, c in gene_chemical for c2, d in chemical_disease if c == c2}
    via_disease = {(g, d, c) for g, d in gene_disease for c, d2 in chemical_disease if d == d2}
    for gene, disease, chemical in sorted(via_chemical | via_disease):
        records[_record(document, "B", gene, disease, chemical)] = None
    stats = BuildStats(len(chemical_variant), tuple(missing), len(via_chemical), len(via_disease), tuple(gaps))
    return list(records), stats


def _record(document: Document, kind: str, gene: str, second: str, chemical: str) -> BenchRecord:
    return BenchRecord(
        kind, gene, name_of(document, gene), second, name_of(document, second), chemical,
        name_of(document, chemical), document.pmid,
    )


# --- queries and splits -------------------------------------------------------------------


def query_id(record: BenchRecord, form: str) -> str:
    """``A:<gene>:<variant>`` / ``B:<gene>:<disease>`` for the pair form, ``G:<gene>`` for the gene form."""
    if form == "gene":
        return f"G:{record.gene_id}"
    if form == "pair":
        return f"{record.kind}:{record.gene_id}:{record.second_id}"
    raise BenchmarkError(f"unknown query form '{form}'; use one of {FORMS}")


def _most_common(names: Iterable[str]) -> str:
    counts = Counter(names)
    return min(counts, key=lambda name: (-counts[name], name))


def query_text(records: Sequence[BenchRecord], form: str) -> str:
    """The query of a group of records; each name is the one most of its records use."""
    gene = _most_common(r.gene_name for r in records)
    if form == "gene":
        return TEMPLATES["gene"].format(gene=gene)
    return TEMPLATES[records[0].kind].format(gene=gene, second=_most_common(r.second_name for r in records))


def group_records(records: Iterable[BenchRecord], form: str) -> dict[str, tuple[BenchRecord, ...]]:
    """Records grouped by the query they answer, query ids sorted."""
    groups: dict[str, list[BenchRecord]] = defaultdict(list)
    for record in records:
        groups[query_id(record, form)].append(record)
    return {qid: tuple(groups[qid]) for qid in sorted(groups)}


def split_genes(gene_ids: Iterable[str], seed: int, fractions: Sequence[float] = FRACTIONS) -> dict[str, str]:
    """Assign each gene to train/dev/test: sorted, shuffled with ``seed``, cut by ``fractions``."""
    genes = sorted(set(gene_ids))
    random.Random(seed).shuffle(genes)
    cut1 = round(len(genes) * fractions[0])
    cut2 = cut1 + round(len(genes) * fractions[1])
    return {gene: SPLITS[0] if i < cut1 else SPLITS[1] if i < cut2 else SPLITS[2] for i, gene in enumerate(genes)}


def make_query_set(
    split: str, form: str, records: Iterable[BenchRecord], doc_concepts: Mapping[str, frozenset[str]]
) -> QuerySet:
    groups = group_records(records, form)
    return QuerySet(
        split=split,
        form=form,
        queries={qid: query_text(group, form) for qid, group in groups.items()},
        qrels={qid: {r.pmid: 1 for r in group} for qid, group in groups.items()},
        answer_key=AnswerKey(
            answers={qid: frozenset(r.chemical_id for r in group) for qid, group in groups.items()},
            query_concepts={qid: frozenset({group[0].gene_id}) for qid, group in groups.items()},
            doc_concepts=doc_concepts,
        ),
        records=groups,
    )


# --- corpus and the whole build -----------------------------------------------------------


def source_files(data_dir: str | Path) -> dict[str, list[Path]]:
    """The corpus files under ``data_dir``, per source.

    Raises:
        BenchmarkError: a source folder has no file of its pattern.
    """
    data_dir = Path(data_dir)
    out = {}
    for folder, pattern in SOURCES:
        files = sorted((data_dir / folder).glob(pattern))
        if not files:
            raise BenchmarkError(f"no {pattern} file in {data_dir / folder}; the benchmark needs BioRED, BC5CDR and "
                                 "HoC there (set CURATION_DATA_DIR to the shared data folder)")
        out[folder] = files
    return out


def load_corpus(data_dir: str | Path) -> tuple[list[Document], list[Document]]:
    """(corpus, annotated): one document per distinct PMID, and every PubTator document read.

    Read strictly: a malformed line stops the build with its file and line.
    """
    files = source_files(data_dir)
    corpus: dict[str, Document] = {}
    annotated: list[Document] = []
    for folder, _ in SOURCES:
        for path in files[folder]:
            reader = read_jsonl if path.suffix == ".jsonl" else read_pubtator
            for document in reader(path, Problems(path)):
                corpus.setdefault(document.pmid, document)
                if folder != "hoc":
                    annotated.append(document)
    return list(corpus.values()), annotated


def document_concepts(documents: Iterable[Document]) -> dict[str, frozenset[str]]:
    """Per PMID, every concept id of its gold mentions (composite ids split, sources merged)."""
    out: dict[str, set[str]] = defaultdict(set)
    for document in documents:
        for mention in document.mentions:
            out[document.pmid].update(concept_parts(mention.concept_id, mention.type))
    return {pmid: frozenset(ids) for pmid, ids in out.items()}


def build_benchmark(data_dir: str | Path, seed: int = 13) -> Benchmark:
    """Build the benchmark from the shared data folder; deterministic given ``seed``."""
    corpus, annotated = load_corpus(data_dir)
    records: dict[BenchRecord, None] = {}
    relations = b_chem = b_dis = 0
    missing: list[tuple[str, str]] = []
    gaps: list[tuple[str, str, str, int]] = []
    # BC5CDR's types ("Chemical", "Disease") and CID relations give no record: only BioRED does.
    for document in annotated:
        found, stats = derive_records(document)
        records.update(dict.fromkeys(found))
        relations += stats.chemical_variant_relations
        missing.extend(stats.variants_without_gene)
        gaps.extend(stats.gene_gaps)
        b_chem, b_dis = b_chem + stats.b_via_chemical, b_dis + stats.b_via_disease
    ordered = tuple(sorted(records, key=lambda r: (r.gene_id, r.kind, r.second_id, r.chemical_id, r.pmid)))
    gene_split = split_genes((r.gene_id for r in ordered), seed)
    concepts = document_concepts(annotated)
    query_sets = {
        (split, form): make_query_set(split, form, [r for r in ordered if gene_split[r.gene_id] == split], concepts)
        for split in SPLITS
        for form in FORMS
    }
    stats = BuildStats(relations, tuple(sorted(set(missing))), b_chem, b_dis, tuple(sorted(set(gaps))))
    return Benchmark(tuple(corpus), ordered, gene_split, query_sets, stats, seed)
