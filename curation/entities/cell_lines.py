"""Cell-line names in a text, found by their shape and their context, so no other kind claims them.

A cell line's name is a laboratory code ("MDA-MB-231", "HCT116", "NCI-H1975", "SH-SY5Y"), and a dictionary
finds other names inside it: "MDA" is a synonym of tenamfetamine in DrugBank, so the breast-cancer line
MDA-MB-231 became a chemical and a treatment suggestion. No cell-line vocabulary is installed, so the rule
is a pattern tested on BioRED's CellLine mentions (tests/curation/entities/test_cell_lines.py):

* a *code*: one word of letters and digits, hyphens allowed, with at least one digit and one capital ("A549"),
  or of mixed case with two capitals ("HeLa", "LNCaP"), and no run of four or more lower-case letters
  ("HER2-positive", "EGFR-mutant" are not codes);
* said of cells: the code, or the last of a list of codes ("MCF-7, T47D and MDA-MB-231"), is followed by
  "cells", "cell line(s)", "cell model(s)", "xenograft(s)", "sublines" or "clones", directly or after up to
  three describing words ("MDA-MB-231 breast cancer cells"; a word ending in -ed or -ing, a preposition or a word of
  expression breaks it: "PLX4720 treated cells" is a drug, "CCR2 positive cells" a gene); or a list of codes
  follows "cell line(s)", "cell(s)" ("the cell lines A549 and H1975", "cells (A549, H1975)", "lung cancer
  cell H446"); or one code of the list has a cell line's own shape, two parts of letters then one with a digit
  ("MDA-MB-231", "SK-BR-3", "SK-MEL-28"), which says so without context.

The matcher (:meth:`curation.entities.matching.Matcher.find_all`) settles overlaps with these spans as the
least trusted source: a longer cell-line span takes the names inside it ("MDA" in "MDA-MB-231"), while a name
the dictionaries or notation rules give the whole word keeps it ("CD4 cells" stays a gene, "V600E" a variant).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from curation.entities.hits import Hit

KIND = "cellline"  # the recogniser's label for the kind (CELLLINE), lower-cased like every kind
_CODE = re.compile(r"(?<![\w./+-])[A-Z0-9][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*(?![\w/+-])")
_LONG_LOWER = re.compile(r"[a-z]{4,}")
# Three or more parts, two of letters first and a digit in the third ("MDA-MB-231", "SK-MEL-28", "NCI-H1975" is
# two): a shape few other names take, so it needs no context.
_LINE_SHAPE = re.compile(r"[A-Z][A-Za-z]*-[A-Z][A-Za-z]*-[A-Za-z]*\d[A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")
_PLURAL = re.compile(r"(?:^|-)[A-Z]+s$")  # "PBMCs", "HSCs": cell types, not lines
# Between two codes of one list: a comma (and/or after it), "and", "or".
_SEPARATOR = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+")
_CELLS = r"(?:cells|cell\s+lines?|cell\s+models?|xenografts?|sublines?|clones)\b"
_AFTER = re.compile(r"(?:\s+|-)(?P<words>(?:[A-Za-z][A-Za-z-]*\s+){0,3}?)" + _CELLS)
_BEFORE = re.compile(r"(?:cell\s+lines?|cell\s+models?|cells?)\s*(?:[(,:]\s*)?"
                     r"(?:(?:such\s+as|including|namely|like)\s+)?$")
# Describing words allowed between a code and "cells"; these break the link (the code is what was done).
_BREAKS = frozenset({"in", "on", "of", "with", "by", "from", "to", "for", "and", "or", "at", "into", "than", "as",
                     "but", "not", "no", "all", "the", "these", "those", "both", "other", "versus", "vs",
                     "toward", "towards", "positive", "negative", "high", "low", "null", "deficient", "expression",
                     "over-expression", "overexpression", "knockdown", "knockout", "mutant", "wild-type"})


class CellLine(NamedTuple):
    """A cell-line name in a text: offsets and the name as written."""

    start: int
    end: int
    text: str


def is_code(word: str) -> bool:
    """Whether a word is shaped like a cell line's name: a code with a digit and a capital, or a word of mixed
    case with two capitals ("HeLa", "LNCaP"; a gene symbol in capitals is not one).

    Example:
        >>> [is_code(w) for w in ("MDA-MB-231", "HCT116", "A549", "LNCaP", "HER2-positive", "BRAF", "Erk")]
        [True, True, True, True, False, False, False]
    """
    if not 2 <= len(word) <= 20 or _LONG_LOWER.search(word):
        return False
    capitals = sum(c.isupper() for c in word)
    if any(c.isdigit() for c in word):
        return capitals >= 1
    return capitals >= 2 and any(c.islower() for c in word) and not _PLURAL.search(word)


def _said_of_cells(text: str, end: int) -> bool:
    found = _AFTER.match(text, end)
    if found is None:
        return False
    words = found.group("words").split()
    return not any(w.casefold() in _BREAKS or w.endswith(("ed", "ing")) for w in words)


def find_cell_lines(text: str) -> list[CellLine]:
    """Every cell-line name of ``text`` the rule finds (see the module docstring), in text order."""
    codes = [m for m in _CODE.finditer(text) if is_code(m.group())]
    runs: list[list[re.Match[str]]] = []
    for m in codes:
        if runs and _SEPARATOR.fullmatch(text, runs[-1][-1].end(), m.start()):
            runs[-1].append(m)
        else:
            runs.append([m])
    out = []
    for run in runs:
        before = text[max(0, run[0].start() - 40):run[0].start()]
        shaped = any(_LINE_SHAPE.fullmatch(m.group()) for m in run)
        if shaped or _said_of_cells(text, run[-1].end()) or _BEFORE.search(before):
            out += [CellLine(m.start(), m.end(), m.group()) for m in run]
    return out


def cell_line_hits(text: str) -> list[Hit]:
    """The cell lines of ``text`` as the matcher's hits (kind :data:`KIND`, source "cell_line")."""
    return [Hit(c.start, c.end, KIND, c.text, "cell_line") for c in find_cell_lines(text)]
