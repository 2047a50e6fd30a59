"""A trained ranker as plain files: LightGBM's own text model and a JSON manifest, never a pickle.

A ranker folder holds ``ranker.txt`` (``Booster.model_to_string()``) and ``ranker.json`` (:class:`RankerManifest`:
the feature columns in order, the candidate depth N, the library version, what it was trained on and its dev
evidence). :meth:`RankerModel.load` checks both against each other and against :data:`FEATURE_NAMES`, so a file
from another feature set or a damaged file is refused with a message that names the file and what to do.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from curation.errors import CurationError
from curation.ranking.features import FEATURE_NAMES

MODEL_FILE = "ranker.txt"
MANIFEST_FILE = "ranker.json"
FORMAT = 1


class RankerError(CurationError):
    """A ranker folder that cannot be used; the message names the file and what to do."""


@dataclass(frozen=True)
class RankerManifest:
    """What a ranker folder holds (``ranker.json``).

    Attributes:
        features: the model's columns, in order (a subset of :data:`FEATURE_NAMES`).
        depth: how many of the concept search's best hits it re-orders (N, chosen on dev).
        library: the LightGBM version that wrote ``ranker.txt``.
        params: the training parameters.
        trained_on: counts of what it learned from (queries, pairs, by source and gain).
        dev: its dev evidence (metric, means, interval), when measured.
        changed: the dev queries whose order it changed most, each with its documents' ranks before and after
            (:func:`curation.learning.ranker.build.changed_queries`).
        created: when it was written (UTC, ISO 8601).
        format: the folder layout's version.
    """

    features: tuple[str, ...]
    depth: int
    library: str
    params: dict = field(default_factory=dict)
    trained_on: dict = field(default_factory=dict)
    dev: dict = field(default_factory=dict)
    changed: list = field(default_factory=list)
    created: str = ""
    format: int = FORMAT


class RankerModel:
    """A LightGBM booster with its manifest: scores candidate rows (columns of :data:`FEATURE_NAMES`)."""

    def __init__(self, booster, manifest: RankerManifest) -> None:
        self.booster = booster
        self.manifest = manifest
        self._columns = [FEATURE_NAMES.index(name) for name in manifest.features]

    def score(self, rows: np.ndarray) -> np.ndarray:
        """One score per row of a full feature matrix (n, len(FEATURE_NAMES)); higher ranks first."""
        if len(rows) == 0:
            return np.zeros(0)
        return np.asarray(self.booster.predict(rows[:, self._columns]), dtype=np.float64)

    def gain_per_feature(self) -> dict[str, float]:
        """Each feature's share of the model's total split gain (LightGBM's ``importance_type="gain"``), largest
        first; features the trees never split on are left out."""
        gains = self.booster.feature_importance(importance_type="gain")
        total = float(sum(gains)) or 1.0
        pairs = sorted(zip(self.manifest.features, gains, strict=True), key=lambda p: -p[1])
        return {name: round(float(g) / total, 4) for name, g in pairs if g > 0}

    def save(self, folder: str | Path) -> Path:
        """Write ``ranker.txt`` and ``ranker.json`` into ``folder`` (created); returns the folder."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / MODEL_FILE).write_text(self.booster.model_to_string(), encoding="utf-8")
        manifest = asdict(self.manifest)
        manifest["created"] = manifest["created"] or datetime.now(UTC).isoformat(timespec="seconds")
        (folder / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> RankerModel:
        """Read a folder :meth:`save` wrote.

        Raises:
            RankerError: a file is missing, unreadable, of another format or feature set, or the model text
                is not a LightGBM model.
        """
        import lightgbm

        folder = Path(folder)
        model_path, manifest_path = folder / MODEL_FILE, folder / MANIFEST_FILE
        for path in (manifest_path, model_path):
            if not path.is_file():
                raise RankerError(f"{path} is missing: a ranker folder holds {MODEL_FILE} and {MANIFEST_FILE}; "
                                  "train the ranker again to write both")
        try:
            raw = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            where = f" (line {exc.lineno}, column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
            raise RankerError(f"{manifest_path} cannot be read{where}: {exc}; train the ranker again") from None
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            raise RankerError(f"{manifest_path} is not a format-{FORMAT} ranker manifest; train the ranker again")
        try:
            manifest = RankerManifest(**{**raw, "features": tuple(raw["features"])})
        except (KeyError, TypeError) as exc:
            raise RankerError(f"{manifest_path} lacks a field or has an unknown one ({exc}); "
                              "train the ranker again") from None
        unknown = [name for name in manifest.features if name not in FEATURE_NAMES]
        if unknown:
            raise RankerError(f"{manifest_path} names features this version does not compute: {', '.join(unknown)}; "
                              "train the ranker again with this version")
        try:
            booster = lightgbm.Booster(model_str=model_path.read_text(encoding="utf-8"))
        except (lightgbm.basic.LightGBMError, OSError, UnicodeDecodeError, ValueError) as exc:
            raise RankerError(f"{model_path} is not a LightGBM model LightGBM {lightgbm.__version__} can read: "
                              f"{exc}; train the ranker again") from None
        if booster.num_feature() != len(manifest.features):
            raise RankerError(f"{model_path} has {booster.num_feature()} features but {manifest_path} names "
                              f"{len(manifest.features)}; the two files come from different rankers: train again")
        return cls(booster, manifest)
