"""Model versions: the registry of immutable folders under models/, activation, and the serving policy.

Owns: which version a schema serves and with which fusion. May import: entities, store, index and the vocabulary.
"""
