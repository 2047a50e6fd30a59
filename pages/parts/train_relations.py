"""The Train & evaluate page's relation scorer: its line, its training job, and "Score the rest" (the abstracts the
active scorer has not scored, scored in a background thread).
"""

from __future__ import annotations

import streamlit as st

from curation.config import load_settings
from curation.errors import USER_ERRORS
from curation.workflows import relation_scoring, retrain
from curation.workflows.train_view import TrainView
from pages.parts.common import connection, who
from pages.parts.highlight import escape_text
from pages.parts.train_jobs import job_panel


def _start_relations() -> None:
    try:
        job = relation_scoring.start_relation_training(connection(), load_settings(), who=who())
    except USER_ERRORS as exc:
        st.session_state["rel_error"] = str(exc)
        return
    st.toast(f"{retrain.job_title(job)} job {job.job_id} started")


def relation_scorer(view: TrainView) -> None:
    """The relation scorer: its line, its job, training a new one."""
    st.subheader("Relation scorer")
    st.caption(escape_text(view.scorer))
    job_panel("rel")
    st.button("Train the relation scorer", key="rel_train", on_click=_start_relations, disabled=view.running,
              help="on BioRED + BC5CDR Train and the curators' decisions (accepted answers are related pairs, "
                   "rejected abstracts unrelated ones); then it scores the abstracts and becomes active if its Dev "
                   "pair F1 is not worse than the active one's. The Curate page's suggestions rank with it.")
    if error := st.session_state.pop("rel_error", None):
        st.error(escape_text(error))
    _score_the_rest(view.running)


def _start_rescore() -> None:
    try:
        relation_scoring.start_rescore(connection(), who=who())
    except USER_ERRORS as exc:
        st.session_state["rescore_error"] = str(exc)


def _score_the_rest(job_running: bool) -> None:
    """"Score the rest": the abstracts the active scorer has not scored, scored in the background, with its outcome."""
    running, outcome = relation_scoring.rescore_state()
    if running:
        st.caption("Scoring the abstracts the active scorer has not scored…")
        _poll_rescore()
    elif stale := relation_scoring.stale_documents(connection()):
        st.button(f"Score the rest ({stale:,} abstracts)", key="rel_rescore", on_click=_start_rescore,
                  disabled=job_running, help="score the abstracts that still carry another scorer's relation "
                  "scores (or none) with the active scorer, in the background")
    if outcome:
        st.caption(escape_text(outcome))
    if error := st.session_state.pop("rescore_error", None):
        st.error(escape_text(error))


@st.fragment(run_every=2.0)
def _poll_rescore() -> None:
    if not relation_scoring.rescore_state()[0]:  # done: the whole page shows the outcome and the new counts
        st.rerun(scope="app")
