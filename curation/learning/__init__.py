"""Learning: the learner interface every learned model is trained through (``learner``: ``Learner``, the registry
``LEARNERS``), EDEL (margin classes, sampling, the loss, training, snapshots, evaluation, the benchmark, feedback
pairs; its learner ``version_learner``), the recogniser's home (``recogniser/``), the linker's (``linker/``), the
relation scorer's learner (``relation_scorer``), the learned ranker's (``ranker/``: training, build, update over the
store; served from :mod:`curation.ranking`) and the cross-encoder's (``cross_encoder/``: training and the version's
re-ranking stage, built inside a model version).

Owns: the ONE build chain (``build.build_version``: train -> encode -> index -> evaluate -> manifest) that
the CLI, the worker and bench/ call. May import: retrieval, versions, ranking, relations, entities, ingest, store,
training_loop, index and the vocabulary.
"""
