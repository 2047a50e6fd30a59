"""The Curate page's calls: open the page (:func:`open_form` → a :class:`CurateForm`), search a partial
relation (:func:`open_curate` → a :class:`CurateView`), and record, undo or withdraw a decision on one of its
abstracts (:func:`decide`, :func:`undo_last`, :func:`withdraw`).

A :class:`CurateView` is everything the page draws for one search: the ranked rows with their entity
spans (:mod:`curation.retrieval.result_rows`), the suggestions for the missing slot, the search's notes, or
the message that stopped it. :func:`decide` builds the decision's provenance from the view (where the
curator saw the abstract, what ranked it, the suggestion followed) and checks a typed answer's kind
before writing it (:mod:`curation.review.answers`); the curator may confirm an answer the
dictionaries know only as another kind of entity.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace

import duckdb

from curation import access
from curation.access import Action, Who
from curation.config import load_settings
from curation.entities.lexicon import Lexicon
from curation.entities.matching import Matcher
from curation.entities.query import QueryLinker
from curation.errors import USER_ERRORS, CurationError
from curation.grades import Grade
from curation.ranking.session import STAGE as SESSION_STAGE
from curation.ranking.session import query_grades
from curation.records import Decision
from curation.relations.missing_slot import DEFAULT_TOP_DOCS, Suggestion, SuggestionResult, suggest_from
from curation.retrieval.result_rows import ENTITY_KINDS as ENTITY_KINDS  # the kinds the page can hide
from curation.retrieval.result_rows import GROUPS, CurateResult, ResultRow, curate_search
from curation.retrieval.result_rows import ROLES as ROLES  # the highlight roles the page offers
from curation.retrieval.row_filter import DECIDED as DECIDED  # the filter panel's choices
from curation.retrieval.row_filter import IN_KB as IN_KB
from curation.retrieval.row_filter import SORTS as SORTS
from curation.retrieval.row_filter import RowFilter, filter_rows
from curation.review.answers import answer_kind_problem
from curation.review.provenance import decision_provenance
from curation.runtime.foreground import note_foreground
from curation.schemas import RelationSchema
from curation.store.decisions import decisions_for, get_decision, record_decision, undo_last_decision, withdraw_decision
from curation.store.kb import list_entity_values
from curation.workflows.answers import AnswerKindError
from curation.workflows.background_load import index_state
from curation.workflows.entities import annotator_note
from curation.workflows.session import corpus_size, current_schema

KNOWN_VALUES_SHOWN = 2000  # typed-ahead choices per slot, most frequent first
# In-session feedback starts switched off: on benchmark v2 (bench/ranker_session.py, residual collection) its gain's
# interval includes 0 on dev and on test, and what is not shown to help does not change a curator's order unasked
# (the gate's rule for versions). The Curate page's switch turns it on.
SESSION_FEEDBACK_DEFAULT = False


@dataclass(frozen=True)
class CurateForm:
    """What the Curate page draws before a search.

    Attributes:
        abstracts: abstracts in the store (0: the page points to the Knowledge base page instead).
        schema: the relation schema chosen in the sidebar (the default one before a choice).
        in_team: whether the store is a team store (typed names from before are marked self-declared).
        known: slot → the KB's values of it, most frequent first (the slots' type-ahead choices).
        annotator_note: what the highlights come from (the entity kinds' help).
    """

    abstracts: int
    schema: RelationSchema
    in_team: bool
    known: dict[str, list[str]]
    annotator_note: str


def open_form(con: duckdb.DuckDBPyConnection, schema: str | None) -> CurateForm:
    """The page before a search: the schema ``schema`` names (None: the default), its slots' choices.

    Raises:
        SchemaError: ``schema`` is not a schema of this store.
    """
    abstracts = corpus_size(con)
    chosen = current_schema(con, schema)
    known = {slot: known_values(con, chosen, slot) for slot in chosen.query_types} if abstracts else {}
    return CurateForm(abstracts, chosen, access.is_team_store(con), known, annotator_note(con))


@dataclass(frozen=True)
class Arrangement:
    """The rows a curator sees, in the order they are drawn (the focus walks that order).

    Attributes:
        groups: group → its rows ("all", "some" under the relevance sort; "sorted" under another sort).
        row_filter: the filter applied (the saved query's new abstracts included), for its description.
        filtered: rows the filters keep, before a chosen suggestion narrows them to its abstracts.
    """

    groups: dict[str, tuple[ResultRow, ...]]
    row_filter: RowFilter
    filtered: int

    @property
    def rows(self) -> tuple[ResultRow, ...]:
        return tuple(row for rows in self.groups.values() for row in rows)


@dataclass(frozen=True)
class CurateView:
    """One search of the Curate page, ready to draw.

    Attributes:
        schema, values: the relation schema and the partial relation as typed (slot → value).
        rm3: whether RM3 feedback ranked it (stored with a decision's provenance).
        result: the ranked rows, the query as read, each slot's concepts and the search's notes
            (None when ``error``).
        suggestions: the candidates for the missing slot from the top abstracts (None when ``error``).
        error: why the search could not run, for the curator ("" when it ran).
        index_note: that the concept index is still being built (a load is unfinished) and what is left; "" when
            it is complete. While it is set, an empty answer is never presented as "none found".
        graded: how many of this query's results are graded when the ungraded re-ranked from them (0: they did
            not, in-session feedback off or nothing graded yet).
    """

    schema: RelationSchema
    values: dict[str, str]
    rm3: bool = False
    result: CurateResult | None = None
    suggestions: SuggestionResult | None = None
    error: str = ""
    index_note: str = ""
    graded: int = 0

    @property
    def moved(self) -> int:
        """How many rows the curator's grades moved."""
        return sum(r.before is not None for r in self.result.rows) if self.result else 0

    def row(self, pmid: str) -> ResultRow | None:
        """The result row of ``pmid`` (None when this search did not find it)."""
        return next((r for r in self.result.rows if r.pmid == pmid), None) if self.result else None

    def arrange(self, row_filter: RowFilter, only: Collection[str] | None = None,
                chosen: Suggestion | None = None) -> Arrangement:
        """The rows ``row_filter`` keeps, narrowed to ``only`` (a saved query's new abstracts: an empty
        collection keeps none) and to the abstracts that support ``chosen``, grouped as drawn."""
        if only is not None:
            row_filter = replace(row_filter, only=frozenset(only) or frozenset({""}))
        kept = filter_rows(self.result.rows if self.result else (), row_filter)
        filtered = len(kept)
        if chosen is not None:
            supporting = {p.pmid for p in chosen.papers}
            kept = [r for r in kept if r.pmid in supporting]
        if row_filter.sort == "relevance":
            groups = {group: tuple(r for r in kept if (r.group or "all") == group) for group in GROUPS}
        else:
            groups = {"sorted": tuple(kept)}
        return Arrangement(groups, row_filter, filtered)


def open_curate(
    con: duckdb.DuckDBPyConnection,
    retriever,
    matcher: Matcher,
    linker: QueryLinker,
    schema: RelationSchema,
    values: Mapping[str, str],
    *,
    mode: str = "hybrid",
    depth: int = 20,
    shown: set[str] | None = None,
    kinds: Collection[str] | None = None,
    applied: Mapping[str, str] | None = None,
    rm3: bool = False,
    feedback: bool = SESSION_FEEDBACK_DEFAULT,
) -> CurateView:
    """Search a partial relation and gather what the Curate page draws for it.

    Args:
        retriever: what serves the schema now; a retriever without a dense index ranks with BM25 alone.
        depth: results shown; at least the abstracts the suggestions read are searched (every supporting
            abstract is among the results).
        shown, kinds, applied, rm3: as :func:`curation.retrieval.result_rows.curate_search`.
        feedback: re-rank the ungraded results from this query's grades (in-session feedback; off: the served
            order as it is).

    Returns:
        The view; a message the curator can act on (a name too long, a slot that cannot be read) comes back
        as ``error``, nothing else searched.
    """
    note_foreground()  # a curator waits for it: background work (the learned parts after a load, a backup) steps aside
    values = dict(values)
    if retriever.dense is None:
        mode = "bm25"  # the planned version did not load: BM25 serves
    grades = query_grades(decisions_for(con, schema, values)) if feedback else {}
    try:
        result = curate_search(con, retriever, matcher, schema, values, mode=mode, k=max(depth, DEFAULT_TOP_DOCS),
                               shown=shown, kinds=kinds, linker=linker, applied=applied, rm3=rm3, grades=grades)
        # The suggestions for the missing slot: the stored relation scores of this ranking's top abstracts.
        suggestions = suggest_from(con, matcher, schema, values, result.concepts,
                                   {row.pmid: row.rank for row in result.rows})
    except USER_ERRORS as exc:
        return CurateView(schema, values, rm3, error=str(exc))
    index = index_state(con, load_settings())
    if index.building and not suggestions.suggestions:
        # The stored annotations and relation pairs the suggestions read are not all there yet: "none of the top
        # abstracts mentions ..." would be false.
        suggestions = replace(suggestions, message=(
            f"the concept index is still being built ({index.annotated:,} of {index.documents:,} abstracts "
            "annotated), so what the top abstracts relate to the query cannot be said yet"))
    graded = sum(1 for row in result.rows if row.pmid in grades)
    reranked = any(s.stage == SESSION_STAGE for row in result.rows for s in row.stages)
    return CurateView(schema, values, rm3, result, suggestions, index_note=index.message(),
                      graded=graded if reranked else 0)


def decide(
    con: duckdb.DuckDBPyConnection,
    lexicon: Callable[[], Lexicon],
    who: Who,
    view: CurateView,
    pmid: str,
    grade: Grade,
    answer: str = "",
    note: str = "",
    confirm_kind: bool = False,
    suggestion: Suggestion | None = None,
) -> Decision:
    """Record a decision on one abstract of ``view``, with its provenance.

    Args:
        lexicon: the dictionaries, asked for only when a typed answer's kind is checked (a grade alone
            does not wait for them).
        suggestion: the suggestion the curator was following; stored with the decision when ``pmid`` is
            one of its supporting abstracts.

    Raises:
        AnswerKindError: as :func:`record_judgement`; nothing is written.
        CurationError: whatever :func:`record_judgement` refuses.
    """
    note_foreground()  # a curator waits for it: the abstracts' warming steps aside (its spaCy batches hold the GIL)
    answer, note = answer or "", note or ""
    row = view.row(pmid)
    provenance = ""
    if row is not None and view.result is not None:
        followed = suggestion if suggestion is not None and pmid in {p.pmid for p in suggestion.papers} else None
        provenance = decision_provenance(row, row.rank, view.result.version, view.result.mode, view.result.concepts,
                                         view.rm3, suggestion=followed)
    checked = lexicon() if answer.strip() and not confirm_kind else None
    return record_judgement(con, checked, who, view.schema, view.values, pmid, grade, answer=answer, note=note,
                            confirm_kind=confirm_kind, provenance=provenance)


def record_judgement(
    con: duckdb.DuckDBPyConnection,
    lexicon: Lexicon | None,
    curator: Who,
    schema: RelationSchema,
    values: Mapping[str, str],
    pmid: str,
    grade: Grade,
    answer: str = "",
    note: str = "",
    confirm_kind: bool = False,
    provenance: str = "",
) -> Decision:
    """Record a curator's decision (:func:`curation.store.decisions.record_decision`), checking the answer's kind first.

    ``lexicon``: what the answer's kind is checked against; may be None only when no answer is given
    (a grade alone need not wait for the dictionaries). ``provenance``: how the search found the document,
    stored with the decision (:func:`curation.review.provenance.provenance_json` of its hit); "" when
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
    return record_decision(con, identity.name, schema, values, pmid, grade, answer=answer, note=note,
                           provenance=provenance, identity_source=identity.source)


def card_decisions(
    con: duckdb.DuckDBPyConnection, schema: RelationSchema, values: Mapping[str, str], pmid: str
) -> tuple[Decision, ...]:
    """The active decisions of every curator on one abstract for one partial relation (a result card's
    caption and history, read again after a grade)."""
    return tuple(d for d in decisions_for(con, schema, values) if d.pmid == pmid)


def known_values(con: duckdb.DuckDBPyConnection, schema: RelationSchema, entity_type: str) -> list[str]:
    """The KB's values of one slot, most frequent first (the Curate page's type-ahead choices)."""
    return [v for v, _ in list_entity_values(con, schema.name, entity_type)[:KNOWN_VALUES_SHOWN]]


def undo_last(con: duckdb.DuckDBPyConnection, curator: Who) -> Decision | None:
    """Withdraw ``curator``'s most recent decision (None when there is nothing to undo).

    Only decisions made under the same identity source are theirs: a signed-in person's undo never reaches a
    self-declared decision typed under the same name before the store was in team mode.
    """
    identity = access.require(con, curator, Action.UNDO_OWN)
    return undo_last_decision(con, identity.name, identity.source)


def withdraw(con: duckdb.DuckDBPyConnection, who: Who, decision_id: int) -> Decision:
    """Withdraw one active decision by id: one's own (as an undo), or another person's (adjudicator, maintainer).

    Raises:
        AccessDeniedError: it is someone else's decision and ``who`` may not withdraw others'; nothing changes.
        CurationError: no such decision, or it is no longer active.
    """
    decision = get_decision(con, decision_id)
    if decision is None:
        raise CurationError(f"there is no decision {decision_id}")
    identity = access.identity_of(who)
    own = decision.curator == identity.name and decision.identity_source == identity.source
    identity = access.require(con, identity, Action.UNDO_OWN if own else Action.WITHDRAW_ANY)
    return withdraw_decision(con, decision_id, identity.name)

