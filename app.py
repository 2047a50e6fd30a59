"""Curation workbench: entry point. Navigation and sidebar only; each page does one task."""

from __future__ import annotations

import streamlit as st

from pages.common import connection, sidebar

st.set_page_config(page_title="Curation workbench", page_icon=":material/biotech:", layout="wide")

pages = [
    st.Page("pages/knowledge_base.py", title="Knowledge base", icon=":material/database:", default=True),
]
navigation = st.navigation(pages)
sidebar(connection())
navigation.run()
