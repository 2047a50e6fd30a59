"""What app.py draws around every page: the sidebar (curator, schema, store and model figures) and the store's
notices.

Pages read the plain session keys ``curator`` and ``schema``, which the widgets' callbacks keep up to date
(widget keys themselves are cleaned up by Streamlit when a widget is not drawn).
"""

from __future__ import annotations

from functools import partial

import duckdb
import streamlit as st

from curation.workflows import retrain
from curation.workflows.session import (
    acknowledge,
    curator_name_problem,
    current_schema,
    may_dismiss_notices,
    sidebar_view,
    store_notices,
)
from curation.workflows.team import SignedIn
from pages.parts import address_state, team_gate
from pages.parts.common import store_cursor, who
from pages.parts.highlight import escape_text
from pages.parts.retrievers import current_job, preload_retriever
from pages.parts.sample_loader import load_progress, loading


def store_notice_banner(con: duckdb.DuckDBPyConnection | None) -> None:
    """What opening the store repaired from the decision journal, or found wrong with it: shown above
    every page (app.py draws it once per run) until someone who may dismiss it (on a team store, a maintainer)
    clicks "Got it"."""
    if con is None:
        return
    notices = store_notices(con)
    may_dismiss = bool(notices) and may_dismiss_notices(con, who())
    for notice in notices:
        st.warning(f"{escape_text(notice.message)} ({notice.created_at[:19]} UTC)", icon=":material/healing:")
        if may_dismiss:
            st.button("Got it", key=f"notice_{notice.notice_id}", on_click=_acknowledge, args=(notice.notice_id,))
        else:
            st.caption("A maintainer dismisses this notice once it has been read.")


def _acknowledge(notice_id: int) -> None:
    acknowledge(store_cursor(), notice_id, who() or "a curator")


def _remember(widget_key: str, state_key: str) -> None:
    value = st.session_state.get(widget_key)
    st.session_state[state_key] = value.strip() if isinstance(value, str) else value


def _remember_curator() -> None:
    """The typed name becomes the session's curator when it is one a decision can carry; else it is refused
    with the reason (the name in use stays as it was)."""
    name = " ".join(str(st.session_state.get("curator_input") or "").split())
    problem = curator_name_problem(name)
    st.session_state["curator_problem"] = problem
    if problem is None:
        st.session_state["curator"] = name


@st.fragment(run_every=2.0)
def _job_line() -> None:
    """The background job's line, redrawn every 2 s while it runs; when it ends the whole page is drawn again, so
    no tab keeps saying "queued" or "running" about a job that has finished."""
    job = current_job(store_cursor())
    if job is None:
        st.rerun(scope="app")
    st.caption(retrain.status_line(job))


def sidebar(con: duckdb.DuckDBPyConnection | None, signed: SignedIn | None = None) -> None:
    """Curator (typed, or the signed-in person in team mode), schema and store counts, shown on every page."""
    address_state.restore(team=signed is not None)  # a reload or a bookmark: what the address holds, once
    with st.sidebar:
        if signed is not None:
            team_gate.sidebar_identity(signed)
        else:
            st.text_input(
                "Curator",
                key="curator_input",
                placeholder="your name (needed to record decisions)",
                on_change=_remember_curator,  # a name too long is refused with the reason (not cut silently)
            )
        if problem := st.session_state.get("curator_problem"):
            st.error(escape_text(problem))
        if con is None:
            return
        view = sidebar_view(con, st.session_state.get("schema"), before_activate=partial(preload_retriever, con),
                            who=who())
        chosen = st.session_state.get("schema")
        if chosen in view.schemas and st.session_state.get("schema_input") != chosen:
            st.session_state["schema_input"] = chosen  # from the address, or kept while another page ran
        elif chosen and chosen not in view.schemas:
            st.session_state.pop("schema", None)  # an address naming a schema this store has not (or no longer)
        st.selectbox(
            "Relation schema", view.schemas, key="schema_input", on_change=_remember, args=("schema_input", "schema")
        )
        st.session_state["schema"] = st.session_state.get("schema_input")
        address_state.keep(current_schema(con, st.session_state["schema"]).query_types
                           if st.session_state["schema"] else ())
        if not loading():  # while a load runs, its progress shows the counts as they move
            st.caption(view.store_line)
        st.caption(view.model_line)
        if view.job_line:
            _job_line()  # followed until it ends, in every tab
        load_progress()  # the sample's load, running in the background, or its summary once done
