"""The relation scorer: logistic regression over standardised pair features, kept as plain JSON (no pickle).

:class:`RelationScorer` gives the probability that a document relates a co-mentioned pair
(:mod:`curation.relations.features`); its decision threshold is chosen out of fold (:func:`best_threshold`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from curation.files import write_atomic
from curation.relations.direction import DirectionModel
from curation.relations.features import FEATURES
from curation.relations.pair_text import PairText
from curation.relations.pairs import RelationError

FORMAT_VERSION = 2  # 2: the pair text model's two features


@dataclass
class RelationScorer:
    """Logistic regression over standardised pair features, with the decision threshold chosen out of fold, the
    direction model trained with it (:mod:`curation.relations.direction`; None for a scorer without one) and the
    pair text model whose probability two of its features are (:mod:`curation.relations.pair_text`; None: those
    features are 0)."""

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    threshold: float = 0.5
    direction: DirectionModel | None = None
    text: PairText | None = None

    @classmethod
    def fit(cls, features: np.ndarray, labels: np.ndarray, c: float = 1.0, seed: int = 0) -> RelationScorer:
        """Train on ``features`` / ``labels``; the threshold maximises F1 over 5-fold out-of-fold predictions.

        Raises:
            RelationError: no positive or no negative pair.
        """
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import cross_val_predict
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        labels = np.asarray(labels)
        if len(set(labels.tolist())) < 2:
            raise RelationError("the training pairs need both related and unrelated pairs")
        model = make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=2000, class_weight="balanced",
                                                                   random_state=seed))
        oof = cross_val_predict(model, features, labels, cv=5, method="predict_proba")[:, 1]
        model.fit(features, labels)
        scaler, learner = model[0], model[1]
        scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
        return cls(scaler.mean_.astype(np.float64), scale.astype(np.float64), learner.coef_[0].astype(np.float64),
                   float(learner.intercept_[0]), best_threshold(labels, oof))

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """(n,) the probability that each pair is related."""
        z = ((np.asarray(features, dtype=np.float64) - self.mean) / self.scale) @ self.coef + self.intercept
        return 1.0 / (1.0 + np.exp(-z))

    def save(self, path: Path) -> Path:
        """Write the scorer as JSON (staged, then renamed: a reader never sees half a file)."""
        payload = {"format_version": FORMAT_VERSION, "features": list(FEATURES), "mean": self.mean.tolist(),
                   "scale": self.scale.tolist(), "coef": self.coef.tolist(), "intercept": self.intercept,
                   "threshold": self.threshold}
        return write_atomic(path, json.dumps(payload, indent=1))

    @classmethod
    def load(cls, path: Path) -> RelationScorer:
        """Raises: RelationError naming the file when it is missing, corrupted or for other features."""
        try:
            payload = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise RelationError(f"relation scorer {path} cannot be read ({exc})") from None
        if payload.get("format_version") != FORMAT_VERSION or payload.get("features") != list(FEATURES):
            raise RelationError(f"relation scorer {path} was made for other features; train it again")
        return cls(np.asarray(payload["mean"]), np.asarray(payload["scale"]), np.asarray(payload["coef"]),
                   float(payload["intercept"]), float(payload["threshold"]))


def best_threshold(labels: np.ndarray, scores: np.ndarray) -> float:
    """The score threshold with the best F1 on (labels, scores)."""
    order = np.argsort(-scores)
    labels, scores = np.asarray(labels)[order], np.asarray(scores)[order]
    tp = np.cumsum(labels)
    precision = tp / np.arange(1, len(labels) + 1)
    recall = tp / max(1, labels.sum())
    f1 = np.where(precision + recall > 0, 2 * precision * recall / np.maximum(precision + recall, 1e-12), 0.0)
    best = int(np.argmax(f1))
    return float(scores[best])
