"""The Curate page's result rows: a partial relation in, ranked abstracts with their entity spans out.

The ranking is the concept search (:func:`curation.retrieval.relation_search.search_relation`): each typed
slot linked to its concepts, documents that mention every concept first, then those that mention
some, never one that mentions none. For each hit: the title and abstract with entity spans by role
(query entities, candidate answers, other entities), the two or three best sentences, each component's
score, the answer-type entities found in it (to pre-fill the answer field) and the decisions already
recorded for this relation and document. Text is handed over as stored (:class:`MarkedText`): the
pages escape it when they draw it (``pages/parts/highlight.py``).

Entity spans come from the concept index (the store's annotations, written at ingest), read
for all hits in one query; a document without stored annotations is annotated in memory with the
dictionaries (nothing is written on a page view). Query entities are found by the matcher's g(e, d)
(every synonym and notation of what was typed). Each entity kind can be hidden (``kinds``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

import duckdb

from curation.entities.annotation import Annotation, Annotator
from curation.entities.matching import Matcher
from curation.entities.postings import StorePostings, stored_annotations
from curation.entities.query import QueryConcept, QueryLinker
from curation.ranking.session import moved as moved_from
from curation.records import Decision, Document, KBRecord, MarkedText, Span
from curation.retrieval.passages import best_sentences, shift
from curation.retrieval.relation_search import SearchOptions, search_relation
from curation.schemas import RelationSchema
from curation.store.annotations import list_annotated_texts
from curation.store.corpus import get_documents
from curation.store.decisions import decisions_for
from curation.store.kb import kb_records_citing
from index.hits import ConceptMatch, StageScore

ROLES = ("query", "answer", "other")
# The entity kinds the Curate page can show or hide (a kind outside this list is always shown).
ENTITY_KINDS = ("gene", "variant", "chemical", "disease", "cellline", "species", "ptm", "residue")
GROUPS = ("all", "some")  # result groups, in their order: mentions every query concept, mentions some


@dataclass(frozen=True)
class ResultRow:
    rank: int
    pmid: str
    title: MarkedText  # text "" when the source has none
    abstract: MarkedText
    best: tuple[MarkedText, ...]  # the best sentences, in document order
    fused: float
    bm25: float | None
    dense: float | None
    answers: tuple[str, ...]
    decisions: tuple[Decision, ...] = ()
    group: str = ""  # "all": mentions every query concept; "some"
    concepts: tuple[ConceptMatch, ...] = ()  # the query concepts it mentions, and how
    stages: tuple[StageScore, ...] = ()  # each stage's score and rank (the hit's provenance)
    year: int | None = None
    journal: str = ""
    authors: str = ""
    pub_types: tuple[str, ...] = ()
    in_kb: tuple[KBRecord, ...] = ()  # the schema's KB records that cite this PMID

    @property
    def before(self) -> int | None:
        """The rank this row had before the curator's grades re-ranked the results (None: it did not move)."""
        return moved_from(self)

    @property
    def meta(self) -> str:
        """ "2019 · J Clin Oncol · Smith J, Doe A, et al. · Clinical Trial" ("" when the source has none)."""
        types = [t for t in self.pub_types if t != "Journal Article"]
        parts = [str(self.year) if self.year else "", self.journal, self.authors, "; ".join(types)]
        return " · ".join(p for p in parts if p)


@dataclass(frozen=True)
class CurateResult:
    query: str
    rows: tuple[ResultRow, ...]
    mode: str
    version: str
    notes: tuple[str, ...] = field(default_factory=tuple)
    concepts: tuple[QueryConcept, ...] = ()  # each typed slot as linked (the page's chips)
    groups: dict[str, int] = field(default_factory=dict)  # documents mentioning all / some of the concepts
    per_concept: tuple[int, ...] = ()  # per slot, documents mentioning it


def role_spans(matcher: Matcher, schema: RelationSchema, values: Mapping[str, str], document: Document) -> list[Span]:
    """Spans of ``document.text`` labelled by role: the query entities, candidate answers, the rest."""
    text = document.text
    spans: list[Span] = []
    for entity_type in schema.query_types:
        value = values.get(entity_type, "").strip()
        if value:
            for s in matcher.matches(value, schema.kind(entity_type), document):
                spans.append(Span(s.start, s.end, s.text, "query", f"{entity_type}: {value}", s.how))
    answer_kind = schema.kind(schema.answer)
    for s in matcher.find_all(document):
        if s.how == "abbreviation":
            role = "abbreviation"
        elif s.entity_type == answer_kind:
            role = "answer"
        else:
            role = "other"
        spans.append(
            Span(s.start, s.end, text[s.start : s.end], role, f"{s.entity_type}: {s.concept or s.text}", s.how)
        )
    return spans


def kinded_spans(
    matcher: Matcher, schema: RelationSchema, values: Mapping[str, str], document: Document,
    annotations: Sequence[Annotation],
) -> list[tuple[str, Span]]:
    """(entity kind, span labelled by role) of ``document.text``: the query entities, candidate answers, the rest.

    Query entities are found by the matcher's g(e, d) (every synonym and notation of the typed value);
    the others are ``annotations`` (the concept index's, or the dictionaries' computed in memory).
    """
    text = document.text
    out: list[tuple[str, Span]] = []
    for entity_type in schema.query_types:
        value = values.get(entity_type, "").strip()
        if value:
            kind = schema.kind(entity_type)
            for s in matcher.matches(value, kind, document):
                out.append((kind, Span(s.start, s.end, s.text, "query", f"{entity_type}: {value}", s.how)))
    answer_kind = schema.kind(schema.answer)
    for a in annotations:
        if not (0 <= a.start < a.end <= len(text)):
            continue  # offsets of a text that changed since it was annotated
        role = "answer" if a.type == answer_kind else "other"
        label = f"{a.type}: {a.canonical or a.concept_id or a.text}"
        out.append((a.type, Span(a.start, a.end, text[a.start : a.end], role, label, a.source)))
    return out


def answer_candidates(spans: list[Span], limit: int = 8) -> tuple[str, ...]:
    """Distinct candidate answer names in order of first mention."""
    seen: dict[str, str] = {}
    for s in sorted((s for s in spans if s.entity_type == "answer"), key=lambda s: s.start):
        seen.setdefault(s.text.casefold(), s.text)
    return tuple(list(seen.values())[:limit])


def curate_search(
    con: duckdb.DuckDBPyConnection,
    retriever,
    matcher: Matcher,
    schema: RelationSchema,
    values: Mapping[str, str],
    mode: str = "hybrid",
    k: int = 20,
    shown: set[str] | None = None,
    kinds: Collection[str] | None = None,
    linker: QueryLinker | None = None,
    applied: Mapping[str, str] | None = None,
    rm3: bool = False,
    grades: Mapping[str, int] | None = None,
) -> CurateResult:
    """Search by concept, find each hit's entity spans and annotate with prior decisions.

    Args:
        linker: links typed names (None: one over the matcher's lexicon, without a learned linker).
        applied: slot → concept id the curator applied from the suggestions.
        rm3: RM3 feedback on the lexical stage.
        grades: pmid → gain of this query's graded results: the ungraded re-rank from them (in-session feedback,
            :mod:`curation.ranking.session`); None or empty: the served order.
        shown: roles whose spans are kept for marking (:data:`ROLES`; None: all).
        kinds: entity kinds to mark (of :data:`ENTITY_KINDS`; None: all). Hidden kinds still give
            candidate answers.
    """
    if linker is None:
        linker = default_linker(con, matcher)

    def fetch(pmids):
        return {d.pmid: d for d in get_documents(con, list(pmids))}

    result = search_relation(
        retriever, linker, matcher, StorePostings(con), fetch, schema, values,
        SearchOptions(mode=mode, k=k, rm3=rm3, applied=dict(applied or {}), grades=dict(grades or {})),
    )
    pmids = [h.pmid for h in result.hits]
    documents = fetch(pmids)
    stored = stored_annotations(con, list(documents))
    missing = [documents[p] for p in documents if p not in stored]
    if missing:  # never annotated (ingested without an annotator): the dictionaries, in memory only
        computed = Annotator(matcher).annotate([d.text for d in missing])
        stored.update({d.pmid: found for d, found in zip(missing, computed, strict=True)})
    hidden = set(ENTITY_KINDS) - set(kinds) if kinds is not None else set()
    citing = kb_records_citing(con, schema.name, pmids)
    decided: dict[str, list[Decision]] = {}
    for decision in decisions_for(con, schema, values):
        decided.setdefault(decision.pmid, []).append(decision)
    # The query entities are marked as linked: a slot's canonical name finds every form of its concepts.
    marked = {c.slot: (c.canonical if c.linked and c.how != "codon" else c.typed) for c in result.concepts}
    rows = []
    for hit in result.hits:
        doc = documents.get(hit.pmid)
        if doc is None:  # the index knows a document the store no longer has
            continue
        kinded = kinded_spans(matcher, schema, marked, doc, stored.get(hit.pmid, ()))
        spans = [s for _, s in kinded]
        visible = [s for kind, s in kinded if kind not in hidden and (shown is None or s.entity_type in shown)]
        offset = len(doc.title) + 1 if doc.title else 0
        abstract_spans = shift(visible, offset, len(doc.abstract))
        best = best_sentences(doc.abstract, shift(spans, offset, len(doc.abstract)), result.query, ("query",),
                              "answer")
        rows.append(
            ResultRow(
                rank=hit.rank,
                pmid=hit.pmid,
                title=MarkedText(doc.title, tuple(shift(visible, 0, len(doc.title)))),
                abstract=MarkedText(doc.abstract, tuple(abstract_spans)),
                best=tuple(MarkedText(s.text, tuple(shift(abstract_spans, s.start, len(s.text)))) for s in best),
                fused=hit.score,
                bm25=hit.bm25,
                dense=hit.dense,
                answers=answer_candidates(spans),
                decisions=tuple(decided.get(hit.pmid, ())),
                group=hit.group,
                concepts=hit.concepts,
                stages=hit.stages,
                year=doc.year,
                journal=doc.journal,
                authors=doc.authors,
                pub_types=doc.pub_types,
                in_kb=tuple(citing.get(hit.pmid, ())),
            )
        )
    return CurateResult(result.query, tuple(rows), result.mode, result.version, result.problems, result.concepts,
                        dict(result.groups), result.per_concept)


def default_linker(con: duckdb.DuckDBPyConnection, matcher: Matcher, normaliser=None, linker=None) -> QueryLinker:
    """The query linker over the matcher's lexicon: the normaliser's suggestions, the learned linker when given,
    and the variant keys of the concept index (what a codon query expands to)."""
    from curation.entities.normalise import Normaliser
    from curation.entities.variants import variant_keys

    keys = {k for text in list_annotated_texts(con, "variant") for k in variant_keys(text)}
    return QueryLinker(matcher.lexicon, normaliser or Normaliser(matcher.lexicon), linker, keys)

