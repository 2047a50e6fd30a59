"""Relations: the relation scorer (co-mentioned pairs → probability: pairs, features, scorer, evaluation, training
data, training, its folder, the active one), the stored pairs' policy, filling the concept index (a document's
annotations and its scored pairs together), suggestions for a missing slot and their review list.

May import: entities, ingest, store (whose ``relations`` module keeps the SQL) and the vocabulary; used by jobs and
workflows.
"""
