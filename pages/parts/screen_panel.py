"""The Curate page's "Screen this topic": the topic's next card, graded with the Curate keys, and beside it relevant
found against screened, the estimate of what remains and the cards the last grade moved up.

One workflow call draws it (:func:`curation.workflows.screen.open_topic` → ``ScreenView``) and one records a grade
(:func:`curation.workflows.screen.grade`, which returns the next view: the rerun draws that one). Abstracts are
escaped and marked by :mod:`pages.parts.highlight`.
"""

from __future__ import annotations

from collections.abc import Mapping

import duckdb
import plotly.graph_objects as go
import streamlit as st

from curation.errors import USER_ERRORS
from curation.grades import GRADE_LABELS, GRADES, Grade
from curation.schemas import RelationSchema
from curation.workflows import screen
from pages.parts import concept_chips as chips
from pages.parts import highlight
from pages.parts import result_filters as filters
from pages.parts.common import GRADE_SHORTCUTS, matcher, query_linker, who
from pages.parts.highlight import escape_text
from pages.parts.result_card import undo

STRATEGY_LABELS = {"highest": "most likely relevant first", "uncertain": "least sure first"}


def _grade(con: duckdb.DuckDBPyConnection, view: screen.ScreenView, pmid: str, grade: Grade, note: str) -> None:
    """A grade button's callback: record it; the next view is kept for the rerun to draw."""
    try:
        _, following = screen.grade(con, matcher(con), who(), view, pmid, grade, note or "")
    except USER_ERRORS as exc:
        st.session_state["screen_error"] = str(exc)
        return
    st.session_state["screen_view"] = following
    st.toast(f"PMID {pmid}: {GRADE_LABELS[grade]}")


def _remember_strategy() -> None:
    st.session_state["screen_strategy"] = st.session_state.get("screen_strategy_input")


def _card(con: duckdb.DuckDBPyConnection, view: screen.ScreenView, curator: str) -> None:
    row = view.card
    with st.container(border=True, key="screen-card"):
        # title_html and the abstract's html are escaped by pages.parts.highlight; only <mark> is markup.
        title_html = highlight.title_html(row.title)
        position_html = str(int(view.read) + 1)  # an int
        st.markdown(f"**{position_html}.** [PMID {row.pmid}](https://pubmed.ncbi.nlm.nih.gov/{row.pmid}/) "
                    f"{title_html}", unsafe_allow_html=True)
        if row.meta:
            st.caption(escape_text(row.meta))
        if row.in_kb:
            filters.kb_badge(row)
        st.caption(chips.mentions_caption(row, view.concepts) + f" · served rank {row.rank}")
        abstract_html = highlight.marked_html(row.abstract)
        st.markdown(abstract_html, unsafe_allow_html=True)
        note = st.text_input("Note", key=f"screen_note_{row.pmid}")
        for button, grade in zip(st.columns(3), GRADES, strict=True):
            button.button(GRADE_LABELS[grade], key=f"screen_{grade}_{row.pmid}", shortcut=GRADE_SHORTCUTS[grade],
                          disabled=not curator, on_click=_grade, args=(con, view, row.pmid, grade, note))
        if error := st.session_state.pop("screen_error", None):
            st.error(escape_text(error))
    st.button("Undo my last decision", shortcut="u", disabled=not curator, on_click=undo, args=(con,),
              key="screen_undo")


def _chart(view: screen.ScreenView) -> go.Figure:
    shown = min(view.candidates, max(2 * view.read, 50))  # the reads so far and as many again
    reads = list(range(1, shown + 1))
    figure = go.Figure()
    figure.add_scatter(x=list(range(1, view.read + 1)), y=list(view.curve), name="relevant found", mode="lines")
    figure.add_scatter(x=reads, y=list(view.static_curve[:shown]), name="static order (expected)",
                       line={"dash": "dash"})
    figure.add_scatter(x=reads, y=list(view.random_curve[:shown]), name="random order (expected)",
                       line={"dash": "dot"})
    figure.update_layout(height=300, margin={"l": 10, "r": 10, "t": 10, "b": 10}, xaxis_title="screened",
                         yaxis_title="relevant", legend={"orientation": "h", "y": -0.3})
    return figure


def _figures(view: screen.ScreenView) -> None:
    st.caption(view.progress_text)
    st.plotly_chart(_chart(view), key="screen_curve")
    st.caption(view.curve_text)
    for line in (view.estimate_text, view.stopping_text, view.since_text):
        if line:
            st.caption(line)
    if view.fitted:
        st.caption(f"Re-ranked by your grades in {view.rerank_ms:.0f} ms.")
    else:
        st.caption("The served order, until the topic has a relevant and a not relevant grade.")
    if view.moved:
        st.markdown("**Moved up after your last grade**")
        for moved in view.moved:  # titles: plain text, never markdown
            st.text(f"PMID {moved.pmid}: {moved.before} → {moved.after} · {moved.title}")


def panel(con: duckdb.DuckDBPyConnection, engine, schema: RelationSchema, values: Mapping[str, str],
          curator: str) -> None:
    """The topic ``values`` screened one card at a time (``engine``: the served retriever, searched the first time)."""
    view = st.session_state.pop("screen_view", None)
    if view is None or not view.is_topic(schema, values):
        with st.spinner("Gathering the topic's abstracts…"):
            view = screen.open_topic(con, engine, matcher(con), query_linker(con), schema, values, curator,
                                     st.session_state.get("screen_strategy"))
    if view.message:
        st.info(escape_text(view.message))
        return
    st.text(f"Query: {view.query}")  # typed text: plain text, never markdown
    st.radio("Next card", screen.STRATEGIES, index=screen.STRATEGIES.index(view.strategy), horizontal=True,
             format_func=STRATEGY_LABELS.get, key="screen_strategy_input", on_change=_remember_strategy)
    if not curator:
        st.warning("Enter your name as curator in the sidebar to record decisions.")
    card_column, figures_column = st.columns([3, 2])
    with card_column:
        if view.card is None:
            st.success(f"Every one of the topic's {view.candidates} abstracts is screened.")
        else:
            _card(con, view, curator)
    with figures_column:
        _figures(view)
