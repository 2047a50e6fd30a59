"""The learned ranking stage of the served search: features of (query, candidate) pairs, the LightGBM model
folder (text model + JSON manifest) and its application to the concept search's top N.

May import: relations, entities, store, index and the vocabulary; used by versions (attaches it to the served
engine), retrieval (the served search applies it), learning (trains it) and workflows.
"""
