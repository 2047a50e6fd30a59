"""The Curate page's two lists above the search: the worklist (relations without an answer) and the curator's
saved queries.

Opening an item fills the relation's slots (the ``pick_<slot>`` widgets) and reruns the page; everything
the panels need comes in as arguments.
"""

from __future__ import annotations

import duckdb
import streamlit as st

from curation.schemas import RelationSchema
from curation.workflows import watch
from curation.workflows.worklist import fill_worklist, open_worklist, take_worklist_item
from pages.parts.common import who


def _fill_slots(schema: RelationSchema, values: dict[str, str]) -> None:
    for entity_type in schema.query_types:
        st.session_state[f"pick_{entity_type}"] = values.get(entity_type) or None


def worklist_panel(con: duckdb.DuckDBPyConnection, schema: RelationSchema) -> None:
    """The worklist: add the KB's relations without an answer, see them, take the next open one (n)."""
    with st.expander("Worklist", expanded=False):
        if st.button("Add the KB's relations without an answer"):
            st.toast(f"{fill_worklist(con, schema, who=who())} relations added")
        items = open_worklist(con, schema)
        st.caption(items.caption)
        if items.rows:
            st.dataframe(items.rows, hide_index=True, height=200)
        if items.open_items and st.button("Next open relation", shortcut="n"):
            item = items.open_items[0]
            _fill_slots(schema, item["values"])
            take_worklist_item(con, item["item_id"], who())
            st.rerun()


def saved_panel(con: duckdb.DuckDBPyConnection, schema: RelationSchema, curator: str) -> None:
    """The curator's saved queries, each with how many abstracts are new since they last opened it."""
    saved = watch.watched(con, curator, schema.name)
    news = sum(1 for item in saved if item.new)
    with st.expander(f"Saved queries ({len(saved)}{f', {news} with new abstracts' if news else ''})",
                     expanded=False):
        if not curator:
            st.caption("Enter your name in the sidebar to save queries and see what is new for them.")
        elif not saved:
            st.caption("Search a relation, then **Save this query**: it will say how many abstracts were added since "
                       "you last opened it.")
        for item in saved:
            text, open_col, remove_col = st.columns([6, 1, 1], vertical_alignment="center")
            text.text(item.label())  # typed values: plain text
            if open_col.button("Open", key=f"open_saved_{item.saved.query_id}"):
                opened, new = watch.open_watched(con, item, who())
                _fill_slots(schema, opened)
                st.session_state["filter_only"] = list(new)
                st.session_state["filter_only_for"] = {t: opened.get(t) or "" for t in schema.query_types}
                st.rerun()
            if remove_col.button("Remove", key=f"remove_saved_{item.saved.query_id}"):
                watch.remove_watched(con, item.saved.query_id, who())
                st.rerun()
