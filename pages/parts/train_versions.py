"""The Train & evaluate page's model versions: their dev metrics, activating one, the activation evidence, the
metric and loss charts, and one query compared under two versions. Each section takes the page's
:class:`~curation.workflows.train_view.TrainView`.
"""

from __future__ import annotations

import duckdb
import plotly.express as px
import streamlit as st

from curation.errors import USER_ERRORS
from curation.workflows import versions as catalogue
from curation.workflows.train_view import TrainView, compare_versions
from curation.workflows.versions import METRICS
from pages.parts.common import connection, matcher, query_linker, who
from pages.parts.highlight import escape_text
from pages.parts.retrievers import retriever_of_version


def _activate() -> None:
    try:
        chosen = catalogue.activate(connection(), st.session_state["activate_choice"], who=who())
    except USER_ERRORS as exc:
        st.session_state["activate_error"] = str(exc)
        return
    st.toast(f"{chosen.version} is now the active {chosen.schema} model")


def table_and_activation(view: TrainView) -> list[dict[str, object]]:
    """The versions' dev metrics (dense or hybrid), the version to serve, and the activation evidence; returns
    the bars of the metrics shown (the charts draw them)."""
    shown = st.radio(
        "Metrics of", ["dense", "hybrid"], horizontal=True,
        format_func={"dense": "Dense", "hybrid": "Hybrid (+ BM25)"}.get,
        help="Dev-split metrics stored in each version's manifest (EntityRecall judged by the text matcher).",
    )
    rows, bars = view.metrics(shown)
    st.dataframe(
        rows, hide_index=True, column_config={name: st.column_config.NumberColumn(format="%.3f") for name in METRICS}
    )
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    labels = {v.version: f"{v.version} ({v.schema}{', active' if v.active else ''})" for v in view.versions}
    left.selectbox("Version to serve", list(labels), key="activate_choice", format_func=labels.get)
    right.button("Activate", type="primary", on_click=_activate, key="activate")
    if error := st.session_state.pop("activate_error", None):
        st.error(error)
    st.caption(
        "The active version serves the Curate page when its index covers the current corpus; without one, "
        "the newest version that does, else BM25 alone."
    )
    if evidence := catalogue.gate_rows(view.versions):
        st.subheader("Activation evidence")
        signed = ("mean gain", "95% low", "95% high")  # differences: the sign is the point
        st.dataframe(evidence, hide_index=True, key="gate_table",
                     column_config={name: st.column_config.NumberColumn(format="%+.3f" if name in signed else "%.3f")
                                    for name in evidence[0] if name.startswith(("new ", "active ")) or name in signed})
        st.caption(
            "A new version replaces the active one only when the bootstrap interval of its per-query NDCG@10 gain "
            "on the same dev queries (the served search, new minus active) lies above zero; dev queries come from "
            "the KB's dev genes, or, when it has none, from a fixed share of the curators' decisions held out of "
            "training."
        )
    return bars


def charts(view: TrainView, bars: list[dict[str, object]]) -> None:
    """Dev metrics per version (bars) and the training loss (lines)."""
    if bars:
        st.subheader("Dev metrics per version")
        fig = px.bar(bars, x="metric", y="value", color="version", barmode="group",
                     category_orders={"metric": list(METRICS)}, range_y=[0, 1], height=420)
        st.plotly_chart(fig, key="metrics_chart")
    else:
        st.caption("No dev metrics: these versions were built without a dev split (a KB with answers and abstracts).")
    curves = catalogue.loss_curves(view.versions)
    if curves:
        st.subheader("Training loss")
        st.plotly_chart(px.line(curves, x="step", y="loss", color="version", height=380), key="loss_chart")
    else:
        st.caption("No training loss: zero-shot versions are not trained.")


def comparison(con: duckdb.DuckDBPyConnection, view: TrainView) -> None:
    """One partial relation's top 20 under two versions, side by side."""
    st.subheader("What changed: one query, two versions")
    st.caption("The Curate page's top 20 for a partial relation under two versions, side by side: what a retrain "
               "did to what curators see.")
    names = [v.version for v in view.versions]
    left, right = st.columns(2)
    first = left.selectbox("Before", names, key="compare_before",
                           index=next((i for i, v in enumerate(view.versions) if v.active), 0))
    second = right.selectbox("After", names, key="compare_after", index=0)
    schema = view.schema_of(first)
    slots = st.columns(len(schema.query_types)) if schema else []
    typed = {t: column.text_input(t, key=f"compare_{t}")
             for column, t in zip(slots, schema.query_types, strict=True)} if schema else {}
    if not st.button("Compare", key="compare", disabled=not any(v.strip() for v in typed.values())):
        return
    engines = {name: retriever_of_version(con, name) for name in (first, second)}
    compared = compare_versions(con, engines, matcher(con), query_linker(con), schema, typed, first, second)
    for problem in compared.problems:
        st.warning(escape_text(problem))
    if compared.shifts is not None:  # both versions searched
        fig = px.line(compared.lines, x="version", y="rank", color="pmid", markers=True, hover_data=["change"],
                      height=520, category_orders={"version": [compared.before, compared.after]})
        fig.update_yaxes(autorange="reversed", title="rank (1 = top)")
        fig.update_layout(showlegend=False)
        st.plotly_chart(fig, key="shift_chart")
        st.dataframe(compared.table, hide_index=True, key="shift_table")
        st.caption(compared.summary)
