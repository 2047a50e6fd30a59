"""Ranker versions inside a model version's folder: every update kept, one served.

``<version>/rankers/<stamp>/`` holds each update's ranker (:class:`~curation.ranking.model.RankerModel`'s two files)
with its dev evidence in the manifest; ``<version>/ranker/`` is the one served (what
:func:`curation.versions.serving.with_ranker` attaches), a copy of the activated update with ``origin.txt`` naming
it. The encoder and its indexes are untouched: an update costs seconds and never re-encodes the corpus. A store that
BM25 alone serves (no model version built yet) keeps them in ``<models>/.rankers/<schema>/`` (:func:`ranker_home`; the
leading dot keeps the registry from reading it as a version).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from curation.files import staged_folder
from curation.ranking.model import RankerError, RankerModel
from curation.ranking.stage import RANKER_FOLDER

RANKERS_FOLDER = "rankers"
BM25_HOME = ".rankers"
ORIGIN_FILE = "origin.txt"


@dataclass(frozen=True)
class RankerVersion:
    """One kept update.

    Attributes:
        name: its folder name (the UTC time it was saved, sortable).
        path: its folder.
        model: the ranker with its manifest (evidence, changed queries, what it learned from).
        active: whether it is the one served.
    """

    name: str
    path: Path
    model: RankerModel
    active: bool


def ranker_home(models_dir: str | Path, version_path: str | Path | None, schema: str) -> Path:
    """Where a schema's rankers live: the serving version's folder, else (BM25 alone) ``<models>/.rankers/<schema>``."""
    return Path(version_path) if version_path is not None else Path(models_dir) / BM25_HOME / schema


def save_update(version_path: str | Path, model: RankerModel) -> Path:
    """Keep ``model`` as a new update of the version at ``version_path``; returns its folder (not yet served)."""
    name = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return model.save(Path(version_path) / RANKERS_FOLDER / name)


def served_origin(version_path: str | Path) -> str:
    """The name of the update the version serves ("" when it serves none, or one from before updates were kept)."""
    origin = Path(version_path) / RANKER_FOLDER / ORIGIN_FILE
    return origin.read_text(encoding="utf-8").strip() if origin.is_file() else ""


def activate_update(version_path: str | Path, name: str) -> Path:
    """Serve the kept update ``name``: copied into ``ranker/`` in one rename; returns the served folder.

    Raises:
        RankerError: no such update, or its files cannot be read.
    """
    source = Path(version_path) / RANKERS_FOLDER / name
    RankerModel.load(source)  # refuses a damaged update before anything served changes
    target = Path(version_path) / RANKER_FOLDER
    with staged_folder(target) as stage:
        for path in source.iterdir():
            shutil.copy2(path, stage / path.name)
        (stage / ORIGIN_FILE).write_text(name, encoding="utf-8")
    return target


def list_updates(version_path: str | Path) -> tuple[list[RankerVersion], list[str]]:
    """The kept updates, newest first, and one message per folder that cannot be read."""
    folder = Path(version_path) / RANKERS_FOLDER
    active = served_origin(version_path)
    out, problems = [], []
    for path in sorted(folder.iterdir(), reverse=True) if folder.is_dir() else ():
        if not path.is_dir() or path.name.endswith(".tmp"):
            continue
        try:
            out.append(RankerVersion(path.name, path, RankerModel.load(path), path.name == active))
        except RankerError as exc:
            problems.append(str(exc))
    return out, problems
