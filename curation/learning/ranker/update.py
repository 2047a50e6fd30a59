"""Update the ranker over the store: its KB and decisions → a ranker kept under the serving version's folder,
activated (and attached to the served engine at once) only when the gate passes.

The chain itself is :func:`curation.learning.ranker.build.update_ranker`; this module reads what it needs from the
store (KB records, decisions, documents, the evidence signals), searches as the served search does
(:class:`~curation.learning.served_fusion.ServedSearch` over the concept index), keeps the update
(:mod:`curation.ranking.history`) and activates it when its dev NDCG@10 gain's interval is above 0. Who may train is
the facade's check (:func:`curation.workflows.ranker_update.update_and_activate`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import duckdb

from curation.entities.matching import Matcher
from curation.entities.postings import StorePostings
from curation.entities.query import QueryLinker
from curation.errors import CurationError
from curation.learning.ranker.build import update_ranker
from curation.learning.served_fusion import ServedSearch
from curation.ranking.history import activate_update, ranker_home, save_update
from curation.ranking.signals import StoreSignals
from curation.ranking.stage import RANKER_FOLDER, attach
from curation.schemas import RelationSchema
from curation.store.corpus import get_documents, iter_documents
from curation.store.decisions import list_decisions
from curation.store.kb import list_kb_records
from curation.versions import catalog

__all__ = ["RankerOutcome", "serving_ranker_home", "update_from_store"]


@dataclass(frozen=True)
class RankerOutcome:
    """What one update did: the kept update's name, whether the gate activated it, the evidence in words."""

    name: str
    activated: bool
    verdict: str
    seconds: float


def serving_ranker_home(con: duckdb.DuckDBPyConnection, version: str, models_dir: Path, schema: RelationSchema
                        ) -> Path:
    """Where the serving version's rankers are kept: its folder, else (BM25 alone) beside the versions."""
    registered = catalog.get_version(con, version)
    return ranker_home(models_dir, registered.path if registered is not None else None, schema.name)


def update_from_store(con: duckdb.DuckDBPyConnection, engine, matcher: Matcher, linker: QueryLinker,
                      schema: RelationSchema, models_dir: Path) -> RankerOutcome:
    """Train a ranker on the store's KB and decisions, keep it, and activate it (attached to ``engine``) when the gate
    passes.

    Raises:
        CurationError: there is nothing to learn from.
    """
    clock = time.perf_counter()
    path = serving_ranker_home(con, getattr(engine, "version", ""), models_dir, schema)
    documents = {d.pmid: d for d in iter_documents(con)}

    def fetch(pmids) -> Mapping:
        return {d.pmid: d for d in get_documents(con, list(pmids))}

    search = ServedSearch(linker, matcher, StorePostings(con), fetch, schema)
    signals = StoreSignals(con, schema)
    try:
        update = update_ranker(schema, list_kb_records(con, schema.name), list_decisions(con, schema=schema.name),
                               documents, matcher, search, engine, signals)
    except ValueError as exc:
        raise CurationError(f"the ranker cannot be updated: {exc}; grade more results (complete and not relevant) "
                            "or add KB records") from None
    folder = save_update(path, update.model)
    if update.evidence.improved:
        activate_update(path, folder.name)
        attach(engine, path / RANKER_FOLDER, signals)  # the served search re-orders with it from the next search
    return RankerOutcome(folder.name, update.evidence.improved, update.evidence.verdict,
                         round(time.perf_counter() - clock, 1))
