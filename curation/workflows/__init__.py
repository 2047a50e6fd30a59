"""Workflows: what a page calls (curate, annotate and agreement, knowledge base ingestion and export, projection).

Each function takes the connection, models and inputs as arguments and returns what the page renders.
May import: every other curation package and index; pages/ import only this package and the vocabulary.
"""
