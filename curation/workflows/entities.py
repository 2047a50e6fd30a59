"""Entities in the app: the concept index the annotator fills, activating a recogniser or linker.

The concept index is the store's ``annotations`` table (:mod:`curation.store.annotations`): each
document's gold mentions (source "gold") and what the app's :class:`~curation.entities.annotation.Annotator`
found in it, written once when the document is ingested (:func:`annotate_new`) or when a new
recogniser is activated (:func:`reannotate`), never when a page is viewed. Each batch of documents is
written in its own transaction: a batch that fails leaves the documents ingested, unannotated (the
Curate page then highlights them from the dictionaries in memory) and named in the report, and the
next ``reannotate`` picks them up, since they are still stale.

Which annotator serves is assembled in :mod:`curation.entities.served_annotator`; its names are offered here
for the pages and the command line.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from curation import access
from curation.access import Action, Who
from curation.config import Settings
from curation.entities.annotation import Annotation, Annotator
from curation.entities.gold import gold_rows
from curation.entities.lexicon import Lexicon
from curation.entities.served_annotator import (
    MODEL_KINDS,
    NO_RECOGNISER,
    REANNOTATE_HINT,
    CurrentAnnotator,
    EntityModelError,
    active_linker,
    active_models_key,
    annotator_note,
    current_annotator,
    dictionary_matcher,
    load_entity_model,
    resolve_model_folder,
)
from curation.relations.active import ActiveScorer, active_scorer
from curation.relations.stored_pairs import pair_rows
from curation.store.annotations import (
    AnnotationRow,
    clear_active_entity_model,
    insert_entity_model,
    list_stale_documents,
    replace_annotations,
    set_active_entity_model,
    sort_concept_index,
)
from curation.store.base import transaction
from curation.store.corpus import get_documents
from curation.store.relations import replace_relation_pairs

if TYPE_CHECKING:  # the normaliser loads when a name is normalised
    from curation.entities.normalise import Candidate

__all__ = [
    "MODEL_KINDS", "NO_RECOGNISER", "ActivatedModel", "AnnotationReport", "CurrentAnnotator", "EntityModelError",
    "Progress", "activate_entity_model", "active_linker", "active_models_key", "annotate_documents", "annotate_new",
    "annotator_note", "current_annotator", "deactivate_entity_model", "dictionary_matcher", "load_entity_model",
    "normalise_name", "reannotate",
]

BATCH = 200  # documents annotated and written per transaction
#: A run that annotated this many documents rewrites the concept index in concept order after its last batch
#: (store.annotations.sort_concept_index): at 1M abstracts a concept's postings are then read from a few row groups.
SORT_AFTER_DOCUMENTS = 50_000

Progress = Callable[[int, int], None]  # (documents done, documents in all)


@dataclass(frozen=True)
class ActivatedModel:
    """A model that loaded and is now active; ``model`` is the loaded object (no second load needed)."""

    kind: str
    path: str
    name: str
    model: object


@dataclass(frozen=True)
class AnnotationReport:
    """What an annotation run wrote: documents, mentions, and the batches that failed (named)."""

    version: str
    annotated: int = 0
    mentions: int = 0
    failed: tuple[str, ...] = ()
    errors: tuple[str, ...] = field(default_factory=tuple)
    seconds: float = 0.0

    def summary(self) -> str:
        text = (f"{self.annotated:,} documents annotated ({self.mentions:,} mentions, {self.version}) "
                f"in {self.seconds:.1f} s")
        if self.failed:
            text += (f"; {len(self.failed):,} documents could not be annotated and are highlighted from the "
                     f"dictionaries until annotated ({REANNOTATE_HINT}): " + "; ".join(self.errors))
        return text


def activate_entity_model(
    con: duckdb.DuckDBPyConnection, kind: str, path: str | Path, lexicon: Lexicon | None = None,
    settings: Settings | None = None, *, who: Who = "",
) -> ActivatedModel:
    """Load a recogniser or linker folder and, when it loads, make it the active one of its kind.

    Documents are not re-annotated here: call :func:`reannotate` with the new annotator.

    Raises:
        EntityModelError: it does not load (missing, malformed, another version); the active model
            of that kind stays active and nothing is written.
    """
    access.require(con, who, Action.ACTIVATE)
    if kind not in MODEL_KINDS:
        raise EntityModelError(f"unknown entity model kind '{kind}'; use one of {', '.join(MODEL_KINDS)}")
    folder = resolve_model_folder(path, settings)
    model = load_entity_model(kind, folder, lexicon)
    name = str(getattr(model, "name", "") or folder.name)
    with transaction(con):
        insert_entity_model(con, kind, str(folder), name)
        set_active_entity_model(con, kind, str(folder))
    return ActivatedModel(kind, str(folder), name, model)


def deactivate_entity_model(con: duckdb.DuckDBPyConnection, kind: str, *, who: Who = "") -> None:
    """Make no model of ``kind`` active (the app goes back to dictionaries for recognition)."""
    access.require(con, who, Action.ACTIVATE)
    if kind not in MODEL_KINDS:
        raise EntityModelError(f"unknown entity model kind '{kind}'; use one of {', '.join(MODEL_KINDS)}")
    clear_active_entity_model(con, kind)


# --- the concept index --------------------------------------------------------------------------


def _rows(pmid: str, found: Sequence[Annotation], version: str) -> list[AnnotationRow]:
    return [AnnotationRow(pmid, a.start, a.end, a.text, a.type, a.concept_id, a.canonical, a.confidence,
                          a.source, version) for a in found]


def annotate_documents(
    con: duckdb.DuckDBPyConnection, annotator: Annotator, pmids: Sequence[str], progress: Progress | None = None,
    batch: int = BATCH, relations: ActiveScorer | None = None,
) -> AnnotationReport:
    """Annotate the given documents and store their annotations, one transaction per batch.

    Each document's co-mentioned concept pairs are scored by the relation scorer (``relations``; None: the
    store's active one) and stored in the same transaction. A batch that fails (the annotator raises, the
    write fails) is rolled back and named in the report; the other batches are kept. Decisions, KB records
    and gold mentions are never touched.
    """
    started = time.time()
    version = annotator.version
    relations = relations or active_scorer(con)
    pmids = list(dict.fromkeys(pmids))
    annotated = mentions = 0
    failed: list[str] = []
    errors: list[str] = []
    for first in range(0, len(pmids), batch):
        chunk = pmids[first : first + batch]
        try:
            documents = get_documents(con, chunk, with_mentions=True)
            found = annotator.annotate([d.text for d in documents])
            per_doc = {d.pmid: gold_rows(d, annotator.matcher.lexicon) + _rows(d.pmid, spans, version)
                       for d, spans in zip(documents, found, strict=True)}
            rows = [row for d in documents for row in per_doc[d.pmid]]
            pairs = [p for d in documents for p in pair_rows(d, per_doc[d.pmid], relations)]
            with transaction(con):
                mentions += replace_annotations(con, version, {d.pmid: len(d.text) for d in documents}, rows)
                replace_relation_pairs(con, relations.version, [d.pmid for d in documents], pairs)
            annotated += len(documents)
        except Exception as exc:  # noqa: BLE001 - any failure of one batch is reported; the others go on
            failed.extend(chunk)
            reason = " ".join(str(exc).split())[:300] or type(exc).__name__
            errors.append(f"PMIDs {chunk[0]} to {chunk[-1]} ({len(chunk)}): {reason}")
        if progress is not None:
            progress(min(first + batch, len(pmids)), len(pmids))
    if annotated >= SORT_AFTER_DOCUMENTS:
        with transaction(con):
            sort_concept_index(con)
    return AnnotationReport(version, annotated, mentions, tuple(failed), tuple(errors), round(time.time() - started, 2))


def annotate_new(
    con: duckdb.DuckDBPyConnection, annotator: Annotator, pmids: Sequence[str], progress: Progress | None = None
) -> AnnotationReport:
    """Annotate those of ``pmids`` that are stale for ``annotator`` (what an ingest calls)."""
    return annotate_documents(con, annotator, list_stale_documents(con, annotator.version, pmids), progress)


def reannotate(
    con: duckdb.DuckDBPyConnection, annotator: Annotator, stale_only: bool = True, progress: Progress | None = None,
    *, who: Who = "",
) -> AnnotationReport:
    """Annotate the store's documents with ``annotator``: the stale ones (default), or all.

    Stale: never annotated, annotated by another annotator version (a recogniser was activated),
    text or gold mentions changed since. Touches the concept index only: decisions, KB records,
    gold mentions and the worklist stay as they are.
    """
    access.require(con, who, Action.IMPORT)
    return annotate_documents(con, annotator, list_stale_documents(con, annotator.version, None, stale_only),
                              progress)


def normalise_name(con: duckdb.DuckDBPyConnection, text: str, kind: str | None = None, k: int = 5) -> list[Candidate]:
    """The ``k`` concepts a typed name may mean, best first, by the store's dictionaries
    (``python -m curation normalise``; :class:`curation.entities.normalise.Normaliser`'s candidates)."""
    from curation.entities.dictionaries import build_lexicon
    from curation.entities.normalise import Normaliser

    return Normaliser(build_lexicon(con)).normalise(text, kind=kind, k=k)
