"""Annotate: grade (relation, document) pairs for a second opinion; agreement and adjudication."""

from __future__ import annotations

import streamlit as st

from curation.errors import USER_ERRORS
from curation.grades import GRADE_LABELS, GRADES
from curation.workflows import team
from curation.workflows.annotation_queue import ORDERS, adjudicate, annotation_view, record_label
from curation.workflows.session import corpus_size, current_schema
from pages.parts import highlight
from pages.parts.common import GRADE_SHORTCUTS, connection, matcher, who
from pages.parts.highlight import escape_text
from pages.parts.legacy_runner import leave_legacy_runner
from pages.parts.result_card import card_style
from pages.parts.retrievers import retriever

leave_legacy_runner(__file__)  # first, before anything is drawn (see pages/parts/legacy_runner.py)

st.title("Annotate")
card_style()  # the same entity colours as the Curate page's cards
con = connection()
if con is None:
    st.stop()
if corpus_size(con) == 0:
    st.info("No abstracts yet: load a corpus on the Knowledge base page first.")
    st.stop()
curator = (st.session_state.get("curator") or "").strip()
if not curator:
    st.warning("Enter your name as curator in the sidebar to annotate.")
    st.stop()
schema = current_schema(con, st.session_state.get("schema"))
skipped = st.session_state.setdefault("annotate_skipped", [])


def label(pmid: str, values: dict[str, str], grade: str) -> None:
    try:
        record_label(con, who(), schema, values, pmid, grade)
        st.toast(f"PMID {pmid}: {GRADE_LABELS[grade]}")
    except USER_ERRORS as exc:
        st.session_state["annotate_error"] = str(exc)


def settle(disagreement, key: str) -> None:
    grade = st.session_state.get(key)
    try:
        adjudicate(con, who(), schema, disagreement, grade)
        st.toast(f"PMID {disagreement.item.pmid}: adjudicated {GRADE_LABELS[grade]}")
    except USER_ERRORS as exc:
        st.session_state["annotate_error"] = str(exc)


# Callbacks run before the script, so the view below already includes their effect.
order = st.radio(
    "The model's pairs", ORDERS, horizontal=True, key="queue_order",
    format_func={"uncertainty": "least sure first", "random": "random order (baseline)"}.get,
    help="After the pairs other curators graded, the queue offers pairs the ranking found: those it is least sure "
    "about (its stages disagree, or the score sits near the learned boundary), or a random sample of them.",
)
view = annotation_view(con, retriever(con, schema.name), matcher(con), schema, curator, skipped=skipped, order=order)
if error := st.session_state.pop("annotate_error", None):
    st.error(escape_text(error))
for note in view.notes:
    st.caption(escape_text(note))  # notes quote relations as typed

# --- the next pair --------------------------------------------------------------------------
st.subheader(f"Next pair · {view.remaining} in your queue")
if view.next is None:
    st.info("Nothing left to grade: no pair decided by others or retrieved for an open relation awaits you.")
else:
    entry = view.next.entry
    with st.container(border=True):
        st.caption(f"{entry.source} — {entry.reason} · ranking: {view.mode}")
        st.text(f"Query: {entry.query}")  # typed text: plain, never markdown
        # title_html and abstract_html are escaped by pages.parts.highlight; only its <mark> tags are markup.
        title_html, abstract_html = highlight.title_html(view.next.title), highlight.marked_html(view.next.abstract)
        st.markdown(f"[PMID {entry.pmid}](https://pubmed.ncbi.nlm.nih.gov/{entry.pmid}/) {title_html}",
                    unsafe_allow_html=True)
        st.markdown(abstract_html, unsafe_allow_html=True)
        buttons = st.columns(4)
        for button, grade in zip(buttons, GRADES, strict=False):
            button.button(
                GRADE_LABELS[grade],
                key=f"annotate_{grade}",
                shortcut=GRADE_SHORTCUTS[grade],
                on_click=label,
                args=(entry.pmid, dict(entry.values), grade),
            )
        buttons[3].button("Skip", key="annotate_skip", shortcut="s", on_click=skipped.append, args=(entry.item,))

# --- progress and agreement -------------------------------------------------------------------
st.subheader("Progress")
st.dataframe(
    [{"annotator": p.annotator, "graded": p.labelled, "of": p.total, "share": f"{p.share:.0%}"} for p in view.progress],
    hide_index=True,
)
st.subheader("Agreement")
st.metric(
    "Krippendorff's alpha (ordinal)",
    "—" if view.alpha.alpha is None else f"{view.alpha.alpha:.3f}",
    help=f"over {view.alpha.items} pairs graded by two or more annotators",
)
if view.alpha.reason:
    st.caption(view.alpha.reason)
if view.kappas:
    st.dataframe(
        [
            {
                "annotators": f"{k.annotator_a} · {k.annotator_b}",
                "shared pairs": k.shared,
                "kappa (linear weights)": None if k.kappa is None else round(k.kappa, 3),
                "same grade": None if k.observed is None else f"{k.observed:.0%}",
                "note": k.reason,
            }
            for k in view.kappas
        ],
        hide_index=True,
    )
else:
    st.caption("Cohen's kappa needs two annotators.")

# --- disagreements ----------------------------------------------------------------------------
may_adjudicate = team.may(con, who(), team.Action.ADJUDICATE)  # team mode: adjudicators (and maintainers) only
st.subheader(f"Disagreements to adjudicate · {len(view.disagreements)}")
for disagreement in view.disagreements:
    with st.container(border=True):
        pmid = disagreement.item.pmid
        # Keyed by the pair itself, so a widget keeps its pair when the list above it shrinks.
        ident = "_".join([pmid, *(v for _, v in disagreement.item.relation)])
        said = "; ".join(f"{escape_text(person)}: {GRADE_LABELS[grade]}" for person, grade in disagreement.labels)
        # Curator names and the typed query are escaped: they reach Markdown as plain text.
        st.markdown(f"[PMID {pmid}](https://pubmed.ncbi.nlm.nih.gov/{pmid}/) — {escape_text(disagreement.query)}")
        st.caption(said)
        if not may_adjudicate:
            continue
        pick, go = st.columns([3, 1])
        key = f"adjudicate_grade_{ident}"
        pick.selectbox("Final grade", list(GRADES), format_func=GRADE_LABELS.get, key=key)
        go.button("Adjudicate", key=f"adjudicate_{ident}", on_click=settle, args=(disagreement, key))
