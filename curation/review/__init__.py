"""Review: agreement between annotators, uncertainty sampling, the annotation queue, provenance, typed answers.

May import: entities, store, index and the shared vocabulary; imported by workflows/ (and cli/, bench/).
"""
