"""The entity recogniser's home: its data (``data``, ``ncbi_corpora``), its learner (``learner``: the job's request,
training, the snapshot annotated for the app in ``annotations``), its activation rule (``activation``) and the
recogniser the code ships (``shipped``; its files in ``curation/learning/shipped_recogniser/``).

Its serving (loading a folder, its manifest, spaCy's and the transformer's inference) stays in
:mod:`curation.entities.recogniser` and :mod:`curation.entities.transformer_recogniser`: entities is below learning
and the annotator (entities) serves it, while its data reads ingest's PubTator reader (entities and ingest are
independent), so the training side lives here. May import: what learning may.
"""
