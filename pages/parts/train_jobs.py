"""The Train & evaluate page's background jobs: retraining and the entity recogniser (the relation scorer's is
:mod:`pages.parts.train_relations`), each started by a button and followed by a polling panel. Each section takes
the page's :class:`~curation.workflows.train_view.TrainView` as an argument.
"""

from __future__ import annotations

import streamlit as st

from curation.config import load_settings
from curation.errors import USER_ERRORS
from curation.workflows import recogniser_training as recognisers
from curation.workflows import retrain
from curation.workflows.train_view import TrainView
from pages.parts.common import connection, who
from pages.parts.highlight import escape_text
from pages.parts.retrievers import current_job

POLL_SECONDS = 2.0
JOB_PREFIXES = {"recogniser": "rec", "relations": "rel", "linker": "lnk"}  # a job kind's panel; retraining: "rt"


def _start_retraining(schema: str) -> None:
    state = st.session_state
    base = {"minilm": "", "active": state.get("rt_active_model", ""), "custom": state.get("rt_custom", "").strip()}
    try:
        form = retrain.RetrainForm(
            schema=schema, base_model=base[state["rt_base"]], use_kb="kb" in state["rt_sources"],
            use_decisions="decisions" in state["rt_sources"], epochs=int(state["rt_epochs"]),
            max_steps=int(state["rt_max_steps"]), batch_size=int(state["rt_batch"]),
            max_seq_length=int(state["rt_seq"]), conflicts=state["rt_conflicts"], index_kind=state["rt_index_kind"],
            index_backend=state["rt_index_backend"],
        )
        job = retrain.start(connection(), form, load_settings(), who=who())
    except USER_ERRORS as exc:
        state["rt_error"] = str(exc)
        return
    st.toast(f"Retraining job {job.job_id} started")


def _cancel(job_id: int) -> None:
    try:
        job = retrain.cancel(connection(), job_id, who=who())
    except USER_ERRORS as exc:
        st.toast(escape_text(str(exc)))
        return
    st.toast(f"Job {job.job_id}: {job.message}")


@st.fragment(run_every=POLL_SECONDS)
def job_panel(prefix: str = "rt") -> None:
    """The running job's progress (``prefix`` "rt": retraining, "rec": recogniser, "rel": relation-scorer, "lnk":
    linker jobs);
    polls while it runs and refreshes the page when it ends."""
    job = current_job(connection())
    if job is None or JOB_PREFIXES.get(job.kind, "rt") != prefix:
        if st.session_state.pop(f"{prefix}_watching", None) is not None:
            st.rerun(scope="app")  # a job just ended: show its version (or recogniser) below
        return
    st.session_state[f"{prefix}_watching"] = job.job_id
    progress = retrain.progress(job)
    st.progress(progress.fraction if progress and progress.fraction is not None else 0.0,
                text=retrain.describe_progress(job, progress))
    if job.message:
        st.caption(job.message)
    st.button(f"Cancel {retrain.job_title(job).lower()}", key=f"{prefix}_cancel", on_click=_cancel, args=(job.job_id,))


def retraining(view: TrainView) -> None:
    """The retrain form (while no job runs), then the last job's outcome and what it trained on."""
    st.subheader("Retrain the encoder")
    job_panel()
    eta = view.encoder_eta or "minutes to an hour on a CPU (no retraining has finished on this machine yet)"
    if not view.running:
        st.caption(f"Fine-tunes the dense encoder (EDEL) and re-encodes the corpus: {eta}. The ranker above then "
                   f"learns from its dense similarity. {view.decision_line}. Complete evidence trains as a graded "
                   "positive, partial as a noisy positive, not relevant as a hard negative; the new version is "
                   "activated only when the paired-bootstrap interval of its dev nDCG@10 gain over the active one is "
                   "above 0.")
        active = view.active
        st.session_state["rt_active_model"] = view.base_model
        with st.expander("Retrain the encoder", expanded=False), st.form("retrain_form", border=True):
            left, middle, right = st.columns(3)
            left.multiselect("Train on", ["kb", "decisions"], default=["kb", "decisions"], key="rt_sources",
                             format_func={"kb": "Knowledge base", "decisions": "Curators' decisions"}.get)
            left.radio(
                "Start from", ["minilm", "active", "custom"] if active else ["minilm", "custom"], key="rt_base",
                format_func={"minilm": "all-MiniLM-L6-v2 (offline default)",
                             "active": f"the active version's weights ({active.version})" if active else "",
                             "custom": "another model (hub name or folder)"}.get,
            )
            left.text_input("Other model", key="rt_custom", placeholder="e.g. ncbi/MedCPT-Query-Encoder")
            middle.number_input("Epochs (0 = for the device)", 0, 50, 0, key="rt_epochs",
                                help="0: 10 on a GPU (the best epoch on dev kept, early stopping), 1 on a CPU")
            middle.number_input("Max steps (0 = all)", 0, 100_000, 0, key="rt_max_steps")
            middle.number_input("Batch size (0 = for the device)", 0, 256, 0, key="rt_batch",
                                help="0: 32 on a GPU, 16 on a CPU")
            right.number_input("Max sequence length (0 = for the device)", 0, 512, 0, step=32, key="rt_seq",
                               help="0: 256 tokens on a GPU, 128 on a CPU")
            right.radio("Curators disagree, no adjudication", ["exclude", "latest"], key="rt_conflicts",
                        format_func={"exclude": "leave the item out", "latest": "take the latest decision"}.get)
            middle.selectbox(
                "Dense index", view.index_kinds, key="rt_index_kind", format_func=retrain.INDEX_KIND_LABELS.get,
                help="auto: exact (flat) up to 200k abstracts, HNSW while it fits in half the memory, else IVF-PQ "
                     "with a re-ranking refine (index.dense.choose_config); the choice and its reason go in the "
                     "version's manifest",
            )
            middle.selectbox("Vectors kept in", view.index_backends, key="rt_index_backend",
                             format_func=retrain.INDEX_BACKEND_LABELS.get)
            st.form_submit_button("Retrain the encoder", on_click=_start_retraining, args=(view.schema,))
    if error := st.session_state.pop("rt_error", None):
        st.error(error)
    if not view.history:
        return
    last = view.history[0]
    if last.finished:
        show = st.success if last.state == "succeeded" else st.warning if last.state == "cancelled" else st.error
        show(f"Job {last.job_id} {last.state}: {last.message}")
    with st.expander(f"Jobs ({len(view.history)})", expanded=False):
        st.dataframe([{"job": j.job_id, "state": j.state, "started": (j.started_at or j.created_at)[:19],
                       "finished": (j.finished_at or "")[:19], "message": j.message} for j in view.history],
                     hide_index=True)
        if view.training is not None:
            st.caption(f"Training pairs of job {view.training.job_id} by source and margin class:")
            st.dataframe(view.training.rows, hide_index=True)
            st.caption(view.training.summary)


def _start_recogniser(action: str) -> None:
    state = st.session_state
    try:
        if action == "train":
            job = recognisers.start_recogniser_training(connection(), load_settings(), epochs=int(state["rec_epochs"]),
                                                        who=who())
        else:
            job = recognisers.start_recogniser_activation(connection(), load_settings(), state["rec_choice"], who=who())
    except USER_ERRORS as exc:
        state["rec_error"] = str(exc)
        return
    st.toast(f"{retrain.job_title(job)} job {job.job_id} started")


def recogniser(view: TrainView) -> None:
    """The active entity recogniser, training one, activating a trained one."""
    st.subheader("Entity recogniser")
    overview = view.recognisers
    for problem in overview.problems:
        st.warning(problem)
    if overview.active is not None:
        st.caption(f"Active recogniser **{overview.active.name}**: {overview.active.summary()}. {overview.note}.")
    else:
        st.info(overview.note)
    job_panel("rec")
    left, right = st.columns([1, 3], vertical_alignment="bottom")
    left.number_input("Epochs (at most)", 1, 100, 25, key="rec_epochs",
                      help="the best dev checkpoint is kept; about 1–3 minutes an epoch on a CPU")
    right.button("Train a recogniser", key="rec_train", on_click=_start_recogniser, args=("train",),
                 disabled=view.running,
                 help="on BioRED + BC5CDR Train, chosen on BioRED Dev; then it annotates the abstracts and becomes "
                      "active if its dev F1 is not worse than the active one's")
    if overview.trained:
        left, right = st.columns([3, 1], vertical_alignment="bottom")
        labels = {t.path: t.label() for t in overview.trained}
        left.selectbox("Trained recognisers", list(labels), key="rec_choice", format_func=labels.get)
        right.button("Activate", key="rec_activate", on_click=_start_recogniser, args=("activate",),
                     disabled=view.running, help="annotates the abstracts with it in the background, then makes it "
                                                 "active")
    if error := st.session_state.pop("rec_error", None):
        st.error(error)
