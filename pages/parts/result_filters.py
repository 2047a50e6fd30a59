"""The Curate page's filter-and-sort panel and the "in the KB" badge of a result (drawn by pages/curate.py)."""

from __future__ import annotations

import streamlit as st

from curation.workflows.curate import DECIDED, IN_KB, SORTS, CurateResult, ResultRow, RowFilter
from pages.parts.highlight import escape_text

NO_METADATA = (
    "Year, journal, authors and publication type are not available for these abstracts (their corpus has "
    "none); abstracts imported as PubMed XML or fetched from PubMed have them."
)
CIVIC_EVIDENCE = "https://civicdb.org/evidence/{}/summary"


def filter_panel(result: CurateResult, curator: str) -> RowFilter:
    """The filters the curator set (kept in the session per widget), drawn in a collapsed expander."""
    rows = result.rows
    years = sorted({r.year for r in rows if r.year})
    types = sorted({t for r in rows for t in r.pub_types})
    with st.expander("Filter and sort", expanded=False):
        left, middle, right = st.columns(3)
        groups = left.multiselect("Mentions", ["all", "some"], key="filter_groups",
                                  help="all: the abstract mentions every query concept; some: not all") \
            if len(result.concepts) > 1 else []
        in_kb = left.radio("In the KB", IN_KB, key="filter_in_kb", help="whether a KB record of this schema "
                           "already cites the abstract (CIViC evidence, curators' answers, ...)")
        decided = middle.radio("Decided", DECIDED, key="filter_decided",
                               help="decisions on this relation; 'by me' needs your name in the sidebar")
        sort = right.radio("Sort", SORTS, key="filter_sort")
        span = None
        if len(years) > 1:
            span = middle.slider("Years", years[0], years[-1], (years[0], years[-1]), key="filter_years")
            if span == (years[0], years[-1]):
                span = None  # the whole range: rows without a year stay
        chosen = right.multiselect("Publication type", types, key="filter_types") if types else []
        if not years and not types and rows:
            st.caption(NO_METADATA)
    return RowFilter(groups=frozenset(groups), years=span, pub_types=frozenset(chosen), in_kb=in_kb,
                     decided=decided, curator=curator or "", sort=sort)


def kb_badge(row: ResultRow) -> None:
    """ "In the KB · n": the records that cite this PMID, CIViC evidence linked to CIViC."""
    label = f"In the KB · {len(row.in_kb)} record{'s' if len(row.in_kb) != 1 else ''}"
    with st.popover(label):
        for record in row.in_kb:
            entities = " · ".join(escape_text(v) for _, v in record.entities if v)
            source_id = record.source_id
            if record.source == "civic" and source_id.startswith("EID"):
                number = source_id[3:].split(":")[0]
                if number.isascii() and number.isdigit():
                    st.markdown(f"[CIViC {escape_text(source_id.split(':')[0])}]"
                                f"({CIVIC_EVIDENCE.format(number)}) — {entities}")
                    continue
            st.markdown(f"{escape_text(record.source)} {escape_text(source_id)} — {entities}")
