"""Entities in the app: which annotator serves, the concept index it fills, activating a recogniser.

The concept index is the store's ``annotations`` table (:mod:`curation.store.annotations`): each
document's gold mentions (source "gold") and what the app's :class:`~curation.entities.annotation.Annotator`
found in it, written once when the document is ingested (:func:`annotate_new`) or when a new
recogniser is activated (:func:`reannotate`), never when a page is viewed. Each batch of documents is
written in its own transaction: a batch that fails leaves the documents ingested, unannotated (the
Curate page then highlights them from the dictionaries in memory) and named in the report, and the
next ``reannotate`` picks them up, since they are still stale.

Which annotator: the recogniser (and linker) marked active in ``entity_models`` when there is one
and it loads, else the dictionary matcher alone, with a message saying so (:func:`current_annotator`).
The recogniser and linker modules are imported only when a model is loaded, so the app works without
them and without a trained model.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from curation import access, store
from curation.access import Action, Who
from curation.config import Settings
from curation.entities.annotation import Annotation, Annotator
from curation.entities.dictionaries import build_lexicon
from curation.entities.gold import gold_rows
from curation.entities.lexicon import Lexicon
from curation.entities.matching import Matcher
from curation.errors import CurationError
from curation.workflows.relation_scoring import ActiveScorer, active_scorer, pair_rows

MODEL_KINDS = ("recogniser", "linker")
NO_RECOGNISER = (
    "no recogniser trained: highlights come from dictionaries; train one with python -m curation train-recogniser"
)
BATCH = 200  # documents annotated and written per transaction

Progress = Callable[[int, int], None]  # (documents done, documents in all)


class EntityModelError(CurationError):
    """A recogniser or linker folder that cannot be activated, and what to do."""


@dataclass(frozen=True)
class CurrentAnnotator:
    """The annotator the app uses now, and a message for a person when it is not the active recogniser."""

    annotator: Annotator
    message: str = ""


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
                     f"dictionaries until `python -m curation reannotate` succeeds: " + "; ".join(self.errors))
        return text


# --- which annotator ----------------------------------------------------------------------------


def dictionary_matcher(con: duckdb.DuckDBPyConnection) -> Matcher:
    """The dictionary matcher over the store's lexicon (as the app builds it, without analysing ahead)."""
    return Matcher(build_lexicon(con))


def _resolve(path: str | Path, settings: Settings | None = None) -> Path:
    path = Path(path).expanduser()
    if not path.is_absolute() and settings is not None and not path.exists():
        path = settings.models_dir / path
    return path.resolve()


def load_entity_model(kind: str, path: str | Path, lexicon: Lexicon | None = None):
    """Load a recogniser or linker folder.

    Raises:
        EntityModelError: the folder is missing, malformed, from another version, or the module that
            loads it is not installed; the message names the folder and says what to do.
    """
    if kind not in MODEL_KINDS:
        raise EntityModelError(f"unknown entity model kind '{kind}'; use one of {', '.join(MODEL_KINDS)}")
    path = Path(path)
    if kind == "recogniser" and not path.is_dir():
        import spacy.util

        if spacy.util.is_package(path.name):  # an installed spaCy NER package (a scispaCy model)
            path = Path(spacy.util.get_package_path(path.name))
    if not path.is_dir():
        raise EntityModelError(f"{path}: no such folder; give the folder `python -m curation train-{kind}` wrote")
    try:
        if kind == "recogniser":
            from curation.entities.recogniser import load_recogniser

            return load_recogniser(path)
        from curation.entities.linking import load_linker

        if lexicon is None:
            raise EntityModelError(f"{path}: a linker needs the store's lexicon to load")
        return load_linker(path, lexicon)
    except EntityModelError:
        raise
    except ImportError as exc:
        raise EntityModelError(f"{path}: {kind}s cannot be loaded in this installation ({exc})") from None
    except CurationError as exc:
        raise EntityModelError(str(exc)) from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise EntityModelError(f"{path}: cannot be loaded as a {kind} ({type(exc).__name__}: {exc}); train it "
                               f"again with `python -m curation train-{kind}`") from None


def current_annotator(
    con: duckdb.DuckDBPyConnection, settings: Settings | None, matcher: Matcher, recogniser=None
) -> CurrentAnnotator:
    """The active recogniser and linker over ``matcher``, or the dictionaries alone with the reason.

    Never raises for a model that fails to load: the app keeps working with dictionaries, and the
    message says which folder failed and why. ``recogniser``: the active recogniser, already loaded
    (just activated), so it is not loaded a second time.
    """
    row = store.get_active_entity_model(con, "recogniser")
    if row is None:
        return CurrentAnnotator(Annotator(matcher), NO_RECOGNISER)
    if recogniser is None:
        try:
            recogniser = load_entity_model("recogniser", _resolve(row.path, settings))
        except EntityModelError as exc:
            return CurrentAnnotator(Annotator(matcher), f"the active recogniser could not be loaded ({exc}): "
                                                        "highlights come from dictionaries")
    linker, message = None, ""
    linker_row = store.get_active_entity_model(con, "linker")
    if linker_row is not None:
        try:
            linker = load_entity_model("linker", _resolve(linker_row.path, settings), matcher.lexicon)
        except EntityModelError as exc:
            message = f"the active linker could not be loaded ({exc}): recognised names are linked exactly only"
    return CurrentAnnotator(Annotator(matcher, recogniser=recogniser, linker=linker), message)


def active_models_key(con: duckdb.DuckDBPyConnection) -> tuple[str, str]:
    """(active recogniser path, active linker path), "" for none: what a cached annotator is keyed on."""
    rows = [store.get_active_entity_model(con, kind) for kind in MODEL_KINDS]
    return tuple(row.path if row is not None else "" for row in rows)  # type: ignore[return-value]


def annotator_note(con: duckdb.DuckDBPyConnection) -> str:
    """What highlights come from, for a page (reads the store only; loads nothing)."""
    row = store.get_active_entity_model(con, "recogniser")
    if row is None:
        return NO_RECOGNISER
    return f"highlights come from the stored annotations of recogniser {row.name} and the dictionaries"


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
    folder = _resolve(path, settings)
    model = load_entity_model(kind, folder, lexicon)
    name = str(getattr(model, "name", "") or folder.name)
    with store.transaction(con):
        store.insert_entity_model(con, kind, str(folder), name)
        store.set_active_entity_model(con, kind, str(folder))
    return ActivatedModel(kind, str(folder), name, model)


def deactivate_entity_model(con: duckdb.DuckDBPyConnection, kind: str, *, who: Who = "") -> None:
    """Make no model of ``kind`` active (the app goes back to dictionaries for recognition)."""
    access.require(con, who, Action.ACTIVATE)
    if kind not in MODEL_KINDS:
        raise EntityModelError(f"unknown entity model kind '{kind}'; use one of {', '.join(MODEL_KINDS)}")
    store.clear_active_entity_model(con, kind)


# --- the concept index --------------------------------------------------------------------------


def _rows(pmid: str, found: Sequence[Annotation], version: str) -> list[store.AnnotationRow]:
    return [store.AnnotationRow(pmid, a.start, a.end, a.text, a.type, a.concept_id, a.canonical, a.confidence,
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
            documents = store.get_documents(con, chunk, with_mentions=True)
            found = annotator.annotate([d.text for d in documents])
            per_doc = {d.pmid: gold_rows(d, annotator.matcher.lexicon) + _rows(d.pmid, spans, version)
                       for d, spans in zip(documents, found, strict=True)}
            rows = [row for d in documents for row in per_doc[d.pmid]]
            pairs = [p for d in documents for p in pair_rows(d, per_doc[d.pmid], relations)]
            with store.transaction(con):
                mentions += store.replace_annotations(con, version, {d.pmid: len(d.text) for d in documents}, rows)
                store.replace_relation_pairs(con, relations.version, [d.pmid for d in documents], pairs)
            annotated += len(documents)
        except Exception as exc:  # noqa: BLE001 - any failure of one batch is reported; the others go on
            failed.extend(chunk)
            reason = " ".join(str(exc).split())[:300] or type(exc).__name__
            errors.append(f"PMIDs {chunk[0]} to {chunk[-1]} ({len(chunk)}): {reason}")
        if progress is not None:
            progress(min(first + batch, len(pmids)), len(pmids))
    return AnnotationReport(version, annotated, mentions, tuple(failed), tuple(errors), round(time.time() - started, 2))


def annotate_new(
    con: duckdb.DuckDBPyConnection, annotator: Annotator, pmids: Sequence[str], progress: Progress | None = None
) -> AnnotationReport:
    """Annotate those of ``pmids`` that are stale for ``annotator`` (what an ingest calls)."""
    return annotate_documents(con, annotator, store.list_stale_documents(con, annotator.version, pmids), progress)


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
    return annotate_documents(con, annotator, store.list_stale_documents(con, annotator.version, None, stale_only),
                              progress)


def stored_annotations(con: duckdb.DuckDBPyConnection, pmids: Sequence[str]) -> dict[str, list[Annotation]]:
    """The concept index's annotations of these documents, in one query; unannotated documents are absent."""
    return {pmid: [Annotation(r.start, r.end, r.text, r.entity_type, r.concept_id, r.canonical, r.confidence,
                              r.source) for r in rows]
            for pmid, rows in store.list_annotations(con, pmids).items()}
