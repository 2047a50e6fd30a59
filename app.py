"""Curation workbench: entry point. Navigation and sidebar only; each page does one task."""

from __future__ import annotations

import streamlit as st

from curation.workflows.session import corpus_size
from pages.common import connection, preload_search, sidebar, store_notice_banner
from pages.legacy_mode import leave_legacy_pages_mode

leave_legacy_pages_mode()  # before anything is drawn: the first run after the server starts
st.set_page_config(page_title="Curation workbench", page_icon=":material/biotech:", layout="wide")

con = connection()
sidebar(con)
store_notice_banner(con)  # repairs made from the decision journal, until someone reads them
empty = con is None or corpus_size(con) == 0
# An empty store opens on the Knowledge base page, which says how to load data.
pages = [
    st.Page("pages/curate.py", title="Curate", icon=":material/fact_check:", default=not empty),
    st.Page("pages/annotate.py", title="Annotate", icon=":material/rate_review:"),
    st.Page("pages/knowledge_base.py", title="Knowledge base", icon=":material/database:", default=empty),
    st.Page("pages/explore.py", title="Explore embeddings", icon=":material/scatter_plot:"),
    st.Page("pages/train.py", title="Train & evaluate", icon=":material/model_training:"),
]
try:
    st.navigation(pages).run()
finally:  # also after st.stop and st.rerun
    preload_search(con)  # what a search needs, built in the background once the first page is drawn
