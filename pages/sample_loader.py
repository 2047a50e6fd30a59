"""The "Load the sample" action of an empty store (Knowledge base page and the Curate page's empty state).

A helper module, not a page: app.py's navigation never lists it.
"""

from __future__ import annotations

import duckdb
import streamlit as st

from curation.config import load_settings
from curation.errors import USER_ERRORS
from curation.workflows.quickstart import SampleFile, find_sample, load_sample
from pages.common import annotator, connection, matcher, who
from pages.highlight import escape_text
from pages.retrievers import retriever


def _load() -> None:
    """The button's callback: load every file with a progress bar each, then build what a first search needs."""
    settings = load_settings()
    con = connection()
    if con is None:
        return
    bars: dict[str, object] = {}

    def on_file(sample: SampleFile, position: int, total: int) -> None:
        for done in bars.values():
            done.progress(1.0)
        bars[sample.label] = st.progress(0.0, text=f"{position}/{total} · {sample.label}")

    def on_rows(sample: SampleFile, rows: int) -> None:
        bars[sample.label].progress(min(0.95, rows / (rows + 2000)),
                                    text=f"{sample.label}: {rows:,} rows read")

    def on_annotated(done: int, total: int) -> None:
        bars["annotate"] = bars.get("annotate") or st.progress(0.0)
        bars["annotate"].progress(done / max(total, 1), text=f"annotating abstracts: {done:,} of {total:,}")

    try:
        report = load_sample(con, settings, on_file=on_file, on_rows=on_rows,
                             annotator=lambda: annotator(con).annotator, on_annotated=on_annotated, who=who())
    except USER_ERRORS as exc:
        st.error(escape_text(str(exc)))
        return
    for done in bars.values():
        done.progress(1.0)
    if not report.nothing_new:
        # What the first search needs is built now, not on the first query: the matcher over the new
        # dictionaries (abstracts analysed ahead) and the ranking that serves.
        with st.spinner("Preparing the first search (dictionaries, abstracts, BM25 index)…"):
            matcher(con)
            retriever(con, st.session_state.get("schema") or "PO")
    # Drawn by the callback, so it shows above the page on the run that follows the click, whatever the
    # page then draws (the Curate page leaves its empty state once abstracts are in).
    show = st.warning if report.failed else st.info if report.nothing_new else st.success
    show(escape_text(report.summary()))


def sample_action(con: duckdb.DuckDBPyConnection, key: str) -> None:
    """The "Load the sample" button, what it will load, and the last load's summary."""
    settings = load_settings()
    files = find_sample(settings.data_dir)
    where = (f"{len(files)} files from {settings.data_dir}" if files
             else "CIViC evidence and the PubMed abstracts it cites, fetched online (no data directory found)")
    st.button("Load the sample", key=key, type="primary", on_click=_load,
              help=f"Loads {where}. Loading again adds nothing.")
    st.caption(f"The sample: {escape_text(where)}.")
