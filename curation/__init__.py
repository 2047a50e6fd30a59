"""Curation domain: everything below the pages, with no Streamlit import and nothing done at import time.

Root modules are the shared vocabulary every subpackage may use: ``records`` (typed records),
``schemas`` (relation schemas), ``grades`` (the Grade enum), ``errors`` (errors for a person),
``config`` (settings), ``files`` (atomic publishing of files). ``cli`` is the terminal entry point.
Subpackages, highest first (each imports only those below it; pyproject.toml's import contract):
workflows, ops, jobs, learning, versions, entities | ingest, store. ``index`` (retrieval) is below all.
"""
