"""Suggest the missing slot (the CLI's ``suggest`` and the Curate page's "Suggested <slot>" panel): the served
search's top documents, then :func:`curation.relations.missing_slot.suggest_from`; the review list written as
:mod:`curation.relations.review_list` lays it out.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import duckdb

from curation.entities.matching import Matcher
from curation.entities.postings import StorePostings
from curation.entities.query import QueryLinker
from curation.relations import review_list
from curation.relations.active import ActiveScorer
from curation.relations.missing_slot import (
    DEFAULT_TOP_DOCS,
    MAX_TOP_DOCS,
    SHOWN,
    Suggestion,
    SuggestionResult,
    SupportingPaper,
    suggest_from,
)
from curation.relations.review_list import result_record, review_file
from curation.retrieval.relation_search import SearchOptions, search_relation
from curation.schemas import RelationSchema
from curation.store.annotations import main_diseases
from curation.store.corpus import get_documents

# The suggestions' vocabulary, which the Curate page and the CLI use (they import it from here).
__all__ = [
    "DEFAULT_TOP_DOCS", "Suggestion", "SuggestionResult", "SupportingPaper", "result_record", "review_civic",
    "review_file", "suggest", "suggest_from",
]


def suggest(con: duckdb.DuckDBPyConnection, retriever, linker: QueryLinker, matcher: Matcher, schema: RelationSchema,
            values: Mapping[str, str], top_docs: int = DEFAULT_TOP_DOCS, mode: str = "hybrid",
            applied: Mapping[str, str] | None = None, active: ActiveScorer | None = None, limit: int = SHOWN,
            kind_filter: bool = True) -> SuggestionResult:
    """Suggestions for the missing slot of a partial relation: the served search's top ``top_docs`` documents,
    then :func:`suggest_from` (the CLI; the Curate page passes the ranking it has already drawn).

    Raises:
        SearchInputError: a typed slot that cannot be searched (named), as the search raises it.
    """
    started = time.perf_counter()

    def fetch(pmids):
        return {d.pmid: d for d in get_documents(con, list(pmids))}

    top_docs = max(1, min(int(top_docs), MAX_TOP_DOCS))
    result = search_relation(retriever, linker, matcher, StorePostings(con), fetch, schema, values,
                             SearchOptions(mode=mode, k=top_docs, applied=dict(applied or {})))
    ranks = {h.pmid: h.rank for h in result.hits}
    return suggest_from(con, matcher, schema, values, result.concepts, ranks, top_docs, active, limit,
                        notes=result.problems, started=started, kind_filter=kind_filter)


def review_civic(con: duckdb.DuckDBPyConnection, results: Sequence[SuggestionResult], new_only: bool = True) -> str:
    """The review list in CIViC's source-suggestion format, each row with the disease its abstract names most
    (:func:`curation.relations.review_list.review_civic`).

    Raises:
        CurationError: a relation of another schema than PO (CIViC's format has no place for it).
    """
    if any(r.schema != "PO" for r in results):
        return review_list.review_civic(results, {}, new_only)  # raises, naming the schemas
    rows = review_list.review_rows(results, new_only)
    return review_list.review_civic(results, main_diseases(con, sorted({str(r["pmid"]) for r in rows})), new_only)
