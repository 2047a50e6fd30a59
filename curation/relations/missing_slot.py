"""Suggest the missing slot: which concepts the literature relates to a partial relation, and whether the KB
has them.

:func:`suggest_from` takes the served search's ranking (``curation.workflows.suggest.suggest`` runs
:func:`curation.retrieval.relation_search.search_relation`, the Curate page's ranking, for the top ``top_docs``
documents; the Curate page passes the ranking it has drawn), reads their stored relation pairs (scored when
each document was annotated: :mod:`curation.relations.stored_pairs`; nothing is scored here), keeps the pairs
joining a query slot's concepts to a concept of the missing slot's kind, and ranks those candidates with
:func:`curation.relations.suggestions.aggregate` (the rule chosen on dev,
:data:`~curation.relations.suggestions.RULE`). Each suggestion carries its supporting documents (those whose
probability reaches the scorer's threshold), each with the sentence that relates them (escaped, the two concepts
marked), and whether the KB already holds the completed relation, with the KB's PMIDs for it
(:mod:`curation.relations.kb_check`).

A candidate is a concept of the answer's kind that a top document pairs with a query entity (in one sentence
only when :data:`SENTENCE` says so; dev chose the document); for two or more query slots a document supports it
when its best slot's probability reaches the scorer's threshold (:data:`NARY_COMBINE`). Each supporting
sentence is read by the direction model (:mod:`curation.relations.direction`), and a schema whose answer has a
direction (a Disease-Treatment's treats) leaves out the candidates whose sentences say the opposite. Generic
concepts (:mod:`curation.relations.generic_concepts`) and, for a chemical answer, the names the answer-kind filter
judges no Treatment are left out unless the KB holds them as answers.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import duckdb

from curation.config import load_settings
from curation.entities.matching import Matcher
from curation.entities.postings import StorePostings
from curation.entities.query import QueryConcept
from curation.records import Span
from curation.relations.active import SCORE_THE_REST_HINT, ActiveScorer, active_scorer
from curation.relations.answer_filter import answer_filter
from curation.relations.direction import head_of, mask, wanted_label
from curation.relations.generic_concepts import is_generic
from curation.relations.kb_check import held_in_kb, kb_holdings
from curation.relations.suggestions import (
    NARY_COMBINE,
    RULE,
    SENTENCE,
    aggregate,
    gather_evidence,
    merge_names,
    slot_concept_ids,
)
from curation.schemas import RelationSchema
from curation.store.annotations import list_annotations
from curation.store.corpus import get_documents
from curation.store.relations import count_unscored_documents

#: documents of the served ranking the suggestions are drawn from (chosen on dev by bench/suggest.py)
DEFAULT_TOP_DOCS = 20
MAX_TOP_DOCS = 500
SHOWN = 30  # suggestions kept (each with every supporting document)


@dataclass(frozen=True)
class SupportingPaper:
    """A document that relates a suggestion to the query: its served rank, the probability, the sentence."""

    pmid: str
    rank: int
    probability: float
    title: str
    sentence_marks: tuple[Span, ...]  # the query's and the suggestion's mentions in ``sentence`` (roles)
    same_sentence: bool
    sentence: str = ""  # the sentence as plain text (the page escapes it; exports write it)
    direction: str = ""  # what the sentence says of the pair ("responds to", "resistance", "treats", "induces")
    direction_probability: float | None = None  # the direction head's probability of its second label


@dataclass(frozen=True)
class Suggestion:
    """One candidate for the missing slot."""

    rank: int
    concept_id: str
    name: str
    kind: str
    score: float
    papers: tuple[SupportingPaper, ...]  # the supporting documents, best first
    co_mentions: int  # documents of the top N that mention it with the query, supporting or not
    in_kb: bool = False
    kb_pmids: tuple[str, ...] = ()
    concept_ids: tuple[str, ...] = ()  # every concept id it was found as (one name in two vocabularies)
    scorer: str = ""  # the relation scorer whose scores ranked it
    direction: str = ""  # what most supporting sentences say ("responds to", "resistance", ...; "" unknown)

    def label(self) -> str:
        """The chip's text: name, its direction, supporting papers, and whether the KB lacks it."""
        papers = f"{self.supporting} paper{'s' if self.supporting != 1 else ''}"
        direction = f" · {self.direction}" if self.direction else ""
        return f"{self.name}{direction} · {papers}" + ("" if self.in_kb else " · new to the KB")

    @property
    def supporting(self) -> int:
        return len(self.papers)


@dataclass(frozen=True)
class SuggestionResult:
    """Suggestions for one partial relation, and what they were drawn from."""

    schema: str
    slot: str  # the missing slot ("Treatment")
    values: dict[str, str]
    concepts: tuple[QueryConcept, ...]
    suggestions: tuple[Suggestion, ...]
    documents: int  # documents of the served ranking read
    top_docs: int
    scorer: str
    weak: int = 0  # candidates co-mentioned with the query but related by no document
    message: str = ""  # why there is no suggestion ("" when there are)
    notes: tuple[str, ...] = field(default_factory=tuple)
    seconds: float = 0.0

    @property
    def new_to_kb(self) -> tuple[Suggestion, ...]:
        return tuple(s for s in self.suggestions if not s.in_kb)


def _sentence_marks(text: str, start: int, end: int, marks: Sequence[tuple[int, int, str, str]]
                    ) -> tuple[Span, ...]:
    """The marks inside ``text[start:end]``, with offsets into that sentence."""
    return tuple(Span(s - start, e - start, text[s:e], role, label, "") for s, e, role, label in marks
                 if start <= s < e <= end)


def suggest_from(con: duckdb.DuckDBPyConnection, matcher: Matcher, schema: RelationSchema, values: Mapping[str, str],
                 concepts: Sequence[QueryConcept], ranks: Mapping[str, int], top_docs: int = DEFAULT_TOP_DOCS,
                 active: ActiveScorer | None = None, limit: int = SHOWN, notes: Sequence[str] = (),
                 started: float | None = None, kind_filter: bool = True) -> SuggestionResult:
    """Suggestions drawn from a served ranking already made: ``ranks`` (PMID → rank; those ranked within
    ``top_docs`` are read) and ``concepts``, each typed slot as the search linked it. ``kind_filter``: leave out
    the candidates that are not of the answer slot's kind (:mod:`curation.relations.answer_filter`; off only to
    measure what it changes)."""
    started = time.perf_counter() if started is None else started
    active = active or active_scorer(con)
    source = StorePostings(con)
    answer_kind = schema.kind(schema.answer)

    typed = {c.slot: c for c in concepts}
    ranks = {pmid: rank for pmid, rank in ranks.items() if rank <= top_docs}
    notes = list(notes) + ([active.message] if active.message else [])
    stale = count_unscored_documents(con, active.version) if active.scorer is not None else 0
    if stale:
        notes.append(f"{stale:,} documents still carry another scorer's relation scores; {SCORE_THE_REST_HINT}")
    base = dict(schema=schema.name, slot=schema.answer, values=dict(values), concepts=tuple(concepts),
                documents=len(ranks), top_docs=top_docs, scorer=active.version)
    if answer_kind == "generic":
        return SuggestionResult(**base, suggestions=(), notes=tuple(notes), message=(
            f"the {schema.answer} of a {schema.name} relation is not an entity kind the recogniser finds, so it "
            "cannot be suggested"), seconds=time.perf_counter() - started)
    if not ranks:
        return SuggestionResult(**base, suggestions=(), notes=tuple(notes), message=(
            "no abstract mentions the query's concepts, so there is nothing to suggest"),
            seconds=time.perf_counter() - started)
    slots = {slot: slot_concept_ids(source, c) for slot, c in typed.items()}
    lexicon = matcher.lexicon
    evidence, merged = merge_names(gather_evidence(con, ranks, slots, {s: c.kind for s, c in typed.items()},
                                                   answer_kind), lexicon, answer_kind)
    combine = NARY_COMBINE if len(typed) > 1 else "max"
    ranked = aggregate(evidence, typed, combine=combine, threshold=active.threshold, sentence=SENTENCE, **RULE)
    ids_of: dict[str, list[str]] = defaultdict(list)
    for cid, keys in merged.items():
        ids_of[keys[0]].append(cid)
    generic = [c for c in ranked if is_generic(answer_kind, ids_of[c.concept_id], c.name)]
    if generic:  # unless the KB holds it as this slot's answer: then the schema asks for it
        held = kb_holdings(con, schema, concepts, lexicon)
        generic = [c for c in generic
                   if not any(held_in_kb(held, lexicon, answer_kind, cid, c.name)[0] for cid in ids_of[c.concept_id])]
    if generic:
        notes.append(f"left out as too general to be a {schema.answer}: {', '.join(c.name for c in generic)}")
        ranked = [c for c in ranked if c not in generic]
    keep = answer_filter(con, schema, lexicon, load_settings().cache_dir / "answers") if kind_filter else None
    if keep is not None and ranked:
        kept = keep.keep_many([(ids_of[c.concept_id], c.name) for c in ranked])
        if not all(kept):
            notes.append(f"{kept.count(False)} {answer_kind} names are left out as not a {schema.answer} (reagents, "
                         f"solvents, ions: a filter learned from the KB's {schema.answer} values)")
            ranked = [c for c, k in zip(ranked, kept, strict=True) if k]
    supported = [c for c in ranked if c.supporting]
    if not supported:
        query = " and ".join(f"{c.slot} {c.canonical or c.typed}" for c in concepts)
        what = f"mentions a {answer_kind} with {query}" if not ranked else f"relates a {answer_kind} to {query}"
        return SuggestionResult(**base, suggestions=(), weak=len(ranked), notes=tuple(notes), message=(
            f"none of the top {len(ranks)} abstracts {what}" + (
                f" ({len(ranked)} {answer_kind} names are only mentioned nearby)" if ranked else "")),
            seconds=time.perf_counter() - started)
    supported = supported[:limit]
    holdings = kb_holdings(con, schema, concepts, lexicon)
    shown_pmids = sorted({s.pmid for c in supported for s in c.documents if s.probability >= active.threshold})
    documents = {d.pmid: d for d in get_documents(con, shown_pmids)}
    marks: dict[str, list[tuple[int, int, str, str]]] = defaultdict(list)
    query_ids = {pmid: set().union(*(slots[s].get(pmid, set()) for s in slots)) for pmid in shown_pmids}
    for pmid, rows in list_annotations(con, shown_pmids).items():
        for r in rows:
            ids = set(re.split(r"[,;]", r.concept_id or ""))
            if ids & query_ids.get(pmid, set()):
                marks[pmid].append((r.start, r.end, "query", f"{r.entity_type}: {r.canonical or r.text}"))
            elif r.entity_type == answer_kind:
                keys = sorted({key for cid in ids for key in merged.get(cid, ())})
                marks[pmid].append((r.start, r.end, f"answer:{'|'.join(keys)}",
                                    f"{r.entity_type}: {r.canonical or r.text}"))
    head = head_of([c.kind for c in typed.values()], answer_kind)
    model = active.scorer.direction if active.scorer is not None and head is not None else None
    wanted = wanted_label(schema.name, schema.answer, head) if model is not None and head in model.heads else None
    unwanted: list[str] = []
    out = []
    for candidate in supported:
        papers = []
        for s in candidate.documents:
            doc = documents.get(s.pmid)
            if s.probability < active.threshold or doc is None:
                continue
            own = [(a, b, "query" if role == "query" else "answer", label) for a, b, role, label in marks[s.pmid]
                   if role == "query" or candidate.concept_id in role.split(":", 1)[1].split("|")]
            sentence_marks = _sentence_marks(doc.text, *s.evidence, own)
            sentence = doc.text[s.evidence[0]:s.evidence[1]]
            read = (model.direction(head, _masked(sentence, sentence_marks, answer_kind == "chemical"))
                    if model is not None else None)
            papers.append(SupportingPaper(s.pmid, s.rank, round(s.probability, 4), doc.title, sentence_marks,
                                          s.same_sentence, sentence, read.label if read else "",
                                          round(read.probability, 4) if read else None))
        direction = _direction(model, head, papers)
        if wanted is not None and direction and direction != wanted:
            unwanted.append(candidate.name)
            continue
        ids = tuple(cid for cid, keys in merged.items() if candidate.concept_id in keys)
        found = [held_in_kb(holdings, lexicon, answer_kind, cid, candidate.name) for cid in ids]
        in_kb = any(f for f, _ in found)
        kb_pmids = tuple(sorted({p for _, pmids in found for p in pmids}))
        out.append(Suggestion(len(out) + 1, ids[0], candidate.name, answer_kind, candidate.score, tuple(papers),
                              len(candidate.documents), in_kb, kb_pmids, ids, active.version, direction))
    if unwanted:
        notes.append(f"left out because their sentences say the opposite of \"{wanted}\" (what a {schema.answer} "
                     f"of {schema.name} must be): {', '.join(unwanted)}")
    return SuggestionResult(**base, suggestions=tuple(out), weak=len(ranked) - len([c for c in ranked if c.supporting]),
                            notes=tuple(notes), seconds=time.perf_counter() - started)


def _masked(sentence: str, marks: Sequence[Span], answer_is_drug: bool) -> str:
    """The sentence with the drug's mentions as ``@b`` and the other side's as ``@a`` (the direction's input): the
    suggestion is the drug of a Treatment slot, the query is of a Chemical-Disease one."""
    query = [(m.start, m.end) for m in marks if m.entity_type == "query"]
    answer = [(m.start, m.end) for m in marks if m.entity_type == "answer"]
    return mask(sentence, query, answer) if answer_is_drug else mask(sentence, answer, query)


def _direction(model, head: str | None, papers: Sequence[SupportingPaper]) -> str:
    """What the supporting sentences say together: the label of their mean probability ("" without a model)."""
    read = [p.direction_probability for p in papers if p.direction_probability is not None]
    if model is None or head not in model.heads or not read:
        return ""
    return model.heads[head].label(sum(read) / len(read))
