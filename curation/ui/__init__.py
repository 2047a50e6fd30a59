"""The Streamlit layer's helpers: what app.py and the pages under pages/ draw with (cards, panels, the sidebar,
the cached connection and retrievers, the address state). Only app.py, pages/ and this package import streamlit.

May import: curation.workflows and the shared vocabulary (config, errors, files, grades, records, schemas); no other
curation package imports this one. Not in pages/, because Streamlit lists every file of a ``pages/`` folder beside
the main script as a page; named ``ui`` because it is the user interface's half that is not a page.
"""
