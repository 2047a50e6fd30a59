"""Workflows: the facade pages/ and cli/ call, one module per page or command family, a thin function per user
action (the role checked first when it writes) returning a typed view; the algorithms are the domain packages'.

May import: every other curation package and index; pages/ and pages.parts (their Streamlit helpers) import only
this package and the vocabulary.
"""
