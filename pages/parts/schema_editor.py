"""The Knowledge base page's "Relation schemas" section: add, edit and remove a schema while the app runs.

The rules (what may change once a schema is in use) are :mod:`curation.workflows.schemas`'; a saved schema is in
every page's schema list at the next rerun.
"""

from __future__ import annotations

import duckdb
import streamlit as st

from curation.config import load_settings
from curation.errors import USER_ERRORS
from curation.schemas import BUILTIN
from curation.workflows.schemas import (
    KINDS,
    delete_schema,
    draft,
    save_schema,
    schema_file_note,
    schema_in_use,
)
from curation.workflows.session import schemas
from pages.parts.highlight import escape_text

NEW = "New schema"


def _kinds_text(schema) -> str:
    return ", ".join(f"{t}={schema.kind(t)}" for t in schema.entity_types) if schema is not None else ""


def _parse_kinds(text: str) -> dict[str, str]:
    out = {}
    for part in text.split(","):
        if "=" in part:
            name, kind = part.split("=", 1)
            out[name.strip()] = kind.strip()
    return out


def schema_section(con: duckdb.DuckDBPyConnection, acting) -> None:
    """The section: the store's schemas, a form to add or edit one with a preview of its queries, removal."""
    st.subheader("Relation schemas")
    if notice := st.session_state.pop("schema_notice", None):  # the last save or removal, kept across its rerun
        st.success(escape_text(notice))
    ok, note = schema_file_note(con, load_settings().schema_file)
    if note:
        (st.caption if ok else st.warning)(escape_text(note))
    known = schemas(con)
    st.dataframe([{"schema": s.name, "entity types": ", ".join(s.entity_types), "answer": s.answer,
                   "built in": s.name in BUILTIN, "description": s.description} for s in known],
                 hide_index=True, width="stretch")
    editable = [s.name for s in known if s.name not in BUILTIN]
    choice = st.selectbox("Add or edit", [NEW, *editable], key="schema_pick",
                          help="PO and PTM are built in; save a variant of them under another name")
    base = next((s for s in known if s.name == choice), None)
    use = schema_in_use(con, choice) if base is not None else {}
    if use:
        st.caption(escape_text(f"In use ({', '.join(f'{n} {w}' for w, n in use.items())}): its name, entity types "
                               "and answer stay; templates, kinds and the description may change."))
    with st.form(f"schema_form_{choice}"):
        name = st.text_input("Name", value=base.name if base else "", placeholder="e.g. Gene-Drug")
        types = st.text_input("Entity types, comma-separated (the answer included)",
                              value=", ".join(base.entity_types) if base else "", placeholder="Gene, Drug")
        answer = st.text_input("Answer: the slot a curator fills", value=base.answer if base else "",
                               placeholder="Drug")
        templates = st.text_area("Query templates, most specific first, one per line ({Entity type} is replaced "
                                 "by what is typed)", value="\n".join(base.templates) if base else "",
                                 placeholder="Drugs for gene {Gene}?")
        kinds = st.text_input(f"Kinds: which dictionary each entity type uses ({', '.join(KINDS)})",
                              value=_kinds_text(base), placeholder="Gene=gene, Drug=chemical")
        description = st.text_input("Description", value=base.description if base else "")
        left, right = st.columns(2)
        preview = left.form_submit_button("Preview")
        save = right.form_submit_button("Save schema", type="primary")
    if preview or save:
        checked = draft(name, types, answer, templates, _parse_kinds(kinds), description,
                        base.species if base else "human")
        if checked.error:
            st.error(escape_text(checked.error))
        else:
            st.markdown("Queries it makes (the typed values in angle brackets):")
            st.text("\n".join(f"{template}  →  {query}" for template, query in checked.examples))
            if save:
                try:
                    save_schema(con, acting, checked.schema, replacing="" if choice == NEW else choice)
                except USER_ERRORS as exc:
                    st.error(escape_text(str(exc)))
                else:  # rerun: the sidebar and this section list it at once
                    st.session_state["schema_notice"] = (f"Saved {checked.schema.name}: pick it in the sidebar's "
                                                         "schema list.")
                    st.rerun()
    if base is not None and st.button(f"Remove {choice}", key="schema_remove", disabled=bool(use),
                                      help="only a schema nothing in the store uses" if use else None):
        try:
            delete_schema(con, acting, choice)
        except USER_ERRORS as exc:
            st.error(escape_text(str(exc)))
        else:
            st.session_state.pop("schema_pick", None)
            st.session_state["schema_notice"] = f"Removed {choice}."
            st.rerun()
