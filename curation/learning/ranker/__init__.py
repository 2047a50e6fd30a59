"""The learned ranker's home (LambdaMART over LightGBM): its data and training (``training``: graded query lists over
the served candidates → a ranker), the build with its gate (``build``: the KB split by gene or held-out topics, dev
evidence kept in the manifest) and the update over the store (``update``: kept under the serving version's folder,
activated when the gate passes). It has no learner: it is trained in the app, in seconds, because it needs the served
search (the page's "Update the ranker", :mod:`curation.workflows.ranker_update`).

Its serving (features, the model folder and manifest, the stage re-ordering the concept search, kept updates) stays in
:mod:`curation.ranking`: ranking is below retrieval, which applies it inside the served search. May import: what
learning may.
"""
