"""The DuckDB store: the one package that talks SQL.

May import the shared vocabulary only (config, errors, files, grades, records, schemas).

Verb-first functions with the connection first; SQL in named constants; values always bound as ``?``
parameters. The schema is versioned: :data:`~curation.store.migrations.MIGRATIONS` are applied in order by
:func:`~curation.store.base.migrate`, each in its own transaction, and ``schema_version`` records which ran.

Process model: one process opens the file read-write (the app, or a CLI run when the app is not using the
file). A second opener gets :class:`~curation.errors.StoreLockedError` with the holder's PID.
Submodules by concept: ``opening`` (open, migrate and check a store file), ``base`` (connection, migrations,
transactions, schemas, counts), ``migrations``, ``kb`` (knowledge-base records), ``corpus`` (documents,
annotations, synonyms), ``annotations`` (the concept index: each document's annotations, which annotator made
them, the entity models), ``relations`` (each annotated document's co-mentioned concept pairs, their relation
scores), ``decisions`` (curators' decisions), ``journal``, ``journaled`` and ``reconcile`` (the decision
journal beside the file, a write transaction with its journal record, and what opening does when they
disagree), ``worklist``, ``saved`` (saved queries), ``loads`` (each load of the sample as planned steps,
done or left), ``jobs`` (background retraining), ``models`` (model versions, the active one per schema; typed by
``curation.versions.catalog``), ``screening`` (a screened topic's candidates in their static order),
``lexicon_inputs`` (a digest of the rows the dictionaries' lexicon is built from)
and ``team`` (team mode: role grants, their audit, the people who signed in).
Nothing is re-exported here: import a name from the module that owns it
(``from curation.store.opening import open_store``).
"""
