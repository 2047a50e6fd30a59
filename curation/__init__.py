"""Curation domain: schemas, KB records, corpus loaders, synonyms, matching, storage.

Nothing here imports Streamlit, and nothing happens at import time.
"""
