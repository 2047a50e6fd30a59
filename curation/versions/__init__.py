"""Model versions: the registry of immutable folders under models/, activation, and the serving policy.

Owns: which version a schema serves and with which fusion. May import: entities, store, index and the vocabulary.
Modules: ``manifest`` (the typed manifest.json, read and written there only), ``registry`` (the folders),
``catalog`` (versions the store knows, the active one per schema), ``activation`` (whether a new one replaces it).
"""
