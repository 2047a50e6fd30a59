"""The retrieval benchmark (v2): KB-style records from curated relations, leak-free saved splits, three query forms.

Modules: corpus (the documents and their gold ids), records (relation kinds and derivation), names (verbatim,
canonical and reworded names), splits (grouped, document-disjoint, saved), build (the assembly and query sets).
May import: entities, ingest, learning.evaluation and the vocabulary.
"""

from curation.learning.benchmark.build import Benchmark, QuerySet, assemble, build_benchmark, normalised
from curation.learning.benchmark.corpus import BenchmarkError, document_concepts, load_corpus
from curation.learning.benchmark.names import FORM_NAMES
from curation.learning.benchmark.records import KIND_NAMES, KINDS, BenchRecord, RelationKind, kind_of
from curation.learning.benchmark.splits import SPLITS, SplitAssignment

__all__ = [
    "FORM_NAMES",
    "KINDS",
    "KIND_NAMES",
    "SPLITS",
    "BenchRecord",
    "Benchmark",
    "BenchmarkError",
    "QuerySet",
    "RelationKind",
    "SplitAssignment",
    "assemble",
    "build_benchmark",
    "document_concepts",
    "kind_of",
    "load_corpus",
    "normalised",
]
