"""The rule that decides whether a fuzzy link is applied, as the linkers read it at annotate time.

A wrong link applied silently is worse than none (a curator trusts what is highlighted), so a
fuzzy link is applied only when its score and its margin over the second concept clear
thresholds chosen on dev mentions for precision >= 0.98, and never when the name and the
matched name carry different numbers. The rule belongs to one scorer: thresholds chosen for the
TF-IDF scores of :class:`~curation.entities.linking.LexiconLinker` mean nothing for the combined
scores of a trained linker. Choosing it on dev is training: :mod:`curation.learning.linker.calibration`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

TARGET_PRECISION = 0.98
MIN_APPLIED = 20  # fewer dev links than this estimate precision too loosely to trust


@dataclass(frozen=True)
class Thresholds:
    """When a link of one kind is applied, chosen on dev (:func:`curation.learning.linker.calibration.calibrate`).

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
