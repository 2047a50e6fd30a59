"""Typed records that cross module boundaries.

Everything the loaders produce and the store returns is one of these frozen dataclasses;
no dict-of-anything is passed between modules.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from curation.grades import Grade


@dataclass(frozen=True)
class KBRecord:
    """One knowledge-base record: an n-ary relation instance of a schema.

    Attributes:
        schema: name of the relation schema (e.g. "PO", "PTM").
        entities: (entity type, value) pairs in the schema's order; the answer slot
            holds "" when the KB record has no answer (kept as a source of negatives).
        pmid: PubMed id of the evidence, or None when the record cites none.
        source: where the record came from ("civic", "uniprot", "tsv", "curator").
        source_id: the record's id in its source (CIViC evidence id, UniProt accession + feature).
        attributes: extra fields kept for display and filtering (evidence type, level,
            disease, significance, ...), as (name, value) pairs.
    """

    schema: str
    entities: tuple[tuple[str, str], ...]
    pmid: str | None
    source: str
    source_id: str
    attributes: tuple[tuple[str, str], ...] = ()

    def get(self, entity_type: str) -> str:
        """The value of one entity slot ("" when empty or absent)."""
        for name, value in self.entities:
            if name == entity_type:
                return value
        return ""

    def attribute(self, name: str) -> str:
        for key, value in self.attributes:
            if key == name:
                return value
        return ""


@dataclass(frozen=True)
class Mention:
    """A gold entity mention from an annotated corpus (PubTator).

    Offsets are character offsets into ``title + " " + abstract`` as PubTator defines them.
    """

    pmid: str
    start: int
    end: int
    text: str
    type: str
    concept_id: str
    source: str = ""


@dataclass(frozen=True)
class Relation:
    """A document-level relation between two concept ids (BioRED / BC5CDR)."""

    pmid: str
    type: str
    concept1: str
    concept2: str
    novelty: str = ""
    source: str = ""


@dataclass(frozen=True)
class Document:
    """A PubMed abstract.

    Attributes:
        pmid: PubMed id (digits only).
        title: title; "" when the source has none (HoC).
        abstract: abstract text.
        source: the corpus it came from (file stem, "pubmed", ...).
        mentions: gold mentions, when the corpus has them.
        relations: gold document-level relations, when the corpus has them.
        journal, year: bibliographic fields when known.
        authors: the first authors as PubMed lists them ("Smith J, Doe A, Lee K, et al."), "" when unknown.
        pub_types: PubMed publication types ("Journal Article", "Clinical Trial, Phase II", ...), when known.
    """

    pmid: str
    title: str
    abstract: str
    source: str = ""
    mentions: tuple[Mention, ...] = ()
    relations: tuple[Relation, ...] = ()
    journal: str = ""
    year: int | None = None
    authors: str = ""
    pub_types: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """Title and abstract as one string, the coordinate system of PubTator offsets."""
        if not self.title:
            return self.abstract
        return f"{self.title} {self.abstract}"


@dataclass(frozen=True)
class Span:
    """A matched entity in a text: the unit of highlighting and of EDEL's g(e, d).

    Attributes:
        start, end: character offsets into the matched text.
        text: the covered text.
        entity_type: schema entity type or corpus type ("Gene", "Variant", "Treatment", ...).
        concept: normalised key of the concept matched (canonical name or id).
        how: which matcher found it ("dictionary", "variant", "abbreviation", ...).
    """

    start: int
    end: int
    text: str
    entity_type: str
    concept: str = ""
    how: str = ""


@dataclass(frozen=True)
class MarkedText:
    """Untrusted text and the spans to mark in it: what a workflow hands a page to draw (the page escapes it).

    Attributes:
        text: the text, as stored (never escaped here).
        spans: offsets into ``text``; each span's ``entity_type`` is its role ("query", "answer", "other").
    """

    text: str
    spans: tuple[Span, ...] = ()


@dataclass(frozen=True)
class Synonym:
    """One name of a concept in a dictionary.

    ``species``: the organism of a gene concept ("human", "mouse"), "" when unknown or not a gene.
    """

    concept_id: str
    entity_type: str
    name: str
    source: str = ""
    canonical: bool = False
    species: str = ""


@dataclass(frozen=True)
class Decision:
    """A curator's judgement of one document for one partial relation (append-only)."""

    decision_id: int
    curator: str
    schema: str
    query: str
    query_entities: tuple[tuple[str, str], ...]
    pmid: str
    grade: Grade  # stored as its value
    answer: str = ""
    note: str = ""
    created_at: str = ""
    superseded_by: int | None = None
    provenance: str = ""  # JSON: how the search found the document (group, stages, concepts); "" when not known
    identity_source: str = "self-declared"  # how ``curator`` is known: typed (self-declared), oidc, proxy, local
    adjudication: bool = False  # an adjudicator's final grade; only ``annotation_queue.adjudicate`` sets it, no note


@dataclass(frozen=True)
class IngestReport:
    """What one ingest did: counts, the skipped rows (lenient mode) or documents (a PubTator file) and why, and
    the rows kept with a warning (a PubTator mention read in the text's case)."""

    path: str
    kind: str
    added: int = 0
    unchanged: int = 0
    skipped: tuple[str, ...] = field(default_factory=tuple)
    details: tuple[tuple[str, int], ...] = ()
    notes: tuple[str, ...] = ()  # what went wrong after the rows were written (annotation), for a person
    warnings: tuple[str, ...] = ()

    def summary(self) -> str:
        parts = [f"{self.kind} {self.path}: {self.added} added, {self.unchanged} already present"]
        for name, count in self.details:
            parts.append(f"{count} {name}")
        if self.skipped:
            parts.append(f"{len(self.skipped)} skipped")
        if self.warnings:
            parts.append(f"{len(self.warnings)} warnings")
        return ", ".join(parts) + "".join(f". {note}" for note in self.notes)


@dataclass(frozen=True, order=True)
class ItemKey:
    """One thing to label: a document for a partial relation of a schema.

    ``relation`` is the relation's query entities, whitespace- and case-folded, sorted by type:
    the same identity as ``curation.store.decisions.relation_key``.
    """

    schema: str
    relation: tuple[tuple[str, str], ...]
    pmid: str


def fold_relation(values: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """A relation's identity: filled (type, value) pairs, whitespace- and case-folded, sorted by type."""
    return tuple(sorted((t, " ".join(v.split()).casefold()) for t, v in values if v.strip()))


def item_key(decision: Decision) -> ItemKey:
    """The item a decision grades (relation folded as ``curation.store.decisions.relation_key`` folds it)."""
    return ItemKey(decision.schema, fold_relation(decision.query_entities), decision.pmid)


def is_adjudication(decision: Decision) -> bool:
    """Whether a decision is an adjudicator's final grade: its typed ``adjudication`` field, which only
    ``curation.workflows.annotation_queue.adjudicate`` sets, after checking the role. A note says nothing:
    anyone who may decide can type one."""
    return decision.adjudication


_LINE_BREAKS = str.maketrans({"\r": " ", "\n": " ", "\t": " "})


def one_line(text: str) -> str:
    """``text`` with its line breaks and tabs as spaces, one character for one (offsets into it are kept): what a
    one-line format (a PubTator line, a tab-separated field) may hold."""
    return text.translate(_LINE_BREAKS)
