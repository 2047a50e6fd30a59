"""Train & evaluate: the model versions, their dev metrics and training loss; activate one."""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from curation import store
from curation.config import load_settings
from curation.errors import CurationError
from pages.common import connection

# Metrics in reading order; a version shows those its manifest has.
METRICS = ("ndcg@10", "ndcg@50", "map@10", "map@50", "entity_recall@10", "entity_recall@50")
BUILD_HELP = (
    "No model version yet: the Curate page ranks with BM25 alone. Build one from a terminal — the base "
    "model indexing the corpus (minutes), or an EDEL-trained one:\n\n"
    "```\npython -m curation train --schema PO --zero-shot --out models/po-base\n"
    "python -m curation train --schema PO --out models/po-edel-1\n```\n\n"
    "Versions appear here once published under the models folder."
)

st.title("Train & evaluate")
con = connection()
if con is None:
    st.stop()
models_dir = load_settings().models_dir
versions, problems = store.sync_model_versions(con, models_dir)
for problem in problems:
    st.warning(problem)
if not versions:
    st.info(BUILD_HELP)
    st.caption(f"Models folder: `{models_dir}`")
    st.stop()


def activate() -> None:
    try:
        chosen = store.activate_version(con, st.session_state["activate_choice"])
    except CurationError as exc:
        st.session_state["activate_error"] = str(exc)
        return
    st.toast(f"{chosen.version} is now the active {chosen.schema} model")


# --- versions -------------------------------------------------------------------------------
view = st.radio(
    "Metrics of",
    ["dense", "hybrid"],
    horizontal=True,
    format_func={"dense": "Dense", "hybrid": "Hybrid (+ BM25)"}.get,
    help="Dev-split metrics stored in each version's manifest (EntityRecall judged by the text matcher).",
)
rows = []
for v in versions:
    metrics = v.metrics if view == "dense" else v.metrics_hybrid
    rows.append(
        {
            "version": v.version,
            "schema": v.schema,
            "active": v.active,
            "trained": bool(v.manifest.get("trained")),
            "base model": v.manifest.get("base_model", ""),
            "documents": v.manifest.get("documents"),
            "training pairs": v.manifest.get("training_pairs", 0),
            "train s": v.manifest.get("train_seconds", 0.0),
            "device": v.manifest.get("device", ""),
            **{name: metrics.get(name) for name in METRICS},
        }
    )
st.dataframe(
    rows, hide_index=True, column_config={name: st.column_config.NumberColumn(format="%.3f") for name in METRICS}
)

left, right = st.columns([3, 1], vertical_alignment="bottom")
names = [v.version for v in versions]
left.selectbox(
    "Version to serve",
    names,
    key="activate_choice",
    format_func=lambda n: next(
        f"{v.version} ({v.schema}{', active' if v.active else ''})" for v in versions if v.version == n
    ),
)
right.button("Activate", type="primary", on_click=activate, key="activate")
if error := st.session_state.pop("activate_error", None):
    st.error(error)
st.caption(
    "The active version serves the Curate page when its index covers the current corpus; without one, "
    "the newest version that does, else BM25 alone. Retraining controls arrive later."
)

# --- charts ---------------------------------------------------------------------------------
bars = [
    {"version": row["version"], "metric": name, "value": row[name]}
    for row in rows
    for name in METRICS
    if row[name] is not None
]
if bars:
    st.subheader("Dev metrics per version")
    fig = px.bar(
        bars,
        x="metric",
        y="value",
        color="version",
        barmode="group",
        category_orders={"metric": list(METRICS)},
        range_y=[0, 1],
        height=420,
    )
    st.plotly_chart(fig, key="metrics_chart")
else:
    st.caption("No dev metrics: these versions were built without a dev split (a KB with answers and abstracts).")

curves = [
    {"version": v.version, "step": step, "loss": loss}
    for v in versions
    for step, loss in enumerate(v.loss_curve, start=1)
]
if curves:
    st.subheader("Training loss")
    fig = px.line(curves, x="step", y="loss", color="version", height=380)
    st.plotly_chart(fig, key="loss_chart")
else:
    st.caption("No training loss: zero-shot versions are not trained.")
