"""Relations: the relation scorer (co-mentioned pairs → probability), its features, training data, the pair
storage policy, and the suggestions for a missing slot aggregated over ranked documents.

Modules: ``pairs``, ``features``, ``scorer``, ``evaluation``, ``training_data``, ``training``, ``scorer_folder``,
``active``, ``stored_pairs``, ``suggestions``. May import: entities, ingest, store (its SQL stays in
``curation.store.relations``) and the vocabulary; used by jobs, workflows and the command line.
"""
