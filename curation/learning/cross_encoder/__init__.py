"""The cross-encoder re-ranker's home: its data and training (``training``: graded labels over EDEL's pairs, the
model fine-tuned through the one loop, published with ``cross_encoder.json``) and the stage of a model version
(``stage``: trained into the version's staged ``cross_encoder/`` folder, served only on a dev gain within the latency
budget, the decision kept in the version's manifest).

It has no learner of its own: it is trained and published inside a model version by the build chain
(:func:`curation.learning.build.build_version`), so the learner that trains it is the model version's
(``retrain``, :mod:`curation.learning.version_learner`). Its serving is the index's (:mod:`index.rerank`, loaded with
the version by :mod:`index.loading` when the manifest says to serve it). May import: what learning may.
"""
