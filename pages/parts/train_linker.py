"""The Train & evaluate page's entity linker section: the active linker and its dev figures, training one in the
background (followed by :func:`pages.parts.train_jobs.job_panel`), activating a trained one. It takes the
:class:`~curation.workflows.linker_training.LinkerOverview` the page got and whether a job runs.
"""

from __future__ import annotations

import streamlit as st

from curation.config import load_settings
from curation.errors import USER_ERRORS
from curation.workflows import linker_training as linkers
from curation.workflows import retrain
from curation.workflows.linker_training import LinkerOverview
from pages.parts.common import connection, matcher, who
from pages.parts.highlight import escape_text
from pages.parts.train_jobs import job_panel


def _start_training() -> None:
    state = st.session_state
    try:
        job = linkers.start_linker_training(connection(), load_settings(), steps=int(state["lnk_steps"]), who=who())
    except USER_ERRORS as exc:
        state["lnk_error"] = str(exc)
        return
    st.toast(f"{retrain.job_title(job)} job {job.job_id} started")


def _activate() -> None:
    state = st.session_state
    con = connection()
    try:
        done = linkers.activate_linker(con, load_settings(), state["lnk_choice"], matcher(con).lexicon, who=who())
    except USER_ERRORS as exc:
        state["lnk_error"] = str(exc)
        return
    state["lnk_done"] = done.message


def linker(overview: LinkerOverview, running: bool) -> None:
    """The active entity linker, training one, activating a trained one."""
    st.subheader("Entity linker")
    for problem in overview.problems:
        st.warning(escape_text(problem))
    if overview.active is not None:
        st.caption(f"Active linker **{escape_text(overview.active.name, line_start=False)}**: "
                   f"{escape_text(overview.active.summary(), line_start=False)}; {overview.note}.")
    else:
        st.info(overview.note)
    job_panel("lnk")
    left, right = st.columns([1, 3], vertical_alignment="bottom")
    left.number_input("Steps", 1, 100_000, overview.default_steps, key="lnk_steps",
                      help="fine-tuning steps of the name encoder (batches of synonyms); the rule that applies a "
                           "link is then chosen on dev")
    right.button("Train a linker", key="lnk_train", on_click=_start_training, disabled=running,
                 help="fine-tunes a name encoder on BioRED + BC5CDR Train and DrugBank's names, calibrated on "
                      "dev; it becomes active if its dev accuracy@1 is not worse than the active one's, and the "
                      "active recogniser then annotates the abstracts again with it in the background")
    if overview.trained:
        left, right = st.columns([3, 1], vertical_alignment="bottom")
        labels = {t.path: t.label() for t in overview.trained}
        left.selectbox("Trained linkers", list(labels), key="lnk_choice", format_func=labels.get)
        right.button("Activate", key="lnk_activate", on_click=_activate, disabled=running,
                     help="loads it and makes it active; the abstracts are then annotated again in the background")
    if done := st.session_state.pop("lnk_done", None):
        st.success(escape_text(done))
    if error := st.session_state.pop("lnk_error", None):
        st.error(escape_text(error))
