"""One result of the Curate page as a card: title, what it mentions and its scores, the best sentences, the
answer and the grade buttons.

The card is a fragment: a grade, an answer or a note reruns it alone. Everything it reads comes in as
arguments (:class:`Card`), never from the page's globals; every text shown is escaped by
:mod:`pages.parts.highlight`.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import streamlit as st

from curation.errors import USER_ERRORS
from curation.grades import GRADE_LABELS, GRADES, Grade
from curation.records import is_adjudication
from curation.workflows import curate, timing
from curation.workflows.answers import AnswerKindError, check_answer
from curation.workflows.curate import ResultRow
from curation.workflows.provenance import decision_history
from curation.workflows.suggest import Suggestion
from pages.parts import concept_chips as chips
from pages.parts import highlight
from pages.parts import result_filters as filters
from pages.parts.common import GRADE_SHORTCUTS, log_decision_time, matcher, query_linker, who
from pages.parts.highlight import escape_text

# One colour per highlight role (a constant: no user or corpus text goes into this block). And half of the 6rem
# Streamlit leaves above a page's title: with it, the first result card started below a 900-px window.
HIGHLIGHT_CSS = """<style>
mark.ent-query {background: #cfe3ff; border-bottom: 2px solid #1f6f8b;}
mark.ent-answer {background: #c9f2d0; border-bottom: 2px solid #2e8b57;}
mark.ent-other {background: #eeeeee;}
[data-testid="stMainBlockContainer"] {padding-top: 3rem;}
</style>"""


def card_style() -> None:
    """The highlight colours of the cards' marks and the page's top margin (drawn once per page run, first)."""
    st.markdown(HIGHLIGHT_CSS, unsafe_allow_html=True)


@dataclass(frozen=True)
class Card:
    """What every card of one search needs besides its row.

    Attributes:
        con: the store.
        view: the search the card's row comes from (its schema, partial relation and ranking).
        curator: the name decisions are recorded under ("": the grade buttons are disabled).
        in_team: whether the store is a team store (typed names are marked self-declared in the history).
        chosen: the suggestion the curator is following (recorded with a decision on its abstracts).
    """

    con: duckdb.DuckDBPyConnection
    view: curate.CurateView
    curator: str
    in_team: bool
    chosen: Suggestion | None = None
    rerank: bool = False  # a grade re-ranks the ungraded results (in-session feedback): the whole page reruns


def decide(card: Card, pmid: str, grade: Grade, answer: str, note: str, confirm_kind: bool = False) -> None:
    """A grade button's callback: one workflow call; what it refused is kept for the card to show."""
    started = timing.clock()
    try:
        curate.decide(card.con, lambda: matcher(card.con).lexicon, who(), card.view, pmid, grade, answer or "",
                      note or "", confirm_kind=confirm_kind, suggestion=card.chosen)
        # Said by the card's run, not here: an element drawn in a fragment's callback lands at the wrong place.
        st.session_state["decision_toast"] = (pmid, f"PMID {pmid}: {GRADE_LABELS[grade]}")
        # Its card (a fragment) reruns alone and reads its decisions again until the page's next full run.
        st.session_state.setdefault("decided_pmids", set()).add(pmid)
        # Logged with the server's time for it once the card has drawn it (CURATION_TIMING_LOG).
        st.session_state["decision_timing"] = (card.curator, pmid, started, timing.clock())
        st.session_state["rerank_now"] = card.rerank
    except AnswerKindError as exc:
        st.session_state["decision_kind"] = (pmid, str(exc), (card, pmid, grade, answer, note, True))
    except USER_ERRORS as exc:
        st.session_state["decision_error"] = (pmid, str(exc))


def undo(con: duckdb.DuckDBPyConnection) -> None:
    """The undo button's callback: withdraw the curator's last decision and say which it was."""
    try:
        undone = curate.undo_last(con, who())
    except USER_ERRORS as exc:
        st.toast(escape_text(str(exc)))
        return
    st.toast(f"Undone: PMID {undone.pmid}, {GRADE_LABELS[undone.grade]}" if undone else "Nothing to undo")


def _moved_html(row: ResultRow) -> str:
    """ " ▲ (was 7)" / " ▼ (was 2)" when the curator's grades moved the row, else "" (escaped for raw HTML)."""
    if row.before is None:
        return ""
    return escape_text(f" {'▲' if row.rank < row.before else '▼'} (was {int(row.before)})")


def _pop_for(key: str, pmid: str):
    """The session's pending message of ``key`` when it is about ``pmid`` (taken), else None."""
    pending = st.session_state.get(key)
    return st.session_state.pop(key) if pending and pending[0] == pmid else None


@st.fragment
def result_card(row: ResultRow, focused: bool, card: Card) -> None:
    """One abstract: title, what it mentions and its scores, best sentences, the answer and the grade buttons.

    A fragment: a grade, an answer or a note reruns this card alone (its decisions read again), not the
    search and the other cards. Filters and counts above catch up at the page's next run.
    """
    if st.session_state.pop("rerank_now", False):
        st.rerun()  # a grade with in-session feedback on: the whole page runs again, the ungraded re-ranked
    view, schema = card.view, card.view.schema
    decisions = row.decisions
    if row.pmid in st.session_state.get("decided_pmids", ()):  # graded since the search that made ``row``
        decisions = curate.card_decisions(card.con, schema, view.values, row.pmid)
    marker = "▶ " if focused else ""
    with st.container(border=True, key="focused-card" if focused else None):  # the key: what FOCUS_JS scrolls to
        # title_html and the sentences' and abstract's *_html are escaped by ui.highlight; only <mark> is markup.
        title_html = highlight.title_html(row.title)
        moved_html = _moved_html(row)
        st.markdown(f"{marker}**{row.rank}.**{moved_html} [PMID {row.pmid}]"
                    f"(https://pubmed.ncbi.nlm.nih.gov/{row.pmid}/) {title_html}", unsafe_allow_html=True)
        if row.meta:
            st.caption(escape_text(row.meta))
        if row.in_kb:
            filters.kb_badge(row)
        st.caption(chips.mentions_caption(row, view.result.concepts))
        decided = "; ".join(f"{escape_text(d.curator)}: {GRADE_LABELS[d.grade]}"
                            + (" (adjudicated: the final grade)" if is_adjudication(d) else "")
                            for d in decisions)
        st.caption(chips.scores_caption(row) + (f" · decided — {decided}" if decided else ""))
        for sentence in row.best:
            sentence_html = highlight.marked_html(sentence)
            st.markdown(f"> {sentence_html}", unsafe_allow_html=True)
        with st.expander("Abstract"):
            abstract_html = highlight.marked_html(row.abstract)
            st.markdown(abstract_html, unsafe_allow_html=True)
        if decisions:
            with st.expander(f"Decisions on this abstract ({len(decisions)})"):
                for line in decision_history(decisions, team=card.in_team):
                    st.text(line)  # curators' names and notes: plain text, never markdown
        answer_col, note_col = st.columns(2)
        typed = st.session_state.get(f"answer_{row.pmid}")
        # An answer typed earlier stays selectable (as in the relation's slots above).
        answer = answer_col.selectbox(
            schema.answer,
            [typed, *row.answers] if typed and typed not in row.answers else list(row.answers),
            index=None,
            accept_new_options=True,
            key=f"answer_{row.pmid}",
            placeholder=f"{schema.answer} in this abstract",
        )
        if answer and answer.strip():
            with answer_col:
                chips.answer_check(check_answer(card.con, matcher(card.con), query_linker(card.con), schema, row.pmid,
                                                answer))
        note = note_col.text_input("Note", key=f"note_{row.pmid}")
        for button, grade in zip(st.columns(3), GRADES, strict=True):
            button.button(GRADE_LABELS[grade], key=f"{grade}_{row.pmid}",
                          shortcut=GRADE_SHORTCUTS[grade] if focused else None, disabled=not card.curator,
                          on_click=decide, args=(card, row.pmid, grade, answer, note))
        # Callbacks run before the card is drawn again: what a grade of this card refused is shown here.
        if error := _pop_for("decision_error", row.pmid):
            st.error(escape_text(error[1]))
        if kind := _pop_for("decision_kind", row.pmid):
            st.warning(escape_text(kind[1]))
            st.button("Record anyway", key="record_anyway", disabled=not card.curator, on_click=decide, args=kind[2])
    if recorded := _pop_for("decision_toast", row.pmid):
        st.toast(recorded[1])
    log_decision_time(row.pmid)  # the caption of a decision just made is drawn: its server time, when logged
