"""Choosing a linker's w and its apply rule on dev mentions (the linker's calibration, a step of its training).

The rule itself (:class:`~curation.entities.link_calibration.Thresholds`) is read at annotate time by the linkers
in :mod:`curation.entities.linking`; here it is chosen: per kind, the loosest (min score, min margin) whose dev
precision reaches the target (0.98), and per class of exact names whether dev shows them safe.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol

import numpy as np

from curation.entities.link_calibration import (
    MIN_APPLIED,
    TARGET_PRECISION,
    DevName,
    Thresholds,
    exact_class,
    numbers_agree,
)


class Calibrated(Protocol):
    """What :func:`calibrate` needs of a linker (``linking.LexiconLinker`` and its subclass)."""

    lexicon: Any
    scorer: Any
    mode: str


def calibrate(linker: Calibrated, dev: Sequence[DevName], target: float = TARGET_PRECISION,
              weights: Sequence[float] | None = None) -> tuple[float, dict[str, Thresholds], dict]:
    """Choose w (best dev accuracy@1) and, per kind, the loosest thresholds keeping dev precision >= ``target``.

    Only dev names that are not exact, unambiguous dictionary names count: those are applied
    at 1.0 whatever the thresholds. A dev name whose concept the lexicon lacks stays in: a link
    to it is always wrong, which is what the thresholds must learn to refuse. Thresholds are per
    kind because the kinds differ in how often a confident link is wrong (gene ids of other
    species, concepts the dictionary lacks); one rule for all would be set by the worst kind.
    Returns (w, kind -> thresholds, dev figures); ``linker`` is left as it was.
    """
    fuzzy = [d for d in dev if len({c for _, c in linker.lexicon.lookup(d.text, d.kind)}) != 1]
    weights = list(weights) if weights is not None else ([0.0] if linker.scorer.encoder is None
                                                           else [0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    by_kind: dict[str, list[DevName]] = {}
    for d in fuzzy:
        by_kind.setdefault(d.kind, []).append(d)
    embedded = {kind: linker.scorer.encode([d.text for d in names]) if linker.scorer.encoder is not None else None
                for kind, names in by_kind.items()}
    best: tuple[float, float, dict] | None = None
    for w in weights:
        rows: dict[str, list] = {}
        for kind, names in by_kind.items():
            ranked = linker.scorer.rank([d.text for d in names], kind, k=2, mode=linker.mode, weight=w,
                                        query_embeddings=embedded[kind])
            for d, found in zip(names, ranked, strict=True):
                if not found:
                    continue
                margin = found[0].score - (found[1].score if len(found) > 1 else 0.0)
                guard = numbers_agree(d.text, found[0].name)
                rows.setdefault(kind, []).append((found[0].score, margin, guard, found[0].concept_id == d.concept_id))
        accuracy = sum(r[3] for each in rows.values() for r in each) / max(1, len(fuzzy))
        if best is None or accuracy > best[1]:
            best = (w, accuracy, rows)
    w, accuracy, rows = best
    thresholds = {kind: choose_thresholds(rows.get(kind, []), len(names), target) for kind, names in by_kind.items()}
    exact = [d for d in dev if len({c for _, c in linker.lexicon.lookup(d.text, d.kind)}) == 1]
    for kind in sorted({d.kind for d in exact}):
        tally: dict[str, list[int]] = {}  # class -> [correct, total]
        for d in exact:
            if d.kind == kind:
                counts = tally.setdefault(exact_class(d.text, linker.lexicon.weight(d.text, kind)), [0, 0])
                counts[0] += linker.lexicon.lookup(d.text, kind)[0][1] == d.concept_id
                counts[1] += 1
        measured = {c: [round(right / total, 4), total] for c, (right, total) in sorted(tally.items())}
        thresholds[kind] = replace(thresholds.get(kind, Thresholds()), target=target, exact=measured)
    figures = {"dev_names": len(dev), "dev_fuzzy": len(fuzzy), "dev_fuzzy_acc1": round(accuracy, 4),
               "weights_tried": weights}
    return w, thresholds, figures


def choose_thresholds(rows: Sequence[tuple[float, float, bool, bool]], total: int,
                      target: float = TARGET_PRECISION) -> Thresholds:
    """The (min score, min margin) applying the most rows at precision >= ``target``.

    Args:
        rows: (score, margin, numbers agree, correct) per dev name.
        total: dev names considered (for the record).
    """
    best = Thresholds(dev_total=total)
    if not rows:
        return best
    scores = np.array([r[0] for r in rows])
    margins = np.array([r[1] for r in rows])
    allowed = np.array([r[2] for r in rows])
    correct = np.array([r[3] for r in rows])
    for min_margin in (0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3):
        for min_score in sorted(set(np.round(scores, 3))):
            mask = (scores >= min_score) & (margins >= min_margin) & allowed
            applied = int(mask.sum())
            if applied < MIN_APPLIED or applied <= best.dev_applied:
                continue
            precision = float(correct[mask].mean())
            if precision >= target:
                best = Thresholds(float(min_score), min_margin, round(precision, 4), applied, total)
    return best
