"""Train & evaluate's ranker section: "Update the ranker" (the default action: seconds, on this CPU, nothing
re-encoded) and each kept update with its dev evidence, the features that carry it and the dev queries whose order
it changed most.
"""

from __future__ import annotations

import streamlit as st

from curation.config import load_settings
from curation.errors import USER_ERRORS
from curation.schemas import RelationSchema
from curation.workflows import ranker_update
from curation.workflows.ranker_update import RankerRow
from pages.parts.common import connection, matcher, query_linker, who
from pages.parts.highlight import escape_text
from pages.parts.retrievers import retriever

POLL_SECONDS = 1.0


def _start(schema: RelationSchema) -> None:
    con = connection()
    try:
        ranker_update.start_ranker_update(con, retriever(con, schema.name), matcher(con), query_linker(con), schema,
                                          load_settings().models_dir, who())
    except USER_ERRORS as exc:
        st.session_state["rk_error"] = str(exc)
        return
    st.session_state["rk_watching"] = True
    st.toast("Updating the ranker…")


@st.fragment(run_every=POLL_SECONDS)
def _poll(schema: RelationSchema) -> None:
    """Polls while the update runs; the page runs again when it ends (its outcome and the new update show)."""
    panel = ranker_update.ranker_panel(connection(), "", schema, load_settings().models_dir)
    if panel.running:
        st.caption("Updating the ranker: searching the KB's and the decisions' queries, training, measuring on dev…")
    elif st.session_state.pop("rk_watching", None):
        st.rerun(scope="app")


def _update(row: RankerRow) -> None:
    state = "served" if row.active else ("passed the gate" if row.improved else "kept, not served")
    with st.expander(f"Ranker {row.name} · {state} · dev NDCG@10 gain {row.gain:+.4f} "
                     f"[{row.low:+.4f}, {row.high:+.4f}]", expanded=row.active):
        st.caption(escape_text(f"{row.verdict} ({row.queries} dev queries). Learned from {row.trained_on}."))
        if row.features:
            st.caption("What carries it: each feature's share of the model's split gain")
            st.bar_chart({name: share for name, share in row.features}, horizontal=True)
        if row.changed:
            st.caption("The dev queries whose order it changed most (rank before → after; gain 2 = the KB's "
                       "evidence or a complete grade)")
            st.dataframe([{"query": q.query, "NDCG@10 before": q.ndcg10_before, "after": q.ndcg10_after,
                           "PMID": pmid, "rank before": before, "rank after": after, "gain": gain}
                          for q in row.changed for pmid, before, after, gain in q.documents], hide_index=True)


def section(schema: RelationSchema | None, version: str) -> None:
    """The ranker section of the serving ``version``: the action, this process's outcome, the kept updates (newest
    first)."""
    st.subheader("Update the ranker")
    if schema is None:
        return
    panel = ranker_update.ranker_panel(connection(), version, schema, load_settings().models_dir)
    st.caption("Learns the order of the concept search's best hits from the KB and the curators' grades (LightGBM "
               "LambdaMART over features the product already has), in seconds on this CPU; the corpus is not "
               "re-encoded. A new ranker serves only when the paired-bootstrap interval of its dev NDCG@10 gain over "
               "the concept search alone is above 0.")
    st.button("Update the ranker", type="primary", key="rk_update", on_click=_start, args=(schema,),
              disabled=panel.running)
    if panel.running or st.session_state.get("rk_watching"):
        _poll(schema)
    if error := st.session_state.pop("rk_error", None) or panel.error:
        st.error(escape_text(error))
    if panel.last is not None:
        show = st.success if panel.last.activated else st.info
        show(escape_text(f"Ranker {panel.last.name} ({panel.last.seconds} s): "
                         f"{'activated' if panel.last.activated else 'not activated'}. {panel.last.verdict}"))
    for problem in panel.problems:
        st.warning(escape_text(problem))
    curve = ranker_update.learning_curve(panel.updates)
    if len(curve) >= 2:
        st.caption("This store's learning curve: dev NDCG@10 of each kept update against the decisions it learned "
                   "from (each update is measured on the dev queries of its day, which grow with the grades on dev "
                   "genes)")
        st.line_chart(curve, x="decisions trained on", y=["concept search alone", "with the ranker"])
    for row in panel.updates[:5]:
        _update(row)
