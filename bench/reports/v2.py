"""Records shared by the results of benchmark v2 (retrieval, edel, feedback): its counts and leak figures."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from curation.versions.typed_json import OPTIONAL


@dataclass(frozen=True)
class Leak:
    """How much of one form's test split the training split already holds."""

    positive_docs_in_train: float
    identical_query_texts: float
    positive_docs: int
    query_texts: int


#: split → form → leak figures
Leaks = Mapping[str, Mapping[str, Leak]]


@dataclass(frozen=True)
class SplitCounts:
    saved_file_used: bool
    new_concepts: int
    new_documents: int
    records_dropped_as_conflicts: Mapping[str, int]  # "kind:split" → records
    queries_dropped_identical_to_train: Mapping[str, int]


@dataclass(frozen=True)
class Renamed:
    renamed: int
    total: int


@dataclass(frozen=True)
class Counts:
    """The benchmark's size: corpus, records and queries per split and kind, and how they were derived."""

    corpus_documents: int
    records: Mapping[str, Mapping[str, int]]
    queries: Mapping[str, Mapping[str, int]]  # split → kind → queries
    positive_documents: Mapping[str, object]
    derivation: Mapping[str, object]
    split: SplitCounts
    reworded_without_fresh_name: Mapping[str, int]  # "kind:split" → queries keeping a canonical name
    chemicals_linked_to_drugbank: int
    reworded_entities: Mapping[str, Renamed] | None = field(default=None, metadata=OPTIONAL)
    latency_queries: int | None = field(default=None, metadata=OPTIONAL)  # retrieval only
    kb_train_records: int | None = field(default=None, metadata=OPTIONAL)  # feedback only
