"""Curate: complete a partial relation by judging ranked abstracts.

The page reads its widgets, makes one workflow call per action and draws the typed view it gets back: opening
the page (:func:`curation.workflows.curate.open_form` → ``CurateForm``), a search
(:func:`curation.workflows.curate.open_curate` → ``CurateView``), a grade (:func:`curation.workflows.curate.decide`,
from :mod:`pages.parts.result_card`). With "Screen this topic" on, :mod:`pages.parts.screen_panel` draws the topic one
abstract at a time instead of the results (:func:`curation.workflows.screen.open_topic` → ``ScreenView``).
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from curation.errors import USER_ERRORS
from curation.workflows import curate, watch
from curation.workflows.curate import ENTITY_KINDS, ROLES
from pages.parts import address_state, curate_lists, keyboard, screen_panel, suggestion_panel
from pages.parts import concept_chips as chips
from pages.parts import result_filters as filters
from pages.parts.common import connection, matcher, query_linker, who
from pages.parts.highlight import escape_text
from pages.parts.legacy_runner import leave_legacy_runner
from pages.parts.result_card import Card, card_style, result_card, undo
from pages.parts.retrievers import loaded_retriever, planned_version, ranking_modes, retriever, serving_problem
from pages.parts.sample_loader import sample_action

leave_legacy_runner(__file__)  # first, before anything is drawn (see pages/parts/legacy_runner.py)

st.title("Curate")
card_style()
con = connection()
if con is None:
    st.stop()
form = curate.open_form(con, st.session_state.get("schema"))
if form.abstracts == 0:
    st.info("No abstracts yet: load the sample, or your own files on the Knowledge base page.")
    sample_action(con, key="sample_curate")
    st.page_link("pages/knowledge_base.py", label="Go to Knowledge base", icon=":material/database:")
    st.stop()

schema = form.schema
curator = (st.session_state.get("curator") or "").strip()
# After a restart the page is drawn while the ranking loads in the background; a search waits for it.
engine = loaded_retriever(con, schema.name)
serving_version = engine.version if engine is not None else planned_version(con, schema.name)
problem_slot = st.empty()
if engine is not None and (problem := serving_problem(con, schema.name, engine.version)):
    problem_slot.warning(escape_text(problem))
# Everything above the results is kept short, so that the first result starts on a 900-px screen: the two lists
# side by side, what is highlighted behind a button beside the ranking, saving the query beside the filters.
worklist_column, saved_column = st.columns(2)
with worklist_column:
    curate_lists.worklist_panel(con, schema)
with saved_column:
    curate_lists.saved_panel(con, schema, curator)

# --- the partial relation -------------------------------------------------------------------
columns = st.columns(len(schema.query_types) + 1)
values = {}
for column, entity_type in zip(columns, schema.query_types, strict=False):
    known = form.known[entity_type]
    if f"pick_{entity_type}" not in st.session_state and (typed := address_state.slot_value(entity_type)):
        st.session_state[f"pick_{entity_type}"] = typed  # back from another page, or from the address
    current = st.session_state.get(f"pick_{entity_type}")
    # Free text typed earlier, or a relation taken from the worklist, stays selectable.
    options = [current, *known] if current and current not in known else known
    values[entity_type] = column.selectbox(entity_type, options, index=None, key=f"pick_{entity_type}",
                                           accept_new_options=True, placeholder=f"type a {entity_type.lower()}") or ""
    st.session_state[address_state.slot_key(entity_type)] = values[entity_type]
address_state.keep(schema.query_types)  # the address says what is typed: a reload keeps it
mode = columns[-1].radio("Ranking", ranking_modes(engine, serving_version), horizontal=True,
                         help=f"model version: {serving_version}")
rm3_column, feedback_column = columns[-1].columns(2)  # one row: the first result stays on the first screen
rm3 = rm3_column.toggle("RM3 feedback", key="rm3", help="Expand the query with the words of the best abstracts "
                        "(pseudo-relevance feedback) before ranking.")
feedback = feedback_column.toggle("Re-rank by grades", value=curate.SESSION_FEEDBACK_DEFAULT, key="session_rerank",
                                  help="After you grade results of this query, the ungraded ones re-rank at once "
                                  "from your grades (▲ / ▼ mark what moved, with the rank it had). Off by default: on "
                                  "the benchmark it has not yet been shown to help.")


def _remember_kinds() -> None:
    st.session_state["highlight_kinds"] = list(st.session_state.get("kinds_input") or [])


def _remember_screening() -> None:  # a plain key: a widget's own key is dropped when another page is opened
    st.session_state["screening"] = st.session_state.get("screening_input", False)


tools = columns[-1].container(horizontal=True, vertical_alignment="center")  # highlights and screening: one row
# What the cards highlight, one click away beside the ranking (two rows of chips above the results otherwise).
with tools.popover("Highlights", icon=":material/ink_highlighter:"):
    shown = set(st.pills("Highlight", ROLES, default=list(ROLES), selection_mode="multi") or [])
    # Entity kinds shown, remembered in session state (a widget's own key is dropped when a run stops before it).
    kinds = st.pills(
        "Entity types", ENTITY_KINDS, default=st.session_state.get("highlight_kinds", list(ENTITY_KINDS)),
        selection_mode="multi", key="kinds_input", on_change=_remember_kinds, help=form.annotator_note,
    )
screening = tools.toggle(
    "Screen this topic", value=st.session_state.get("screening", False), key="screening_input",
    on_change=_remember_screening, help="One abstract at a time, the rest re-ranked by a model of your grades after "
    "each one, with relevant found against screened and an estimate of what remains.")
if not any(v.strip() for v in values.values()):
    st.info(f"Type a partial relation — {', '.join(schema.query_types)} — to find abstracts that complete its "
            f"{schema.answer}.")
    st.stop()

if engine is None:
    engine = retriever(con, schema.name)  # under "Loading the search index…" until it has loaded
    if problem := serving_problem(con, schema.name, engine.version):
        problem_slot.warning(escape_text(problem))
if screening:  # the topic's next card and its figures instead of the result list
    screen_panel.panel(con, engine, schema, values, curator)
    st.stop()
view = curate.open_curate(con, engine, matcher(con), query_linker(con), schema, values, mode=mode,
                          depth=st.session_state.get("depth", 20), shown=shown, kinds=set(kinds or []),
                          applied=chips.applied_links(values), rm3=rm3, feedback=feedback)
if view.error:
    st.error(escape_text(view.error))  # messages quote typed values: shown as plain text
    st.stop()
result = view.result
st.session_state["decided_pmids"] = set()  # this full run's rows hold every decision made so far
chips.slot_chips(dict(zip(schema.query_types, columns, strict=False)), result.concepts)
st.text(f"Query: {result.query}")  # typed text: shown as plain text, never as markdown
if view.index_note:  # a load is unfinished: what is not found may be in the abstracts not yet indexed
    st.warning(escape_text(view.index_note), icon=":material/hourglass_top:")
chips.notes(result, building=bool(view.index_note))
if view.graded:
    st.caption(f"Re-ranked after your {view.graded} grade{'s' if view.graded != 1 else ''}: {view.moved} "
               "result(s) moved (▲ / ▼ with the rank each had). Switch off “Re-rank by grades” for the "
               "served order.")
chosen = suggestion_panel.panel(view.suggestions, values)
if not curator:
    st.warning("Enter your name as curator in the sidebar to record decisions.")

save_column, filter_column = st.columns([1, 5])
if curator and any(values.values()) and save_column.button("Save this query", key="save_query"):
    try:
        watch.save_search(con, who(), schema.name, values, result.concepts)
        st.toast("Saved: it will say what is new since you last opened it")
    except USER_ERRORS as exc:
        st.error(escape_text(str(exc)))
with filter_column:
    row_filter = filters.filter_panel(result, curator)
if st.session_state.get("filter_only_for") != values:  # another relation was typed: the saved query's view ends
    st.session_state.pop("filter_only", None)
only = st.session_state.get("filter_only")
shown_rows = view.arrange(row_filter, only, chosen)
if only is not None:
    left, right = st.columns([5, 1], vertical_alignment="center")
    left.info(f"{len(only)} abstract{'s' if len(only) != 1 else ''} added since your last look at this saved query; "
              f"{shown_rows.filtered} of them among these results.")
    if right.button("Show all", key="clear_only"):
        st.session_state.pop("filter_only", None)
        st.rerun()
rows = shown_rows.rows
if chosen is not None:
    st.info(f"Showing the {len(rows)} abstracts that relate {escape_text(chosen.name)} to the query, its name "
            f"filled in as the {escape_text(schema.answer.lower())}. Click the suggestion again to show all.")
# Rows in their groups' order (all the concepts, then some); the focus (j/k, grade keys 1-3) walks that order.
if result.rows and not rows:
    st.info(f"None of the {len(result.rows)} results passes the filters "
            f"({escape_text(shown_rows.row_filter.describe())}).")
if st.session_state.get("scrolled_for") != values:  # a new search: the mark and the view go to its first result
    st.session_state.update(scrolled_for=dict(values), focus=0, scroll_to_focus=bool(rows))
focus = keyboard.focus_controls(len(rows), curator, partial(undo, con))
# In a team store typed names are marked self-declared.
card = Card(con, view, curator, form.in_team, chosen, rerank=feedback)
for group, group_rows in shown_rows.groups.items():
    if rows and group in chips.GROUP_TITLES and (group_rows or len(result.concepts) > 1):
        chips.group_header(result, group, len(group_rows))
    for row in group_rows:
        result_card(row, row is rows[focus], card)
if rows:
    keyboard.scroll_to_focus(focus)
if len(result.rows) >= st.session_state.get("depth", 20) and st.button("More results"):
    st.session_state["depth"] = st.session_state.get("depth", 20) + 20
    st.rerun()
