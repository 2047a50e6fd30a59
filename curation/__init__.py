"""Curation domain: everything below the pages, with no Streamlit import and nothing done at import time.

Root modules are the shared vocabulary every subpackage may use: ``records`` (typed records),
``schemas`` (relation schemas), ``grades`` (the Grade enum), ``errors`` (errors for a person),
``config`` (settings), ``files`` (atomic publishing of files). ``training_loop`` (the one optimiser,
schedule and early-stopping loop every fine-tuned model runs through) sits just above them, beside ``store``.
``cli`` is the terminal entry point.
Subpackages, highest first (each imports only those below it; pyproject.toml's import contract):
workflows, runtime, ops, jobs, learning, retrieval, versions, relations, entities | ingest | access, store.
``index`` (retrieval) is below all.
"""
