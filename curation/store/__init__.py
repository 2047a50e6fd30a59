"""The DuckDB store: the one package that talks SQL.

Verb-first functions with the connection first; SQL in named constants; values always bound
as ``?`` parameters. The schema is versioned: :data:`MIGRATIONS` are applied in order by
:func:`migrate`, each in its own transaction, and ``schema_version`` records which ran.

Process model: one process opens the file read-write (the app, or a CLI run when the app is
not using the file). A second opener gets :class:`StoreLockedError` with the holder's PID.
Submodules by concept: ``base`` (connection, migrations, transactions, schemas, counts),
``kb`` (knowledge-base records), ``corpus`` (documents, annotations, synonyms),
``annotations`` (the concept index: each document's annotations, which annotator made them, the
entity models), ``relations`` (each annotated document's co-mentioned concept pairs, their relation
scores), ``decisions`` (curators' decisions and the worklist), ``jobs`` (background retraining) and
``models`` (model versions, the active one per schema; typed by ``curation.versions.catalog``).
Import the package: ``store.open_store``.
"""

from __future__ import annotations

from curation.store.annotations import (
    AnnotationRow,
    EntityModelRow,
    Posting,
    annotation_counts,
    clear_active_entity_model,
    get_active_entity_model,
    insert_entity_model,
    list_annotated_texts,
    list_annotations,
    list_annotators,
    list_concept_postings,
    list_entity_models,
    list_stale_documents,
    replace_annotations,
    set_active_entity_model,
)
from curation.store.base import (
    add_schema,
    connect,
    content_counts,
    ingest_times,
    list_schemas,
    migrate,
    record_ingest,
    schema_version,
    stats,
    transaction,
)
from curation.store.corpus import (
    add_documents,
    add_synonyms,
    get_documents,
    iter_documents,
    list_mentions,
    list_relations,
    list_synonyms,
)
from curation.store.decisions import (
    MAX_CURATOR,
    STATUSES,
    add_worklist_item,
    decisions_for,
    fill_worklist_from_kb,
    list_decisions,
    list_worklist,
    record_decision,
    relation_key,
    set_worklist_status,
    undo_last_decision,
)
from curation.store.jobs import (
    Job,
    active_jobs,
    create_job,
    finish_job,
    get_job,
    list_jobs,
    set_job_dir,
    set_job_message,
    set_job_result,
    start_job,
)
from curation.store.kb import add_kb_records, kb_records_citing, list_entity_values, list_kb_records, record_id
from curation.store.migrations import MIGRATIONS
from curation.store.models import (
    VersionRow,
    clear_active_version,
    get_active_version_row,
    get_version_row,
    insert_version_row,
    list_version_rows,
    set_active_version,
)
from curation.store.opening import open_store
from curation.store.relations import (
    UNSCORED,
    PairRow,
    clear_relation_pairs,
    list_relation_pairs,
    list_relation_scorers,
    list_unscored_documents,
    replace_relation_pairs,
)
from curation.store.saved import (
    SavedQuery,
    delete_saved_query,
    list_saved_queries,
    mark_seen,
    new_since_last_look,
    save_query,
)

__all__ = [
    "MIGRATIONS",
    "AnnotationRow",
    "EntityModelRow",
    "annotation_counts",
    "clear_active_entity_model",
    "get_active_entity_model",
    "insert_entity_model",
    "list_annotations",
    "list_annotated_texts",
    "list_concept_postings",
    "Posting",
    "list_annotators",
    "list_entity_models",
    "list_stale_documents",
    "replace_annotations",
    "UNSCORED",
    "PairRow",
    "clear_relation_pairs",
    "list_relation_pairs",
    "list_relation_scorers",
    "list_unscored_documents",
    "replace_relation_pairs",
    "set_active_entity_model",
    "add_documents",
    "add_kb_records",
    "connect",
    "add_schema",
    "add_synonyms",
    "content_counts",
    "get_documents",
    "iter_documents",
    "list_entity_values",
    "kb_records_citing",
    "SavedQuery",
    "delete_saved_query",
    "list_saved_queries",
    "mark_seen",
    "new_since_last_look",
    "save_query",
    "list_kb_records",
    "list_mentions",
    "list_relations",
    "list_schemas",
    "list_synonyms",
    "migrate",
    "open_store",
    "record_id",
    "record_ingest",
    "ingest_times",
    "schema_version",
    "stats",
    "transaction",
    "MAX_CURATOR",
    "STATUSES",
    "add_worklist_item",
    "decisions_for",
    "fill_worklist_from_kb",
    "list_decisions",
    "list_worklist",
    "record_decision",
    "relation_key",
    "set_worklist_status",
    "undo_last_decision",
    "Job",
    "active_jobs",
    "create_job",
    "finish_job",
    "get_job",
    "list_jobs",
    "set_job_dir",
    "set_job_message",
    "set_job_result",
    "start_job",
    "VersionRow",
    "clear_active_version",
    "get_active_version_row",
    "get_version_row",
    "insert_version_row",
    "list_version_rows",
    "set_active_version",
]
