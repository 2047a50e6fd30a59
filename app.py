"""Curation workbench: entry point. Navigation and sidebar only; each page does one task."""

from __future__ import annotations

import streamlit as st

from curation.workflows.session import corpus_size
from pages.parts import team_gate
from pages.parts.addresses import with_root_forwarding
from pages.parts.common import connection, preload_search
from pages.parts.legacy_runner import leave_legacy_runner
from pages.parts.sample_loader import loading, resume_unfinished_load
from pages.parts.sidebar import sidebar, store_notice_banner

leave_legacy_runner(__file__)  # before anything is drawn: the first run after the server starts
st.set_page_config(page_title="Curation workbench", page_icon=":material/biotech:", layout="wide")

con = connection()
resume_unfinished_load(con)  # a load stopped before its end (server killed, power cut): finished in the background
signed = team_gate.session(con)  # team mode: the signed-in person, or a sign-in page (the run stops there)
sidebar(con, signed)
store_notice_banner(con)  # repairs made from the decision journal, until someone reads them
empty = con is None or corpus_size(con) == 0
PAGES = [
    ("pages/curate.py", "Curate", ":material/fact_check:"),
    ("pages/annotate.py", "Annotate", ":material/rate_review:"),
    ("pages/knowledge_base.py", "Knowledge base", ":material/database:"),
    ("pages/explore.py", "Explore embeddings", ":material/scatter_plot:"),
    ("pages/train.py", "Train & evaluate", ":material/model_training:"),
]
try:
    if signed is not None:  # team mode: the pages the person's roles open, and the Team page for maintainers
        team_gate.navigation(con, signed, [*PAGES, ("pages/team.py", "Team", ":material/group:")]).run()
    else:  # an empty store opens on the Knowledge base page, which says how to load data
        pages = {script: st.Page(script, title=title, icon=icon) for script, title, icon in PAGES}
        start = pages["pages/knowledge_base.py" if empty else "pages/curate.py"]
        st.navigation(with_root_forwarding(list(pages.values()), start)).run()  # the root opens start's address
finally:  # also after st.stop and st.rerun
    if not loading():  # the dictionaries change with every file a load adds: built once it is done
        preload_search(con)  # what a search needs, built in the background once the first page is drawn
