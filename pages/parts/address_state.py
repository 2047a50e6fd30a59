"""What a curator typed, kept in the page's address: her name, the schema and the relation's slots survive a reload,
a bookmark and a page switch.

The address carries ``?curator=…&schema=…&<slot>=…`` (``/curate?curator=ana&schema=PO&Gene=BRAF&Variant=V600E``).
A new session (a reload, an address opened in a new tab) takes them back once, before any widget is drawn; every
run then writes the session's values back, so the address always says what is typed. Within a session the plain
keys ``curator``, ``schema`` and ``slot_<entity type>`` hold them: Streamlit drops a widget's own key when a page
that does not draw it runs (a page switch), which emptied the Curate page's slots.

Team mode leaves the name out: the signed-in person is the curator.
"""

from __future__ import annotations

from collections.abc import Iterable

import streamlit as st

from curation.workflows.session import curator_name_problem

RESERVED = ("curator", "schema")
RESTORED = "_address_restored"


def restore(team: bool) -> None:
    """Once per session: the address's name (personal mode), schema and slots become the session's values."""
    if st.session_state.get(RESTORED):
        return
    st.session_state[RESTORED] = True
    params = st.query_params.to_dict()
    name = " ".join(str(params.get("curator", "")).split())
    if not team and name and not st.session_state.get("curator") and curator_name_problem(name) is None:
        st.session_state["curator"] = st.session_state["curator_input"] = name
    if (schema := str(params.get("schema", "")).strip()) and not st.session_state.get("schema"):
        st.session_state["schema"] = schema  # the sidebar checks it is one of the store's before drawing it
    for key, value in params.items():
        if key not in RESERVED and str(value).strip():
            st.session_state.setdefault(slot_key(key), str(value).strip())


def slot_key(entity_type: str) -> str:
    """The plain session key of a slot's typed value."""
    return f"slot_{entity_type}"


def slot_value(entity_type: str) -> str:
    """A slot's value now: its widget's while it is drawn, else the last one typed."""
    widget = f"pick_{entity_type}"
    value = st.session_state.get(widget) if widget in st.session_state else st.session_state.get(slot_key(entity_type))
    return str(value or "").strip()


def keep(query_types: Iterable[str]) -> None:
    """Write the session's name, schema and the slots of ``query_types`` into the address (others dropped)."""
    wanted: dict[str, str] = {}
    if not st.session_state.get("identity") and (name := st.session_state.get("curator")):
        wanted["curator"] = str(name)
    if schema := st.session_state.get("schema"):
        wanted["schema"] = str(schema)
    for entity_type in query_types:
        if entity_type not in RESERVED and (value := slot_value(entity_type)):
            wanted[entity_type] = value
    if st.query_params.to_dict() != wanted:
        st.query_params.from_dict(wanted)
