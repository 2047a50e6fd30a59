"""Train & evaluate: update the ranker (the default, seconds) or retrain the encoder in the background; the model
versions, their dev metrics and loss; activate one; the entity recogniser and the entity linker (train one in the
background, activate a trained one).

The page makes one workflow call on opening (:func:`curation.workflows.train_view.open_train`) and draws the
:class:`~curation.workflows.train_view.TrainView` it gets back; its sections are :mod:`pages.parts.train_ranker`,
:mod:`pages.parts.train_jobs`, :mod:`pages.parts.train_linker` and :mod:`pages.parts.train_versions`.
"""

from __future__ import annotations

import streamlit as st

from curation.config import load_settings
from curation.workflows.train_view import open_train
from curation.workflows.versions import BUILD_HELP
from pages.parts import train_jobs, train_linker, train_ranker, train_relations, train_versions
from pages.parts.common import connection, who
from pages.parts.legacy_runner import leave_legacy_runner
from pages.parts.retrievers import planned_version, preload_retriever

leave_legacy_runner(__file__)  # first, before anything is drawn (see pages/parts/legacy_runner.py)

st.title("Train & evaluate")
con = connection()
if con is None:
    st.stop()
view = open_train(con, load_settings(), st.session_state.get("schema"),
                  before_activate=lambda path: preload_retriever(con, path), who=who())

train_ranker.section(next((s for s in view.schemas if s.name == view.schema), None), planned_version(con, view.schema))
train_jobs.retraining(view)
train_jobs.recogniser(view)
train_linker.linker(view.linkers, view.running)
train_relations.relation_scorer(view)

st.subheader("Model versions")
for problem in view.problems:
    st.warning(problem)
if not view.versions:
    st.info(BUILD_HELP)
    st.caption(f"Models folder: `{view.models_dir}`")
    st.stop()
bars = train_versions.table_and_activation(view)
train_versions.charts(view, bars)
train_versions.comparison(con, view)
