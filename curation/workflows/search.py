"""The ``search``, ``suggest`` and ``screen`` commands' side of the facade: the relations asked for (checked
against the store's schemas and dictionaries by :mod:`curation.retrieval.search_request`, passed on here for the
command line), the store opened read-only once it is known to be recent enough, and :class:`Searcher`, what the
Curate page keeps alive, loaded once for every relation searched.

The ranking is the page's: the same :func:`curation.retrieval.relation_search.search_relation`, the same served
retriever (the schema's active version), the same query linker and the same concept index. The search stack
loads when a search runs, not when the command line starts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from curation.config import load_settings
from curation.entities.query import QueryConcept
from curation.retrieval.search_request import DEFAULT_TOP as DEFAULT_TOP
from curation.retrieval.search_request import MAX_TOP as MAX_TOP
from curation.retrieval.search_request import SearchRequest as SearchRequest
from curation.retrieval.search_request import Where as Where
from curation.retrieval.search_request import check_applied as check_applied
from curation.retrieval.search_request import resolve as resolve
from curation.review.provenance import hit_provenance
from curation.schemas import RelationSchema
from curation.store.corpus import get_documents
from curation.store.opening import open_read_only_from

if TYPE_CHECKING:
    from curation.retrieval.relation_search import RelationSearch

CONCEPT_INDEX_MIGRATION = 4  # the store's schema version that added the concept index (annotations)
RELATION_PAIRS_MIGRATION = 9  # the store's schema version that added relation pairs
# Not "no abstract mentions them": a name too short to look up in the text may be written somewhere unlinked.
NO_HITS = ("no abstract was found for any of the concepts (by the concept index or the names' text), so nothing "
           "is ranked; the notes above say what was checked for each")


# --- the store ---------------------------------------------------------------------------------------


def open_for_search(db: Path) -> duckdb.DuckDBPyConnection:
    """The store at ``db``, read-only, once it is known to hold a concept index (``search``, ``screen``).

    Raises:
        CurationError: no store there, not a store, or one from before the concept index.
    """
    return open_read_only_from(db, CONCEPT_INDEX_MIGRATION, (
        f"{db} predates the concept index; run any writing command on it once (e.g. "
        f"`python -m curation reannotate --db {db}`) or open it in the app, then search"))


def open_for_suggest(db: Path) -> duckdb.DuckDBPyConnection:
    """The store at ``db``, read-only, once it is known to hold relation scores (``suggest``).

    Raises:
        CurationError: no store there, not a store, or one from before relation scores.
    """
    return open_read_only_from(db, RELATION_PAIRS_MIGRATION, (
        f"{db} predates relation scores; run `python -m curation rescore --db {db}` once (it "
        "upgrades the store and scores its documents), then ask for suggestions"))


# --- searching ---------------------------------------------------------------------------------------


class Searcher:
    """What the Curate page keeps alive, loaded once for every relation searched."""

    def __init__(self, con) -> None:
        from curation.entities.postings import StorePostings
        from curation.retrieval.result_rows import default_linker
        from curation.workflows.entities import active_linker, dictionary_matcher
        from curation.workflows.serving import build_normaliser

        self.con = con
        self.settings = load_settings()
        # The app's, without analysing the corpus ahead (same matches); kept between runs beside the app's copy. The
        # dictionaries (~10^6 objects) live as long as this process: frozen out of the collector's passes.
        self.matcher = dictionary_matcher(con, self.settings.cache_dir / "lexicon", freeze=True)
        # A search reads the stored annotations: of the annotator it needs the linker only, not the recogniser.
        linker, message = active_linker(con, self.settings, self.matcher)
        self.notes = [message] if message else []
        self.linker = default_linker(con, self.matcher, build_normaliser(self.matcher), linker)
        self.source = StorePostings(con)
        self._engines: dict[object, tuple[object, str]] = {}

    def engine(self, schema: RelationSchema):
        """The served retriever of ``schema`` and why its active version is not serving ("" when it is)."""
        from curation.workflows.serving import open_served, serving_key, serving_problem

        key = serving_key(self.con, schema.name)
        if key not in self._engines:
            engine = open_served(self.con, self.settings.models_dir, key, cache_dir=self.settings.cache_dir)
            self._engines[key] = (engine, serving_problem(self.con, schema.name, engine.version))
        return self._engines[key]

    def documents(self, pmids: Sequence[str]) -> dict:
        return {d.pmid: d for d in get_documents(self.con, list(pmids))}

    def search(self, schema: RelationSchema, request: SearchRequest, mode: str, rm3: bool) -> dict[str, Any]:
        from curation.retrieval.relation_search import SearchOptions, search_relation

        engine, problem = self.engine(schema)
        options = SearchOptions(mode=mode, k=request.top, rm3=rm3, applied=dict(request.applied))
        result = search_relation(engine, self.linker, self.matcher, self.source, self.documents, schema,
                                 request.values, options)
        titles = {pmid: d.title for pmid, d in self.documents([h.pmid for h in result.hits]).items()}
        return result_record(request, result, titles, [*self.notes, *([problem] if problem else [])])


def result_record(request: SearchRequest, result: RelationSearch, titles: Mapping[str, str],
                  notes: Sequence[str] = ()) -> dict[str, Any]:
    """One searched relation as JSON-ready data: the linked concepts and the hits with their provenance."""
    record: dict[str, Any] = {}
    if request.line is not None:
        record["line"] = request.line
    if request.id is not None:
        record["id"] = request.id
    record.update({
        "schema": request.schema, "entities": dict(request.values), "query": result.query,
        "mode": result.mode, "version": result.version,
        "concepts": [_concept(c) for c in result.concepts],
        "groups": dict(result.groups),
        "per_concept": {c.slot: n for c, n in zip(result.concepts, result.per_concept, strict=False)},
        "hits": [{"rank": h.rank, "pmid": h.pmid, "title": titles.get(h.pmid, ""), "score": float(h.score),
                  "bm25": _number(h.bm25), "dense": _number(h.dense), **hit_provenance(h)} for h in result.hits],
        "problems": list(result.problems),
        "notes": list(notes),
        "message": "" if result.hits else NO_HITS,
    })
    return record


def _number(value: float | None) -> float | None:
    return None if value is None else float(value)


def _concept(c: QueryConcept) -> dict[str, Any]:
    return {
        "slot": c.slot, "typed": c.typed, "kind": c.kind, "status": c.status, "canonical": c.canonical,
        "ids": list(c.concept_ids), "confidence": round(float(c.confidence), 4), "how": c.how, "note": c.note,
        "forms": list(c.forms),
        "alternatives": [{"id": a.concept_id, "canonical": a.canonical, "score": round(float(a.score), 4),
                          "how": a.how} for a in c.alternatives],
    }
