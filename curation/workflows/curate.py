"""The Curate page's one call: a partial relation in, ranked and highlighted abstracts out.

The ranking is the concept search (:func:`curation.retrieval.relation_search.search_relation`): each typed
slot linked to its concepts, documents that mention every concept first, then those that mention
some, never one that mentions none. For each hit: the escaped abstract with entity highlights by
role (query entities, candidate answers, other entities), the two or three best sentences, each component's score, the
answer-type entities found in it (to pre-fill the answer field) and the decisions already
recorded for this relation and document.

Entity highlights come from the concept index (the store's annotations, written at ingest), read
for all hits in one query; a document without stored annotations is annotated in memory with the
dictionaries (nothing is written on a page view). Query entities are found by the matcher's g(e, d)
(every synonym and notation of what was typed). Each entity kind can be hidden (``kinds``).

:func:`record_judgement` is the page's other call: a decision, after checking that a typed
answer is not a name the dictionaries know only as another kind of entity (a gene given as
a treatment), which the curator may confirm.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

import duckdb

from curation import access, store
from curation.access import Action, Who
from curation.entities.annotation import Annotation, Annotator
from curation.entities.lexicon import Lexicon
from curation.entities.matching import Matcher
from curation.entities.postings import StorePostings
from curation.entities.query import QueryConcept, QueryError, QueryLinker
from curation.errors import CurationError
from curation.records import Decision, Document, KBRecord, Span
from curation.retrieval.relation_search import SearchOptions, search_relation
from curation.schemas import RelationSchema
from curation.workflows.entities import stored_annotations
from curation.workflows.highlight import NO_TITLE_HTML, best_sentences, shift, to_html
from index.hits import ConceptMatch, StageScore

ROLES = ("query", "answer", "other")
# The entity kinds the Curate page can show or hide (a kind outside this list is always shown).
ENTITY_KINDS = ("gene", "variant", "chemical", "disease", "cellline", "species", "ptm", "residue")


@dataclass(frozen=True)
class ResultRow:
    rank: int
    pmid: str
    title_html: str
    abstract_html: str
    best_html: tuple[str, ...]
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
) -> CurateResult:
    """Search by concept, highlight and annotate with prior decisions (every text escaped).

    Args:
        linker: links typed names (None: one over the matcher's lexicon, without a learned linker).
        applied: slot → concept id the curator applied from the suggestions.
        rm3: RM3 feedback on the lexical stage.
        shown: roles to mark (:data:`ROLES`; None: all).
        kinds: entity kinds to mark (of :data:`ENTITY_KINDS`; None: all). Hidden kinds still give
            candidate answers.
    """
    if linker is None:
        linker = default_linker(con, matcher)

    def fetch(pmids):
        return {d.pmid: d for d in store.get_documents(con, list(pmids))}

    result = search_relation(
        retriever, linker, matcher, StorePostings(con), fetch, schema, values,
        SearchOptions(mode=mode, k=k, rm3=rm3, applied=dict(applied or {})),
    )
    pmids = [h.pmid for h in result.hits]
    documents = fetch(pmids)
    stored = stored_annotations(con, list(documents))
    missing = [documents[p] for p in documents if p not in stored]
    if missing:  # never annotated (ingested without an annotator): the dictionaries, in memory only
        computed = Annotator(matcher).annotate([d.text for d in missing])
        stored.update({d.pmid: found for d, found in zip(missing, computed, strict=True)})
    hidden = set(ENTITY_KINDS) - set(kinds) if kinds is not None else set()
    citing = store.kb_records_citing(con, schema.name, pmids)
    decided: dict[str, list[Decision]] = {}
    for decision in store.decisions_for(con, schema, values):
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
        visible = [s for kind, s in kinded if kind not in hidden]
        offset = len(doc.title) + 1 if doc.title else 0
        abstract_spans = shift(visible, offset, len(doc.abstract))
        best = best_sentences(doc.abstract, shift(spans, offset, len(doc.abstract)), result.query, ("query",),
                              "answer")
        rows.append(
            ResultRow(
                rank=hit.rank,
                pmid=hit.pmid,
                title_html=to_html(doc.title, shift(visible, 0, len(doc.title)), shown=shown) if doc.title
                else NO_TITLE_HTML,
                abstract_html=to_html(doc.abstract, abstract_spans, shown=shown),
                best_html=tuple(
                    to_html(s.text, shift(abstract_spans, s.start, len(s.text)), shown=shown) for s in best
                ),
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

    keys = {k for text in store.list_annotated_texts(con, "variant") for k in variant_keys(text)}
    return QueryLinker(matcher.lexicon, normaliser or Normaliser(matcher.lexicon), linker, keys)


class AnswerKindError(CurationError):
    """The answer is a name the dictionaries know only as another kind of entity (a warning to confirm)."""


def answer_kind_problem(lexicon: Lexicon, schema: RelationSchema, answer: str) -> str | None:
    """Why ``answer`` looks like the wrong kind of entity for the schema's answer, or None.

    Conservative on purpose: only a name the lexicon knows as some other kind and never as the
    answer's kind is questioned. A name it does not know passes (new names are what curators
    add), and so does a schema whose answer kind is "generic".
    """
    expected = schema.kind(schema.answer)
    answer = " ".join(answer.split())
    if not answer or expected == "generic":
        return None
    kinds = sorted({kind for kind, _ in lexicon.lookup(answer)})
    if not kinds or expected in kinds:
        return None
    return (
        f"'{answer}' is known as a {' and '.join(kinds)} name, not a {expected}, but the {schema.answer} of a "
        f"{schema.name} relation is a {expected}. Pick the {expected} the abstract names, or record it anyway "
        "if the dictionaries are wrong about this name"
    )


def record_judgement(
    con: duckdb.DuckDBPyConnection,
    lexicon: Lexicon | None,
    curator: Who,
    schema: RelationSchema,
    values: Mapping[str, str],
    pmid: str,
    grade: str,
    answer: str = "",
    note: str = "",
    confirm_kind: bool = False,
    provenance: str = "",
) -> Decision:
    """Record a curator's decision (:func:`curation.store.record_decision`), checking the answer's kind first.

    ``lexicon``: what the answer's kind is checked against; may be None only when no answer is given
    (a grade alone need not wait for the dictionaries). ``provenance``: how the search found the document,
    stored with the decision (:func:`curation.workflows.provenance.provenance_json` of its hit); "" when
    not known.

    Raises:
        AnswerKindError: the answer is known only as another kind of entity and ``confirm_kind``
            is False; nothing is written.
        CurationError: whatever ``record_decision`` refuses (no curator, unknown document, ...).
    """
    identity = access.require(con, curator, Action.DECIDE)
    if not confirm_kind and answer.strip():
        if lexicon is None:
            raise ValueError("record_judgement: an answer is checked against a lexicon; none was given")
        if problem := answer_kind_problem(lexicon, schema, answer):
            raise AnswerKindError(problem)
    return store.record_decision(con, identity.name, schema, values, pmid, grade, answer=answer, note=note,
                                 provenance=provenance, identity_source=identity.source)


def card_decisions(
    con: duckdb.DuckDBPyConnection, schema: RelationSchema, values: Mapping[str, str], pmid: str
) -> tuple[Decision, ...]:
    """The active decisions of every curator on one abstract for one partial relation (a result card's
    caption and history, read again after a grade)."""
    return tuple(d for d in store.decisions_for(con, schema, values) if d.pmid == pmid)


KNOWN_VALUES_SHOWN = 2000  # typed-ahead choices per slot, most frequent first


def known_values(con: duckdb.DuckDBPyConnection, schema: RelationSchema, entity_type: str) -> list[str]:
    """The KB's values of one slot, most frequent first (the Curate page's type-ahead choices)."""
    return [v for v, _ in store.list_entity_values(con, schema.name, entity_type)[:KNOWN_VALUES_SHOWN]]


def undo_last(con: duckdb.DuckDBPyConnection, curator: Who) -> Decision | None:
    """Withdraw ``curator``'s most recent decision (None when there is nothing to undo).

    Only decisions made under the same identity source are theirs: a signed-in person's undo never reaches a
    self-declared decision typed under the same name before the store was in team mode.
    """
    identity = access.require(con, curator, Action.UNDO_OWN)
    return store.undo_last_decision(con, identity.name, identity.source)


def withdraw(con: duckdb.DuckDBPyConnection, who: Who, decision_id: int) -> Decision:
    """Withdraw one active decision by id: one's own (as an undo), or another person's (adjudicator, maintainer).

    Raises:
        AccessDeniedError: it is someone else's decision and ``who`` may not withdraw others'; nothing changes.
        CurationError: no such decision, or it is no longer active.
    """
    decision = store.get_decision(con, decision_id)
    if decision is None:
        raise CurationError(f"there is no decision {decision_id}")
    identity = access.identity_of(who)
    own = decision.curator == identity.name and decision.identity_source == identity.source
    identity = access.require(con, identity, Action.UNDO_OWN if own else Action.WITHDRAW_ANY)
    return store.withdraw_decision(con, decision_id, identity.name)


@dataclass(frozen=True)
class AnswerCheck:
    """A typed answer as the search would read it, and whether the abstract names it.

    Attributes:
        answer: the answer as typed (spacing tidied).
        status: "linked", "offered" (a suggestion waits: searched as typed) or "unknown", as a query slot's.
        concept_ids: the concepts it links to (empty unless linked).
        canonical: the linked concept's display name (the answer itself when not linked).
        how: how it was linked ("exact", "notation", "linker", ...), "" when not linked.
        suggestions: the dictionaries' close names when it is not linked, best first.
        mentioned: whether the abstract writes it (any name or notation of its concepts).
        forms: how the abstract writes it, in text order.
        problem: a sentence for the curator when the answer is not mentioned or cannot be read, else "".
    """

    answer: str
    status: str
    concept_ids: tuple[str, ...] = ()
    canonical: str = ""
    how: str = ""
    suggestions: tuple[str, ...] = ()
    mentioned: bool = False
    forms: tuple[str, ...] = ()
    problem: str = ""

    @property
    def linked(self) -> bool:
        return self.status == "linked"


def check_answer(
    con: duckdb.DuckDBPyConnection, matcher: Matcher, linker: QueryLinker, schema: RelationSchema, pmid: str,
    answer: str,
) -> AnswerCheck:
    """Normalise a curator's answer as a query slot is (:meth:`QueryLinker.link`) and look for it in the abstract.

    The abstract is searched with the matcher's g(e, d) for the linked name (every name and notation of
    its concepts) or, when it is not linked, for the answer as typed. Never raises for what was typed:
    an answer that cannot be read (a passage, not a name) comes back with ``problem`` saying why.
    """
    kind = schema.kind(schema.answer)
    text = " ".join(answer.split())
    try:
        concept = linker.link(schema.answer, text, kind)
    except QueryError as exc:
        return AnswerCheck(text, "unknown", canonical=text, problem=str(exc))
    suggestions = () if concept.linked else tuple(dict.fromkeys(c.canonical for c in concept.alternatives))[:3]
    documents = store.get_documents(con, [pmid])
    if not documents:
        return AnswerCheck(concept.typed, concept.status, concept.concept_ids, concept.canonical, concept.how,
                           suggestions, problem=f"PMID {pmid} is not in the store, so the answer cannot be checked")
    name = concept.canonical if concept.linked and not concept.codon else concept.typed
    spans = matcher.matches(name, kind, documents[0])
    forms = tuple(dict.fromkeys(s.text for s in spans))
    problem = ""
    if not spans:
        shown = f"'{concept.typed}'" + (f" ({concept.canonical})" if concept.canonical != concept.typed else "")
        names = " or any other name of it" if concept.linked else ""
        problem = (f"The abstract of PMID {pmid} does not mention {shown}{names}; check that it is this abstract's "
                   f"{schema.answer.lower()}")
        if suggestions:
            problem += ". Did you mean " + ", ".join(f"'{s}'" for s in suggestions) + "?"
    return AnswerCheck(concept.typed, concept.status, concept.concept_ids, concept.canonical, concept.how,
                       suggestions, bool(spans), forms, problem)
