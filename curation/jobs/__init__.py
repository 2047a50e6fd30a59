"""Background jobs: the retrain job protocol (files between app and worker), the worker entry point, processes.

The app is the only DuckDB writer; the worker reads a snapshot and writes artifacts. May import: learning and below.
Modules: ``retraining`` (start, follow, finish, recover), ``retrain_request`` (what a retraining job builds),
``recogniser`` (the recogniser job: train or take one, annotate a snapshot), ``relations`` (the relation-scorer job),
``worker`` (every kind), ``result`` (the typed result.json, read and written there only), ``processes``.
"""
