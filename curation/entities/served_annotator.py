"""Which annotator serves: the active recogniser and linker over the dictionary matcher, or the dictionaries alone.

The recogniser and linker marked active in ``entity_models`` (:mod:`curation.store.annotations`) are loaded over
the matcher when they load; otherwise the dictionary matcher serves alone, with a message saying why
(:func:`current_annotator`). The recogniser and linker modules are imported only when a model is loaded, so the
app works without them and without a trained model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from curation.config import Settings
from curation.entities.annotation import Annotator
from curation.entities.lexicon import Lexicon
from curation.entities.matcher_cache import load_matcher
from curation.entities.matching import Matcher
from curation.errors import CurationError
from curation.store.annotations import get_active_entity_model

MODEL_KINDS = ("recogniser", "linker")
NO_RECOGNISER = (
    "no recogniser trained: highlights come from dictionaries until one is active (loading the sample activates the "
    "shipped one; Train & evaluate trains one on your data)"
)

#: How a curator has the abstracts annotated again, in the app first (the activation job annotates every abstract)
REANNOTATE_HINT = ("Train & evaluate → Entity recogniser → Activate annotates them again (or `python -m curation "
                   "reannotate` while the app is stopped)")


class EntityModelError(CurationError):
    """A recogniser or linker folder that cannot be activated, and what to do."""


@dataclass(frozen=True)
class CurrentAnnotator:
    """The annotator the app uses now, and a message for a person when it is not the active recogniser."""

    annotator: Annotator
    message: str = ""


def dictionary_matcher(con: duckdb.DuckDBPyConnection, cache_dir: Path | None = None, freeze: bool = False) -> Matcher:
    """The dictionary matcher over the store's lexicon (as the app builds it, without analysing ahead).

    ``cache_dir``: where it is kept between processes, read from there when kept for the store as it is
    (:func:`~curation.entities.matcher_cache.load_matcher`, which says what ``freeze`` does); None: built from the
    store.
    """
    return load_matcher(con, cache_dir, freeze=freeze)


def resolve_model_folder(path: str | Path, settings: Settings | None = None) -> Path:
    """A model folder as given, or under ``settings.models_dir`` when relative and not found here; absolute."""
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
    row = get_active_entity_model(con, "recogniser")
    if row is None:
        return CurrentAnnotator(Annotator(matcher), NO_RECOGNISER)
    if recogniser is None:
        try:
            recogniser = load_entity_model("recogniser", resolve_model_folder(row.path, settings))
        except EntityModelError as exc:
            return CurrentAnnotator(Annotator(matcher), f"the active recogniser could not be loaded ({exc}): "
                                                        "highlights come from dictionaries")
    linker, message = active_linker(con, settings, matcher)
    return CurrentAnnotator(Annotator(matcher, recogniser=recogniser, linker=linker), message)


def active_linker(con: duckdb.DuckDBPyConnection, settings: Settings | None, matcher: Matcher) -> tuple[object, str]:
    """The active linker over ``matcher``'s lexicon (None when none is active or it fails to load) and why it is
    not used ("" when it is): what a search needs of the annotator, without loading the recogniser."""
    row = get_active_entity_model(con, "linker")
    if row is None:
        return None, ""
    try:
        return load_entity_model("linker", resolve_model_folder(row.path, settings), matcher.lexicon), ""
    except EntityModelError as exc:
        return None, f"the active linker could not be loaded ({exc}): recognised names are linked exactly only"


def active_models_key(con: duckdb.DuckDBPyConnection) -> tuple[str, str]:
    """(active recogniser path, active linker path), "" for none: what a cached annotator is keyed on."""
    rows = [get_active_entity_model(con, kind) for kind in MODEL_KINDS]
    return tuple(row.path if row is not None else "" for row in rows)  # type: ignore[return-value]


def annotator_note(con: duckdb.DuckDBPyConnection) -> str:
    """What highlights come from, for a page (reads the store only; loads nothing)."""
    row = get_active_entity_model(con, "recogniser")
    if row is None:
        return NO_RECOGNISER
    return f"highlights come from the stored annotations of recogniser {row.name} and the dictionaries"
