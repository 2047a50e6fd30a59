"""The pages' parts: what app.py and the pages draw with (cards, panels, the sidebar, the cached connection and
retrievers, the address state). Only app.py and pages/ (this package included) import streamlit.

May import: curation.workflows and the shared vocabulary (config, errors, files, grades, records, resolution,
schemas); nothing in curation/ or index/ imports it. A subpackage of pages/, not a file there: Streamlit lists every
``.py`` file directly in a ``pages/`` folder beside the main script as a page, never a subfolder's files, so pages/
itself holds the pages only.
"""
