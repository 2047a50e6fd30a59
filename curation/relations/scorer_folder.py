"""A relation scorer's folder: ``scorer.json`` (the logistic regression as JSON, no pickle), ``direction.json`` (the
direction model trained with it, when it was), ``text.json`` (its pair text model, when it has one) and
``manifest.json`` (what it was trained on, its Dev pair F1),
under ``<models>/relations/<name>``; written whole, read back checked.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from curation.relations.direction import DIRECTION_FILE, DirectionModel
from curation.relations.pair_text import TEXT_FILE, PairText
from curation.relations.pairs import RelationError
from curation.relations.scorer import RelationScorer

SCORERS = "relations"  # the models folder's sub-folder of relation scorers
SCORER_FILE = "scorer.json"
MANIFEST_FILE = "manifest.json"


def new_scorer_name() -> str:
    """A new scorer's folder name: ``relations-`` and the time in UTC."""
    return "relations-" + datetime.now(UTC).strftime("%Y%m%d-%H%M%S")


def write_scorer(folder: Path, scorer: RelationScorer, manifest: dict) -> Path:
    """Write a scorer folder whole: staged as ``<name>.tmp`` (what the app removes when a worker died), renamed
    when complete."""
    if folder.exists():
        raise RelationError(f"{folder} already exists; give another name")
    tmp = folder.with_name(folder.name + ".tmp")
    tmp.mkdir(parents=True, exist_ok=False)
    scorer.save(tmp / SCORER_FILE)
    if scorer.direction is not None:
        scorer.direction.save(tmp / DIRECTION_FILE)
    if scorer.text is not None:
        scorer.text.save(tmp / TEXT_FILE)
    (tmp / MANIFEST_FILE).write_text(json.dumps(manifest, indent=1))
    tmp.replace(folder)
    return folder


def load_scorer_folder(folder: str | Path) -> tuple[RelationScorer, dict]:
    """The scorer and manifest of a folder ``train-relations`` wrote.

    Raises:
        RelationError: the folder or a file is missing, unreadable or for other features (named).
    """
    folder = Path(folder)
    if not (folder / SCORER_FILE).is_file():
        raise RelationError(f"{folder}: no {SCORER_FILE}; give a folder `python -m curation train-relations` "
                                "wrote")
    scorer = RelationScorer.load(folder / SCORER_FILE)
    if (folder / DIRECTION_FILE).is_file():
        scorer = replace(scorer, direction=DirectionModel.load(folder / DIRECTION_FILE))
    if (folder / TEXT_FILE).is_file():
        scorer = replace(scorer, text=PairText.load(folder / TEXT_FILE))
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text()) if (folder / MANIFEST_FILE).is_file() else {}
    except ValueError as exc:
        raise RelationError(f"{folder / MANIFEST_FILE}: not JSON ({exc})") from None
    return scorer, manifest
