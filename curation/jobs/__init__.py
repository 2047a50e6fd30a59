"""Background jobs: the one training job (any learned model, by its learner's name), the worker entry point, processes.

The app is the only DuckDB writer; the worker reads a snapshot and writes artifacts. May import: learning's learner
interface (``curation.learning.learner``, and the snapshot it exports) and below; never a learned model's own modules.
Modules: ``retraining`` (start any learner's job, follow, finish, recover), ``worker`` (runs the learner named by the
request), ``result`` (the typed result.json, read and written there only), ``processes``.
"""
