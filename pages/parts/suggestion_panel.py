"""The Curate page's "Suggested <slot>" panel: chips for the candidates the top abstracts relate to the query, each
with the direction its sentences give ("responds to", "resistance", "treats") and, below, the sentence that says so.

Clicking a chip keeps only its supporting abstracts in the results, shows the sentence of each that relates
them, and pre-fills the answer of those abstracts; a decision made then records the suggestion (its rank and
score) in its provenance. Every name and sentence is escaped here (:mod:`pages.parts.highlight`).
"""

from __future__ import annotations

import streamlit as st

from pages.parts.highlight import escape_text, to_html

PICK = "suggestion_pick"
SENTENCES_SHOWN = 10  # suggestions whose best sentence the panel shows without a click


def panel(result, key_values: dict[str, str]):
    """Draw the panel; returns the chosen suggestion (None when none is chosen)."""
    if st.session_state.get("suggestion_for") != key_values:  # another relation: the choice ends
        st.session_state.pop(PICK, None)
        st.session_state["suggestion_for"] = dict(key_values)
    title = f"Suggested {result.slot.lower()}"
    if not result.suggestions:
        st.caption(f"{title}: {escape_text(result.message or 'none')}")
        return None
    new = len(result.new_to_kb)
    st.markdown(f"**{escape_text(title)}** — from the relation scores of the top {result.documents} abstracts "
                f"({new} new to the KB)")
    labels = {s.label(): s for s in result.suggestions}
    picked = st.pills(title, list(labels), selection_mode="single", key=PICK, label_visibility="collapsed",
                      help="Click one to see only the abstracts that relate it to your query, its answer filled in")
    for note in result.notes:
        st.caption(escape_text(note))
    chosen = labels.get(picked) if picked else None
    if chosen is None:  # before a chip is chosen: each suggestion's best sentence, one line each
        with st.expander("The sentence behind each suggestion", expanded=False):
            for s in result.suggestions[:SENTENCES_SHOWN]:
                if s.papers:
                    paper = s.papers[0]
                    direction_html = f" ({escape_text(s.direction)})" if s.direction else ""
                    sentence_html = to_html(paper.sentence, paper.sentence_marks)
                    # quoted: a supporting sentence's link is not a result's (the expander's lines are in the page)
                    name_html = escape_text(s.name)
                    st.markdown(f"> **{name_html}**{direction_html}: {sentence_html} "
                                f"[PMID {paper.pmid}](https://pubmed.ncbi.nlm.nih.gov/{paper.pmid}/)",
                                unsafe_allow_html=True)
        return None
    where = (f"in the KB (PMIDs {', '.join(chosen.kb_pmids[:8])})" if chosen.in_kb and chosen.kb_pmids
             else "in the KB" if chosen.in_kb else "new to the KB")
    st.caption(escape_text(f"{chosen.name}: score {chosen.score:.3f}, {chosen.supporting} supporting of "
                           f"{chosen.co_mentions} abstracts that mention it with the query; {where}"))
    for paper in chosen.papers:
        sentence_html = to_html(paper.sentence, paper.sentence_marks)  # escaped; only its <mark> tags are markup
        direction_html = f", {escape_text(paper.direction)}" if paper.direction else ""
        st.markdown(f"> [PMID {paper.pmid}](https://pubmed.ncbi.nlm.nih.gov/{paper.pmid}/) "
                    f"(rank {paper.rank}, p {paper.probability:.2f}{direction_html}): {sentence_html}",
                    unsafe_allow_html=True)
    for paper in chosen.papers:  # the answer of each supporting abstract, unless the curator typed one
        if not st.session_state.get(f"answer_{paper.pmid}"):
            st.session_state[f"answer_{paper.pmid}"] = chosen.name
    return chosen
