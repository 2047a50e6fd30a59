"""Relation kinds and the KB-style records derived from curated relations (BioRED, BC5CDR).

A record is one partial relation with its evidence document: the query entities a curator types
(a gene and a variant, a gene and a disease, ...), the concepts the document relates to them in the
missing slot (the answers EntityRecall looks for), and the PMID. Kinds:

* ``gene_variant``: a variant in a curated relation with a chemical or a disease; the answers are
  those partners. BioRED's variant ids carry no gene, so the variant gets the gene of
  :func:`~curation.learning.benchmark.corpus.nearest_gene` (its known misses are listed there; the
  build reports how many variants got a gene and at what distance).
* ``gene_disease``, ``gene_chemical``: a Gene–Disease / Gene–Chemical relation; the answers are the
  chemicals (diseases) the document relates to either entity.
* ``chemical_disease``: a Chemical–Disease relation of BioRED or BC5CDR (chemical-induced disease);
  the answers are the genes BioRED relates to either entity (BC5CDR has none).
* ``gene``: every gene of a record above, alone (the partial relation a curator starts from); the
  answers are the chemicals related to the gene or to its variants.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from curation.learning.benchmark.corpus import ENTITY_TYPES, concept_parts, gene_gaps, nearest_gene
from curation.records import Document

Entity = tuple[str, str]  # (entity type, concept id)


@dataclass(frozen=True)
class RelationKind:
    """One kind of partial relation the benchmark asks for.

    Attributes:
        name: the kind's name in reports ("gene_variant").
        query_types: the entity types a curator fills in, the first being the split's group.
        answer_types: the entity types of the missing slot.
        template: the query text, with ``{Entity type}`` placeholders (the product's template style).
        answer_label: what the missing slot is called when the kind is a training schema.
    """

    name: str
    query_types: tuple[str, ...]
    answer_types: tuple[str, ...]
    template: str
    answer_label: str

    def render(self, names: Mapping[str, str]) -> str:
        return self.template.format(**names)


KINDS: tuple[RelationKind, ...] = (
    RelationKind("gene_variant", ("Gene", "Variant"), ("Chemical", "Disease"),
                 "Treatment for gene {Gene} and variant {Variant}?", "Treatment"),
    RelationKind("gene_disease", ("Gene", "Disease"), ("Chemical",),
                 "Treatment for gene {Gene} and disease {Disease}?", "Treatment"),
    RelationKind("gene_chemical", ("Gene", "Chemical"), ("Disease",),
                 "Disease for gene {Gene} and chemical {Chemical}?", "Outcome"),
    RelationKind("chemical_disease", ("Chemical", "Disease"), ("Gene",),
                 "Gene for chemical {Chemical} and disease {Disease}?", "Gene"),
    RelationKind("gene", ("Gene",), ("Chemical",), "Treatment for gene {Gene}?", "Treatment"),
)
KIND_NAMES = tuple(kind.name for kind in KINDS)


def kind_of(name: str) -> RelationKind:
    for kind in KINDS:
        if kind.name == name:
            return kind
    raise KeyError(f"unknown relation kind '{name}'; kinds are {list(KIND_NAMES)}")


@dataclass(frozen=True)
class BenchRecord:
    """One derived KB record.

    Attributes:
        kind: the relation kind's name.
        entities: (entity type, concept id) of each query entity, in the kind's order.
        answers: (entity type, concept id) of what the document relates to them in the missing slot
            (sorted; may be empty).
        pmid: the evidence document.
    """

    kind: str
    entities: tuple[Entity, ...]
    answers: tuple[Entity, ...]
    pmid: str

    @property
    def anchor(self) -> Entity:
        """The entity the splits are grouped by (the kind's first query type)."""
        return self.entities[0]


@dataclass
class DerivationStats:
    """What derivation did and left out, for the benchmark's report."""

    variant_relations: int = 0
    variants_with_gene: int = 0
    variants_without_gene: list[tuple[str, str]] = field(default_factory=list)  # (pmid, variant id)
    gene_gaps: list[tuple[str, str, str, int]] = field(default_factory=list)  # (pmid, variant, gene, chars)

    def merge(self, other: DerivationStats) -> None:
        self.variant_relations += other.variant_relations
        self.variants_with_gene += other.variants_with_gene
        self.variants_without_gene += other.variants_without_gene
        self.gene_gaps += other.gene_gaps


def typed_ids(document: Document) -> dict[str, set[str]]:
    """The benchmark entity types of each id mentioned in a document (composite ids split)."""
    out: dict[str, set[str]] = defaultdict(set)
    for mention in document.mentions:
        entity_type = ENTITY_TYPES.get(mention.type)
        if entity_type is not None:
            for part in concept_parts(mention.concept_id, mention.type):
                out[part].add(entity_type)
    return out


def derive_records(document: Document) -> tuple[list[BenchRecord], DerivationStats]:
    """Every record of every kind one annotated document supports, and what was left out."""
    types = typed_ids(document)
    related: dict[str, set[str]] = defaultdict(set)
    pairs: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for relation in document.relations:
        a, b = relation.concept1, relation.concept2
        related[a].add(b)
        related[b].add(a)
        for x, y in ((a, b), (b, a)):
            for tx in types.get(x, ()):
                for ty in types.get(y, ()):
                    pairs[(tx, ty)].add((x, y))

    def partners(ids: Iterable[str], wanted: tuple[str, ...]) -> tuple[Entity, ...]:
        found = {(t, other) for i in ids for other in related.get(i, ()) for t in types.get(other, ()) if t in wanted}
        return tuple(sorted(found))

    found: dict[tuple[str, tuple[Entity, ...]], set[Entity]] = {}

    def add(kind: str, entities: tuple[Entity, ...], answers: Iterable[Entity]) -> None:
        found.setdefault((kind, entities), set()).update(answers)

    stats = DerivationStats()
    variants = sorted({v for t in ("Chemical", "Disease") for v, _ in pairs.get(("Variant", t), ())})
    variants_of: dict[str, list[str]] = defaultdict(list)
    stats.variant_relations = sum(len(pairs.get(("Variant", t), ())) for t in ("Chemical", "Disease"))
    for variant in variants:
        gene = nearest_gene(document, variant)
        if gene is None:
            stats.variants_without_gene.append((document.pmid, variant))
            continue
        stats.variants_with_gene += 1
        stats.gene_gaps.append((document.pmid, variant, gene, gene_gaps(document, variant)[gene]))
        variants_of[gene].append(variant)
        add("gene_variant", (("Gene", gene), ("Variant", variant)), partners([variant], ("Chemical", "Disease")))
    for gene, disease in pairs.get(("Gene", "Disease"), ()):
        add("gene_disease", (("Gene", gene), ("Disease", disease)), partners([gene, disease], ("Chemical",)))
    for gene, chemical in pairs.get(("Gene", "Chemical"), ()):
        add("gene_chemical", (("Gene", gene), ("Chemical", chemical)), partners([gene, chemical], ("Disease",)))
    for chemical, disease in pairs.get(("Chemical", "Disease"), ()):
        entities = (("Chemical", chemical), ("Disease", disease))
        add("chemical_disease", entities, partners([chemical, disease], ("Gene",)))
    genes = {entities[0][1] for kind, entities in found if entities[0][0] == "Gene"}
    for gene in genes:
        add("gene", (("Gene", gene),), partners([gene, *variants_of.get(gene, ())], ("Chemical",)))
    records = [BenchRecord(kind, entities, tuple(sorted(answers)), document.pmid)
               for (kind, entities), answers in found.items()]
    return sorted(records, key=record_order), stats


def record_order(record: BenchRecord) -> tuple:
    return (KIND_NAMES.index(record.kind), record.entities, record.pmid, record.answers)


def merge_records(records: Iterable[BenchRecord]) -> list[BenchRecord]:
    """One record per (kind, entities, pmid), answers united (a PMID annotated in two corpora)."""
    merged: dict[tuple[str, tuple[Entity, ...], str], set[Entity]] = {}
    for record in records:
        merged.setdefault((record.kind, record.entities, record.pmid), set()).update(record.answers)
    out = [BenchRecord(kind, entities, tuple(sorted(answers)), pmid)
           for (kind, entities, pmid), answers in merged.items()]
    return sorted(out, key=record_order)
