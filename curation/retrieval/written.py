"""Where a typed name is written in the stored abstracts, whatever the concept index says.

A slot whose concept has no posting is not a name no abstract writes: the annotator may have missed it
("calcium channel blockers", "FABP-4"), so before the search says "no abstract mentions X" it reads the text.
The BM25 index narrows the abstracts to those holding every token of the name (in any of its spellings: "FABP-4",
"FABP4", "FABP 4"), best first, and :func:`phrase_regex` checks each candidate's text for the name as a phrase
(case ignored but in short abbreviations, hyphens and spaces free). At most ``limit`` candidates are read, so the
cost stays a few milliseconds on a large store; past it the count is a lower bound.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import NamedTuple

from curation.records import Document
from index.lexical import LexicalIndex

# Candidates whose text is read (the served search passes its depth, the same 50 by default): reading abstracts
# from the store is the cost, ~2 ms for a rare name's few candidates on the sample, ~10 ms for 50.
LIMIT = 50
_DASHES = "\\-\u2010\u2011\u2012\u2013\u2212"
_JOINER = f"[\\s{_DASHES}]*"  # between two words, or a letter and a digit: "FABP-4" = "FABP4" = "FABP 4"
_APOSTROPHES = "['\u2019\u2032]"
_PIECE = re.compile(r"[^\W\d_]+|\d+|[^\w\s]|_")


class Written(NamedTuple):
    """A name's occurrences in the stored text.

    Attributes:
        found: pmid → the name as each abstract writes it, best BM25 score of the name first (among those read).
        complete: every candidate was read (``len(found)`` is exact, not a lower bound).
        checked: False when a spelling of the name has no token the index keeps (single letters and stop words
            only: "T", "G to A"): the index cannot narrow, nothing was read.
    """

    found: Mapping[str, tuple[str, ...]]
    complete: bool
    checked: bool = True


def case_matters(name: str) -> bool:
    """An abbreviation of at most four letters and digits with a capital after its first ("CAT", "AChE") or a
    single letter is matched by its case: "cat" and "ache" are words. Any other name ignores case."""
    core = "".join(c for c in name if c.isalnum())
    return len(core) == 1 or (len(core) <= 4 and any(c.isupper() for c in core[1:]))


@lru_cache(maxsize=4096)
def phrase_regex(name: str) -> re.Pattern[str] | None:
    """The name as a phrase: any run of spaces and hyphens between its words (or none), and between a letter and a
    digit ("FABP-4" finds "FABP4"); other punctuation as written, spaces around it free; case ignored unless
    :func:`case_matters`. None for a name with no letter or digit."""
    pieces = _PIECE.findall(name)
    if not any(p[0].isalnum() for p in pieces):
        return None
    parts: list[str] = []
    previous = ""
    for piece in pieces:
        if piece in _DASHES.replace("\\", ""):
            continue  # a dash is a joiner, written or not
        if previous:
            parts.append(_JOINER if previous[-1].isalnum() and piece[0].isalnum() else r"\s*")
        parts.append(_APOSTROPHES if piece in "'\u2019\u2032" else re.escape(piece))
        previous = piece
    pattern = "".join(parts)
    start = r"(?<![^\W_])" if pieces[0][0].isalnum() else ""
    end = r"(?![^\W_])" if pieces[-1][-1].isalnum() else ""
    return re.compile(f"{start}{pattern}{end}", 0 if case_matters(name) else re.IGNORECASE)


def spellings(name: str) -> tuple[str, ...]:
    """The name as typed, joined ("FABP-4" → "FABP4") and split ("FABP4" → "FABP 4") at dashes, spaces between
    a letter and a digit, and letter-digit boundaries: the forms whose tokens the index may hold."""
    typed = " ".join(name.split())
    joined = re.sub(rf"(?<=[^\W\d_])[\s{_DASHES}]*(?=\d)|(?<=\d)[\s{_DASHES}]*(?=[^\W\d_])", "", typed)
    joined = re.sub(rf"(?<=\w)[{_DASHES}](?=\w)", "", joined)
    split = re.sub(r"(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])", " ", joined)
    spaced = re.sub(f"[{_DASHES}]", " ", typed)
    return tuple(dict.fromkeys((typed, joined, split, spaced)))


def written_in(
    lexical: LexicalIndex,
    documents: Callable[[Sequence[str]], Mapping[str, Document]],
    name: str,
    limit: int = LIMIT,
) -> Written:
    """The stored abstracts that write ``name`` (see the module docstring).

    Args:
        lexical: the served BM25 index.
        documents: PMIDs → documents (the text read).
        name: the name as the curator typed it.
        limit: how many candidates are read at most.
    """
    regex = phrase_regex(name)
    candidates = lexical.containing(spellings(name)) if regex is not None else None
    if candidates is None:
        return Written({}, complete=False, checked=False)
    read = candidates[:limit]
    if not read:
        return Written({}, complete=True)
    texts = documents(read)
    found = {}
    for pmid in read:
        if pmid in texts and (forms := tuple(dict.fromkeys(m.group(0) for m in regex.finditer(texts[pmid].text)))):
            found[pmid] = forms
    return Written(found, complete=len(candidates) <= limit)
