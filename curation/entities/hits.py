"""A span the matcher found in a text (:class:`Hit`), and how overlapping hits are settled.

:class:`~curation.entities.matching.Matcher` collects hits from dictionaries, notation rules,
abbreviations and word shapes; :func:`resolve_overlaps` keeps one per stretch of text for
highlighting (the longest, then the most trusted source).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from curation.entities.lexicon import Lexicon
from curation.entities.morphology import CHEMICAL_AFTER_TARGET, GENE_AFTER_CHEMICAL

# On overlap the longer span wins; at equal length, the lower rank. A cell line's shape is the least sure
# source: a name of the whole word keeps it ("CD4 cells"), only the names inside a longer code yield.
RANK = {"variant": 0, "residue": 1, "abbreviation": 2, "dictionary": 3, "ptm": 4, "shape": 5, "cell_line": 6}


class Hit(NamedTuple):
    """One span: offsets into the text, the kind, the concept id or notation key, and the source ("dictionary",
    "variant", "residue", "ptm", "abbreviation", "shape" or "cell_line")."""

    start: int
    end: int
    kind: str
    concept: str
    how: str


_SENTENCE_END = re.compile(r"[.!?;]\s+(?=[A-Z(])")


def same_sentence(text: str, a: Hit, b: Hit) -> bool:
    """Whether two hits lie in one sentence (no sentence end between them)."""
    start, end = min(a.start, b.start), max(a.end, b.end)
    return _SENTENCE_END.search(text, start, end) is None


def compound_hits(hits: list[Hit], text: str, wanted: set[str]) -> list[Hit]:
    """Longer names built on dictionary hits: "mineralocorticoid receptor" (a gene from a
    chemical), "COX-2 inhibitors" (a chemical class from a gene)."""
    out = []
    for hit in hits:
        if hit.how != "dictionary":
            continue
        if hit.kind == "chemical" and "gene" in wanted:
            m = GENE_AFTER_CHEMICAL.match(text, hit.end)
            if m:
                out.append(Hit(hit.start, m.end(), "gene", text[hit.start : m.end()], "shape"))
        if hit.kind in ("chemical", "gene") and "chemical" in wanted:
            m = CHEMICAL_AFTER_TARGET.match(text, hit.end)
            if m:
                out.append(Hit(hit.start, m.end(), "chemical", text[hit.start : m.end()], "shape"))
    return out


def resolve_overlaps(hits: list[Hit], lexicon: Lexicon, text: str) -> list[Hit]:
    """Non-overlapping hits: longest first, then by rank, then the kind the lexicon uses most."""
    ordered = sorted(
        set(hits),
        # The last keys only make ties deterministic (a set's order changes with the hash seed).
        key=lambda h: (
            -(h.end - h.start),
            RANK[h.how],
            -lexicon.weight(text[h.start : h.end], h.kind),
            h.start,
            h.kind,
            h.concept,
        ),
    )
    taken = bytearray(len(text) + 1)
    kept: list[Hit] = []
    for hit in ordered:
        if any(taken[hit.start : hit.end]):
            continue
        taken[hit.start : hit.end] = b"\x01" * (hit.end - hit.start)
        kept.append(hit)
    return sorted(kept)
