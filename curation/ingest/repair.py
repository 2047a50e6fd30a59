"""Text repair at ingest: mojibake ("TGFÎ²1" for TGFβ1) undone with ftfy, gold mention offsets kept right.

A corpus file decoded once with the wrong codec (HoC writes UTF-8 read as Latin-1: "Î²" for β, "Î±" for α)
shows the garbled letters on the page, in suggestions and in what the matcher sees. ftfy undoes that. A fix
changes the text's length ("Î²" → "β"), so a document's gold mentions, whose offsets count characters of
``title + " " + abstract``, are moved with the text: each offset is carried through an alignment of the text
before and after the fix, and the mention's text is read again from the fixed text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from difflib import SequenceMatcher
from functools import cache

from curation.records import Document


@cache
def _config():
    # ftfy imported at the first repair, not with the app's first page (~0.1 s). Only what undoes a bad decoding,
    # and the tidying that goes with it (NFC, ligatures, control characters). Left alone: curly quotes (real
    # typography), full-width characters, HTML entities (each reader decodes what its format escapes; a literal
    # "&lt;" left after that is the author's).
    import ftfy

    return ftfy.TextFixerConfig(unescape_html=False, uncurl_quotes=False, fix_character_width=False)


def repair_text(text: str) -> str:
    """``text`` with mojibake and other decoding damage undone (ftfy); ASCII text is returned as is."""
    if text.isascii():  # nothing ftfy would change, and most abstracts: skip its passes
        return text
    import ftfy

    return ftfy.fix_text(text, _config())


def _offset_maps(before: str, after: str) -> tuple[Callable[[int], int], Callable[[int], int]]:
    """Two functions mapping a start and an end offset in ``before`` to ``after``.

    A start inside a changed stretch goes to that stretch's start in ``after``, an end inside one to its end,
    so a mention that covers part of a repaired sequence covers the whole repaired character.
    """
    # (tag, i1, i2, j1, j2): before[i1:i2] became after[j1:j2]; unchanged stretches are "equal".
    blocks = SequenceMatcher(None, before, after, autojunk=False).get_opcodes()

    def start(i: int) -> int:
        for tag, i1, i2, j1, _ in blocks:
            if i1 <= i < i2:
                return j1 + (i - i1) if tag == "equal" else j1
        return len(after)

    def end(i: int) -> int:
        for tag, i1, i2, j1, j2 in blocks:
            if i1 < i <= i2:
                return j1 + (i - i1) if tag == "equal" else j2
        return 0

    return start, end


def repair_document(doc: Document) -> Document:
    """``doc`` with its title and abstract repaired.

    Gold mentions follow the text: their offsets are mapped through the repair and their text is what the
    repaired text holds there; a mention whose every character the repair removed (a stray "Â") is dropped.
    A document the repair does not change is returned as it is.
    """
    title, abstract = repair_text(doc.title), repair_text(doc.abstract)
    if (title, abstract) == (doc.title, doc.abstract):
        return doc
    fixed = dataclasses.replace(doc, title=title, abstract=abstract)
    if not doc.mentions:
        return fixed
    before, after = doc.text, fixed.text
    start, end = _offset_maps(before, after)
    mentions = []
    for m in doc.mentions:
        s, e = start(m.start), end(m.end)
        if e > s:
            mentions.append(dataclasses.replace(m, start=s, end=e, text=after[s:e]))
    return dataclasses.replace(fixed, mentions=tuple(mentions))


def repaired(documents: Iterable[Document]) -> Iterator[Document]:
    """Each document of ``documents`` through :func:`repair_document`, lazily (a reader's stream stays one)."""
    for doc in documents:
        yield repair_document(doc)
