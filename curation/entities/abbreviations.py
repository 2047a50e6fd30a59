"""Abbreviations an abstract defines: "chronic myeloid leukaemia (CML)", "5-fluorouracil (5-FU)".

scispaCy's ``AbbreviationDetector`` (Schwartz & Hearst 2003) finds the definitions and every
later use of the short form. Two gaps are filled here: short forms starting with a digit,
which the detector skips ("5-FU", "7-NI"), and long forms that start inside a hyphenated
word, which its character-to-token mapping cuts ("7-nitroindazole" came back as
"nitroindazole").
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Abbreviation(NamedTuple):
    """One defined short form: its long form's offsets and every use of the short form.

    Attributes:
        short: the short form ("CML").
        long_start, long_end: character offsets of the long form in the text.
        occurrences: (start, end) of every use of the short form, the definition included.
    """

    short: str
    long_start: int
    long_end: int
    occurrences: tuple[tuple[int, int], ...]


def find_abbreviations(doc, text: str, digits: bool = True) -> tuple[Abbreviation, ...]:
    """The abbreviations of a spaCy doc processed by scispaCy's ``abbreviation_detector``.

    Args:
        doc: the processed doc (without the detector in the pipeline, only digit-initial
            short forms are found).
        text: the doc's text (offsets refer to it).
        digits: also look for short forms that start with a digit.
    """
    found: dict[str, Abbreviation] = {}
    for short in doc._.abbreviations if doc.has_extension("abbreviations") else []:
        long = short._.long_form
        if long is None:
            continue
        old = found.get(short.text)
        occurrences = ((short.start_char, short.end_char),) + (old.occurrences if old else ())
        found[short.text] = Abbreviation(short.text, _word_start(text, long.start_char), long.end_char, occurrences)
    if digits:
        for extra in _digit_abbreviations(doc, text):
            found.setdefault(extra.short, extra)
    return tuple(found.values())


def covers(start: int, end: int, abbreviation: Abbreviation) -> bool:
    """Whether the span (start, end) is the long form of an abbreviation: it ends where the
    long form ends and spans most of it ("5-fluorouracil (5-FU)", not "cells (5-FU)")."""
    long_len = abbreviation.long_end - abbreviation.long_start
    overlap = min(end, abbreviation.long_end) - max(start, abbreviation.long_start)
    return abs(end - abbreviation.long_end) <= 1 and overlap >= 0.6 * long_len


_DIGIT_SHORT = re.compile(r"\d{1,2}-?[A-Za-z][A-Za-z0-9-]{0,8}")


def _digit_abbreviations(doc, text: str) -> list[Abbreviation]:
    """Abbreviations that start with a digit ("5-fluorouracil (5-FU)", "7-nitroindazole (7-NI)").

    scispaCy's detector requires the short form to start with a letter; this applies its
    Schwartz & Hearst long-form search to the parenthesised short forms it skipped.
    """
    from scispacy.abbreviation import find_abbreviation

    out = []
    for i, token in enumerate(doc):
        if token.text != "(" or i == 0:
            continue
        close = next((j for j in range(i + 1, min(i + 5, len(doc))) if doc[j].text == ")"), None)
        if close is None or close == i + 1:
            continue
        short = doc[i + 1 : close]
        if not _DIGIT_SHORT.fullmatch(short.text):
            continue
        max_words = min(len(short.text) + 5, len(short.text) * 2)
        _, long = find_abbreviation(doc[max(i - max_words, 0) : i], short)
        if long is None or not len(long):
            continue
        uses = re.finditer(rf"(?<![A-Za-z0-9-]){re.escape(short.text)}(?![A-Za-z0-9])", text)
        occurrences = tuple((m.start(), m.end()) for m in uses)
        out.append(Abbreviation(short.text, _word_start(text, long.start_char), long.end_char, occurrences))
    return out


def _word_start(text: str, start: int) -> int:
    """Move a long form's start back to the start of its word: scispaCy maps characters to
    tokens as if tokens were space-separated, so "7-nitroindazole" comes back as
    "nitroindazole" and "(R)-alpha-methylhistamine" as "R)-alpha-methylhistamine"."""
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    return start
