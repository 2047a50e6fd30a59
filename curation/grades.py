"""The grades a curator gives a document for a partial relation: one definition for the whole package.

A :class:`Grade` is a ``StrEnum``: its value is the string the store keeps (``decisions.grade``)
and compares equal to it, so grades read back from the store need no conversion.
"""

from __future__ import annotations

from enum import StrEnum


class Grade(StrEnum):
    """A curator's judgement of one document for one partial relation (value: as stored)."""

    COMPLETE = "complete"
    PARTIAL = "partial"
    NOT_RELEVANT = "not_relevant"


# Best first: the order the store validates and lists them in, the pages show them in, and a
# document's best grade is taken in.
GRADES: tuple[Grade, ...] = (Grade.COMPLETE, Grade.PARTIAL, Grade.NOT_RELEVANT)
# Worst first: a grade's position is its ordinal code (not_relevant 0 < partial 1 < complete 2).
ORDINAL_GRADES: tuple[Grade, ...] = tuple(reversed(GRADES))
# Grades that say the document is evidence for the relation (complete or partial).
RELEVANT_GRADES: tuple[Grade, ...] = (Grade.COMPLETE, Grade.PARTIAL)
# What a person reads for each grade (buttons, toasts, lists of who said what).
GRADE_LABELS: dict[Grade, str] = {
    Grade.COMPLETE: "Complete evidence",
    Grade.PARTIAL: "Partial evidence",
    Grade.NOT_RELEVANT: "Not relevant",
}
