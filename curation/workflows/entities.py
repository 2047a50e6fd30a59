"""Entities in the app: re-annotating the store, activating a recogniser or linker, normalising a typed name.

Filling the concept index (a document's annotations and its scored relation pairs, one transaction per batch) is
:mod:`curation.relations.concept_index`'s; :func:`reannotate` checks the role and hands it the stale documents.

Which annotator serves is assembled in :mod:`curation.entities.served_annotator`; its names are offered here
for the pages and the command line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

import duckdb

from curation import access
from curation.access import Action, Who
from curation.config import Settings
from curation.entities.annotation import Annotator
from curation.entities.lexicon import Lexicon
from curation.entities.served_annotator import (
    MODEL_KINDS,
    NO_RECOGNISER,
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
from curation.errors import CurationError
from curation.relations.concept_index import AnnotationReport, Progress, annotate_documents
from curation.store.annotations import (
    clear_active_entity_model,
    insert_entity_model,
    list_stale_documents,
    set_active_entity_model,
)
from curation.store.base import transaction

if TYPE_CHECKING:  # the normaliser loads when a name is normalised
    from curation.entities.normalise import Candidate

__all__ = [
    "MODEL_KINDS", "NO_RECOGNISER", "ActivatedModel", "CurrentAnnotator", "EntityModelError",
    "activate_entity_model", "active_linker", "active_models_key", "annotator_note", "current_annotator",
    "deactivate_entity_model", "dictionary_matcher", "load_entity_model", "normalise_name", "reannotate",
]


@dataclass(frozen=True)
class ActivatedModel:
    """A model that loaded and is now active; ``model`` is the loaded object (no second load needed)."""

    kind: str
    path: str
    name: str
    model: object


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


class _Listed(Protocol):
    active: bool
    created: str


T = TypeVar("T", bound=_Listed)


def trained_models(root: Path, active_path: str, read: Callable[[Path, bool], T],
                   what: str) -> tuple[T | None, list[T], list[str]]:
    """The trained model folders under ``root`` (``<name>.tmp`` staging folders skipped) for the Train page: each
    read with ``read(folder, is_active)``, newest first; the active one, also when it lives elsewhere (activated from
    the command line); and what could not be read, as problems naming it (``what``: "recogniser", "linker")."""
    active_at = str(Path(active_path).resolve()) if active_path else ""
    trained, problems = [], []
    for folder in sorted(root.iterdir()) if root.is_dir() else ():
        if not folder.is_dir() or folder.name.endswith(".tmp"):
            continue
        try:
            trained.append(read(folder.resolve(), str(folder.resolve()) == active_at))
        except CurationError as exc:
            problems.append(str(exc))
    active = next((t for t in trained if t.active), None)
    if active_at and active is None:
        try:
            active = read(Path(active_at), True)
        except CurationError as exc:
            problems.append(f"the active {what}: {exc}")
    trained.sort(key=lambda t: t.created, reverse=True)
    return active, trained, problems
