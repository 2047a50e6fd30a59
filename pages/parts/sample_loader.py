"""The "Load the sample" action (Knowledge base page and the Curate page's empty state), and the load's progress
in the sidebar.

The load runs in the background, in the server's process (:mod:`curation.workflows.background_load`): closing
the tab does not stop it, and a load stopped by a killed server is finished at the next start.
"""

from __future__ import annotations

import time

import duckdb
import streamlit as st

from curation.config import load_settings
from curation.errors import USER_ERRORS
from curation.workflows import background_load
from curation.workflows.quickstart import find_sample
from curation.workflows.session import store_line
from pages.parts.common import annotator, store_cursor, who
from pages.parts.highlight import escape_text

SUMMARY_SHOWN_S = 600  # how long the sidebar shows a finished load's summary
POLL_S = 2.0  # how often the sidebar's progress is redrawn while a load runs


def _annotator_for(con: duckdb.DuckDBPyConnection):
    # The app's cached annotator over the loaded dictionaries: the first search after the load finds its matcher
    # built (called in the load's thread, where the cache's spinner draws nothing).
    return annotator(con).annotator


def _load() -> None:
    """The button's callback: start the load in the background (or see the running one); draws nothing."""
    try:
        background_load.start_load(store_cursor, load_settings(), who=who(), annotator_for=_annotator_for)
    except USER_ERRORS as exc:
        st.session_state["sample_load_refused"] = str(exc)


def resume_unfinished_load(con: duckdb.DuckDBPyConnection | None) -> None:
    """On every run (acting once per process): a load that stopped before its end is finished in the background."""
    if con is None:
        return
    try:
        background_load.resume_unfinished_load(store_cursor, load_settings(), annotator_for=_annotator_for)
    except (*USER_ERRORS, duckdb.Error) as exc:  # the page itself reports a store that fails
        st.warning(escape_text(f"The unfinished load could not be resumed: {exc}"))


def loading() -> bool:
    """A load runs in this process now (what only a complete store needs can wait for it)."""
    state = background_load.load_work_state(load_settings())
    return state is not None and not state.finished


def sample_action(con: duckdb.DuckDBPyConnection, key: str) -> None:
    """The "Load the sample" button and what it will load (the load's progress and summary are the sidebar's)."""
    settings = load_settings()
    files = find_sample(settings.data_dir)
    where = (f"{len(files)} files from {settings.data_dir}" if files
             else "CIViC evidence and the PubMed abstracts it cites, fetched online (no data directory found)")
    st.button("Load the sample", key=key, type="primary", on_click=_load, disabled=loading(),
              help=f"Loads {where} in the background: the workbench stays usable, and closing the tab does not "
                   "stop it. Loading again adds nothing.")
    st.caption(f"The sample: {escape_text(where)}.")
    if refused := st.session_state.pop("sample_load_refused", None):
        st.error(escape_text(refused))


def _line(state: background_load.WorkState) -> str:
    elapsed = time.time() - state.started
    return f"{state.name} in the background ({elapsed:.0f} s): {state.step or 'starting'}"


@st.fragment(run_every=POLL_S)
def _progress(names: tuple[str, ...]) -> None:
    states = [s for s in background_load.work_states(load_settings()) if s.name in names]
    if not states or any(s.finished for s in states):
        st.rerun()  # the whole app: the page shows what the work brought, and its summary below
    for state in states:
        st.caption(escape_text(_line(state)))
        st.progress(state.done / state.total if state.total else 0.0,
                    text=f"{state.done:,} of {state.total:,}" if state.total else None)
    st.caption(store_line(store_cursor()))  # the store's counts move with the load (the sidebar's own line waits)


def load_progress() -> None:
    """In the sidebar: the running load's (and then training's) step and progress, redrawn every :data:`POLL_S` s;
    a finished one's summary for :data:`SUMMARY_SHOWN_S` s (why it stopped, if it did)."""
    states = background_load.work_states(load_settings())
    for state in states:
        if state.finished and time.time() - state.ended < SUMMARY_SHOWN_S:
            if state.error:
                st.error(escape_text(f"{state.name} stopped: {state.error}"))
            elif state.summary.startswith("Nothing new"):
                st.info(escape_text(state.summary))
            else:
                failed = " failed: " in state.summary or "not annotated" in state.summary
                (st.warning if failed else st.success)(escape_text(state.summary))
    running = tuple(s.name for s in states if not s.finished)
    if running:
        _progress(running)
