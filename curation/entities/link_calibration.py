"""The rule that decides whether a fuzzy link is applied, and choosing it on dev.

A wrong link applied silently is worse than none (a curator trusts what is highlighted), so a
fuzzy link is applied only when its score and its margin over the second concept clear
thresholds chosen on dev mentions for precision >= 0.98, and never when the name and the
matched name carry different numbers. The rule belongs to one scorer: thresholds chosen for the
TF-IDF scores of :class:`~curation.entities.linking.LexiconLinker` mean nothing for the combined
scores of a trained linker.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np


class Calibrated(Protocol):
    """What :func:`calibrate` needs of a linker (``linking.LexiconLinker`` and its subclass)."""

    lexicon: Any
    scorer: Any
    mode: str

TARGET_PRECISION = 0.98
MIN_APPLIED = 20  # fewer dev links than this estimate precision too loosely to trust


@dataclass(frozen=True)
class Thresholds:
    """When a link of one kind is applied, chosen on dev (see :func:`calibrate`).

    Exact, unambiguous names are applied unless calibration measured their class below target
    on dev. A class is short or long (:func:`is_short`: an abbreviation means what its own
    abstract defines) times the name's support in the dictionary (how many source records gave
    it: 1, 2, 3-5, 6+). Corpus names seen once are annotators' one-off choices ("hemorrhagic"),
    names seen often are settled. A refused exact link keeps its class's dev precision as its
    confidence.

    Attributes:
        min_score: a fuzzy link's top combined score must reach this.
        min_margin: and exceed the second concept's by this much.
        dev_precision: precision of the fuzzy links the rule applied on dev.
        dev_applied: how many dev names it applied, of ``dev_total`` not named exactly.
        target: the precision a class of exact names must have shown on dev.
        exact: class -> [dev precision, dev mentions] of exact unambiguous names; empty when not
            calibrated (then every exact name is applied).
    """

    min_score: float = 1.01  # the default applies no fuzzy link
    min_margin: float = 0.0
    dev_precision: float = 0.0
    dev_applied: int = 0
    dev_total: int = 0
    target: float = TARGET_PRECISION
    exact: dict = field(default_factory=dict)

    def allows(self, score: float, margin: float) -> bool:
        return score >= self.min_score and margin >= self.min_margin

    def exact_rule(self, name: str, support: int) -> tuple[bool, float]:
        """(apply?, confidence) for an exact, unambiguous dictionary name with this support."""
        if not self.exact:
            return True, 1.0
        precision, count = self.exact.get(exact_class(name, support), (0.0, 0))
        if count >= MIN_APPLIED and precision >= self.target:
            return True, 1.0
        return False, float(precision)


def is_short(name: str) -> bool:
    """Four letters or digits at most: abbreviation-like, so its meaning is local to a text."""
    return len(re.sub(r"[^0-9A-Za-z]", "", name)) <= 4


def exact_class(name: str, support: int) -> str:
    """"short-1", "long-6+", ...: the class of an exact name for :attr:`Thresholds.exact`."""
    bucket = "1" if support <= 1 else "2" if support == 2 else "3-5" if support <= 5 else "6+"
    return f"{'short' if is_short(name) else 'long'}-{bucket}"


def numbers_agree(text: str, name: str) -> bool:
    """False when both strings carry digit runs and they differ ("PLX4720" vs "PLX4032").

    A code name or a numbered family member ("IL-6", "CDK4") one edit from another is a
    different concept, however close the strings are; a name without digits ("T-DM1" against
    "trastuzumab emtansine") is left to the scores.
    """
    a, b = re.findall(r"\d+", text), re.findall(r"\d+", name)
    return not (a and b) or a == b


@dataclass(frozen=True)
class DevName:
    """A dev mention to calibrate on: its text, kind and gold concept id."""

    text: str
    kind: str
    concept_id: str


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
