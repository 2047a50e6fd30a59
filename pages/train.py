"""Train & evaluate: retrain in the background; the model versions, their dev metrics and loss; activate one;
the entity recogniser (train one in the background, activate a trained one)."""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from curation.config import load_settings
from curation.errors import USER_ERRORS
from curation.grades import Grade
from curation.workflows import recogniser_training as recognisers
from curation.workflows import relation_scoring, retrain
from curation.workflows import versions as catalogue
from curation.workflows.results import curate_search
from curation.workflows.session import schemas as store_schemas
from curation.workflows.versions import METRICS
from pages.common import connection, current_job, matcher, query_linker, retriever_of_version, who
from pages.highlight import escape_text
from pages.legacy_mode import leave_legacy_pages_mode

leave_legacy_pages_mode()  # first, before anything is drawn (see pages/common.py)

POLL_SECONDS = 2.0

st.title("Train & evaluate")
con = connection()
if con is None:
    st.stop()
settings = load_settings()
models_dir = settings.models_dir
schemas = [s.name for s in store_schemas(con)]
schema_name = st.session_state.get("schema") or (schemas[0] if schemas else "PO")


# --- retraining -----------------------------------------------------------------------------
def start_job() -> None:
    state = st.session_state
    base = {"minilm": "", "active": state.get("rt_active_model", ""), "custom": state.get("rt_custom", "").strip()}
    try:
        form = retrain.RetrainForm(
            schema=schema_name,
            base_model=base[state["rt_base"]],
            use_kb="kb" in state["rt_sources"],
            use_decisions="decisions" in state["rt_sources"],
            epochs=int(state["rt_epochs"]),
            max_steps=int(state["rt_max_steps"]),
            batch_size=int(state["rt_batch"]),
            max_seq_length=int(state["rt_seq"]),
            tolerance=float(state["rt_tolerance"]),
            conflicts=state["rt_conflicts"],
            index_kind=state["rt_index_kind"],
            index_backend=state["rt_index_backend"],
        )
        job = retrain.start(connection(), form, load_settings(), who=who())
    except USER_ERRORS as exc:
        state["rt_error"] = str(exc)
        return
    st.toast(f"Retraining job {job.job_id} started")


def cancel(job_id: int) -> None:
    try:
        job = retrain.cancel(connection(), job_id, who=who())
    except USER_ERRORS as exc:
        st.toast(escape_text(str(exc)))
        return
    st.toast(f"Job {job.job_id}: {job.message}")


JOB_PREFIXES = {"recogniser": "rec", "relations": "rel"}  # a job kind's panel; retraining: "rt"


@st.fragment(run_every=POLL_SECONDS)
def job_panel(prefix: str = "rt") -> None:
    """The running job's progress (``prefix`` "rt": retraining, "rec": recogniser, "rel": relation-scorer jobs);
    polls while it runs and refreshes the page when it ends."""
    cursor = connection()
    job = current_job(cursor)
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
    st.button(f"Cancel {retrain.job_title(job).lower()}", key=f"{prefix}_cancel", on_click=cancel, args=(job.job_id,))


st.subheader("Retrain from the KB and curators' decisions")
job_panel()
if not retrain.is_running(con):
    grades = retrain.decision_counts(con, schema_name)
    st.caption(
        f"{schema_name}: {grades['total']} active decisions ({grades[Grade.COMPLETE]} complete, "
        f"{grades[Grade.PARTIAL]} partial, {grades[Grade.NOT_RELEVANT]} not relevant). Complete evidence trains "
        f"as a graded positive, partial as a noisy positive, not relevant as a hard negative; the new version "
        f"is activated only if its dev score is not worse than the active one's by more than the tolerance."
    )
    active = catalogue.active_version(con, schema_name)
    st.session_state["rt_active_model"] = str(active.path / "model") if active else ""
    with st.form("retrain_form", border=True):
        left, middle, right = st.columns(3)
        left.multiselect(
            "Train on", ["kb", "decisions"], default=["kb", "decisions"], key="rt_sources",
            format_func={"kb": "Knowledge base", "decisions": "Curators' decisions"}.get,
        )
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
        right.number_input("Tolerance (dev nDCG@10)", 0.0, 1.0, 0.01, step=0.005, format="%.3f", key="rt_tolerance")
        right.radio(
            "Curators disagree, no adjudication", ["exclude", "latest"], key="rt_conflicts",
            format_func={"exclude": "leave the item out", "latest": "take the latest decision"}.get,
        )
        kinds, backends = retrain.index_choices(settings)
        middle.selectbox(
            "Dense index", kinds, key="rt_index_kind", format_func=retrain.INDEX_KIND_LABELS.get,
            help="auto: exact (flat) up to 200k abstracts, HNSW while it fits in half the memory, else IVF-PQ "
                 "with a re-ranking refine (index.dense.choose_config); the choice and its reason go in the "
                 "version's manifest",
        )
        middle.selectbox("Vectors kept in", backends, key="rt_index_backend",
                         format_func=retrain.INDEX_BACKEND_LABELS.get)
        st.form_submit_button("Retrain", type="primary", on_click=start_job)
if error := st.session_state.pop("rt_error", None):
    st.error(error)
history = retrain.history(con, limit=20)
if history:
    last = history[0]
    if last.finished:
        show = st.success if last.state == "succeeded" else st.warning if last.state == "cancelled" else st.error
        show(f"Job {last.job_id} {last.state}: {last.message}")
    with st.expander(f"Jobs ({len(history)})", expanded=False):
        st.dataframe(
            [{"job": j.job_id, "state": j.state, "started": (j.started_at or j.created_at)[:19],
              "finished": (j.finished_at or "")[:19], "message": j.message} for j in history],
            hide_index=True,
        )
        trained = retrain.trained_jobs(history)
        if trained:
            rows, summary = retrain.training_summary(trained[0])
            st.caption(f"Training pairs of job {trained[0].job_id} by source and margin class:")
            st.dataframe(rows, hide_index=True)
            st.caption(summary)

# --- the entity recogniser ---------------------------------------------------------------------
def start_recogniser(action: str) -> None:
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


st.subheader("Entity recogniser")
overview = recognisers.recogniser_overview(con, settings)
for problem in overview.problems:
    st.warning(problem)
if overview.active is not None:
    st.caption(f"Active recogniser **{overview.active.name}**: {overview.active.summary()}. {overview.note}.")
else:
    st.info(overview.note)
job_panel("rec")
busy = retrain.is_running(con)
left, right = st.columns([1, 3], vertical_alignment="bottom")
left.number_input("Epochs (at most)", 1, 100, 25, key="rec_epochs",
                  help="the best dev checkpoint is kept; about 1–3 minutes an epoch on a CPU")
right.button("Train a recogniser", key="rec_train", on_click=start_recogniser, args=("train",), disabled=busy,
             help="on BioRED + BC5CDR Train, chosen on BioRED Dev; then it annotates the abstracts and becomes "
                  "active if its dev F1 is not worse than the active one's")
if overview.trained:
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    labels = {t.path: t.label() for t in overview.trained}
    left.selectbox("Trained recognisers", list(labels), key="rec_choice", format_func=labels.get)
    right.button("Activate", key="rec_activate", on_click=start_recogniser, args=("activate",), disabled=busy,
                 help="annotates the abstracts with it in the background, then makes it active")
if error := st.session_state.pop("rec_error", None):
    st.error(error)

# --- the relation scorer -------------------------------------------------------------------------
def start_relations() -> None:
    try:
        job = relation_scoring.start_relation_training(connection(), load_settings(), who=who())
    except USER_ERRORS as exc:
        st.session_state["rel_error"] = str(exc)
        return
    st.toast(f"{retrain.job_title(job)} job {job.job_id} started")


st.subheader("Relation scorer")
scorer = relation_scoring.overview(con)
st.caption(escape_text(scorer))
job_panel("rel")
st.button("Train the relation scorer", key="rel_train", on_click=start_relations, disabled=retrain.is_running(con),
          help="on BioRED + BC5CDR Train and the curators' decisions (accepted answers are related pairs, rejected "
               "abstracts unrelated ones); then it scores the abstracts and becomes active if its Dev pair F1 is "
               "not worse than the active one's. The Curate page's suggestions rank with it.")
if error := st.session_state.pop("rel_error", None):
    st.error(escape_text(error))

# --- versions -------------------------------------------------------------------------------
st.subheader("Model versions")
versions, problems = catalogue.model_versions(con, models_dir)
for problem in problems:
    st.warning(problem)
if not versions:
    st.info(catalogue.BUILD_HELP)
    st.caption(f"Models folder: `{models_dir}`")
    st.stop()


def activate() -> None:
    try:
        chosen = catalogue.activate(con, st.session_state["activate_choice"], who=who())
    except USER_ERRORS as exc:
        st.session_state["activate_error"] = str(exc)
        return
    st.toast(f"{chosen.version} is now the active {chosen.schema} model")


view = st.radio(
    "Metrics of", ["dense", "hybrid"], horizontal=True, format_func={"dense": "Dense", "hybrid": "Hybrid (+ BM25)"}.get,
    help="Dev-split metrics stored in each version's manifest (EntityRecall judged by the text matcher).",
)
rows = catalogue.version_rows(versions, view)
st.dataframe(
    rows, hide_index=True, column_config={name: st.column_config.NumberColumn(format="%.3f") for name in METRICS}
)

left, right = st.columns([3, 1], vertical_alignment="bottom")
names = [v.version for v in versions]
left.selectbox(
    "Version to serve", names, key="activate_choice",
    format_func=lambda n: next(f"{v.version} ({v.schema}{', active' if v.active else ''})"
                               for v in versions if v.version == n),
)
right.button("Activate", type="primary", on_click=activate, key="activate")
if error := st.session_state.pop("activate_error", None):
    st.error(error)
st.caption(
    "The active version serves the Curate page when its index covers the current corpus; without one, "
    "the newest version that does, else BM25 alone."
)

if evidence := catalogue.gate_rows(versions):
    st.subheader("Activation evidence")
    signed = ("mean gain", "95% low", "95% high")  # differences: the sign is the point
    st.dataframe(evidence, hide_index=True, key="gate_table",
                 column_config={name: st.column_config.NumberColumn(format="%+.3f" if name in signed else "%.3f")
                                for name in evidence[0] if name.startswith(("new ", "active ")) or name in signed})
    st.caption(
        "A new version replaces the active one only when the bootstrap interval of its per-query NDCG@10 gain "
        "on the same dev queries (the served search, new minus active) lies above zero; dev queries come from "
        "the KB's dev genes, or, when it has none, from a fixed share of the curators' decisions held out of training."
    )

# --- charts ---------------------------------------------------------------------------------
bars = catalogue.metric_bars(rows)
if bars:
    st.subheader("Dev metrics per version")
    fig = px.bar(bars, x="metric", y="value", color="version", barmode="group",
                 category_orders={"metric": list(METRICS)}, range_y=[0, 1], height=420)
    st.plotly_chart(fig, key="metrics_chart")
else:
    st.caption("No dev metrics: these versions were built without a dev split (a KB with answers and abstracts).")

curves = catalogue.loss_curves(versions)
if curves:
    st.subheader("Training loss")
    fig = px.line(curves, x="step", y="loss", color="version", height=380)
    st.plotly_chart(fig, key="loss_chart")
else:
    st.caption("No training loss: zero-shot versions are not trained.")

# --- what changed for one query ---------------------------------------------------------------
st.subheader("What changed: one query, two versions")
st.caption("The Curate page's top 20 for a partial relation under two versions, side by side: what a retrain did "
           "to what curators see.")
by_name = {v.version: v for v in versions}
left, right = st.columns(2)
first = left.selectbox("Before", names, key="compare_before",
                       index=next((i for i, v in enumerate(versions) if v.active), 0))
second = right.selectbox("After", names, key="compare_after", index=0)
compare_schema = next((s for s in store_schemas(con) if s.name == by_name[first].schema), None)
slots = st.columns(len(compare_schema.query_types)) if compare_schema else []
typed = {t: column.text_input(t, key=f"compare_{t}") for column, t in zip(slots, compare_schema.query_types,
                                                                            strict=True)} if compare_schema else {}
if st.button("Compare", key="compare", disabled=not any(v.strip() for v in typed.values())):
    tops, problems = {}, []
    for name in (first, second):
        engine = retriever_of_version(con, name)
        if engine is None or engine.version != name:
            problems.append(f"{name} does not serve this corpus (its index covers another set of abstracts); "
                            f"rebuild it to compare.")
            continue
        try:
            result = curate_search(con, engine, matcher(con), compare_schema, typed, mode="hybrid", k=20,
                                   linker=query_linker(con))
        except USER_ERRORS as exc:
            problems.append(str(exc))
            continue
        tops[name] = [row.pmid for row in result.rows]
    for problem in problems:
        st.warning(escape_text(problem))
    if len(tops) == 2:
        shifts = catalogue.rank_shifts(tops[first], tops[second])
        before, after = f"before: {first}", f"after: {second}"
        fig = px.line(catalogue.shift_lines(shifts, before, after), x="version", y="rank", color="pmid",
                      markers=True, hover_data=["change"], height=520,
                      category_orders={"version": [before, after]})
        fig.update_yaxes(autorange="reversed", title="rank (1 = top)")
        fig.update_layout(showlegend=False)
        st.plotly_chart(fig, key="shift_chart")
        st.dataframe(catalogue.shift_table(shifts), hide_index=True, key="shift_table")
        moved = sum(1 for s in shifts if s.describe() != "same")
        st.caption(f"{moved} of {len(shifts)} abstracts changed place, entered or left the top 20.")
