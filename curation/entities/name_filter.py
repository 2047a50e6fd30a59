"""Which dictionary names to trust, measured on annotated text.

A name can be right as a synonym and still wrong as a text pattern: DrugBank lists "SNP"
(sodium nitroprusside) and corpora annotate "nucleotide" once, yet in abstracts these
strings are almost never the chemical. :func:`measure_names` runs a matcher over documents
with gold mentions and counts, per (kind, name), how often a hit is a gold mention of that
kind; :func:`unreliable_names` lists the names that are usually wrong, to pass to
``Lexicon(exclude=...)``. Measure on training documents only, never on the documents a
benchmark evaluates.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import NamedTuple

from curation.entities.lexicon import normalise_name
from curation.entities.matching import Matcher
from curation.entities.synonyms import PUBTATOR_KINDS
from curation.records import Document


class NameStats(NamedTuple):
    """How a name fared as a text pattern: dictionary hits and those that were gold mentions."""

    hits: int
    correct: int

    @property
    def precision(self) -> float:
        return self.correct / self.hits if self.hits else 0.0


def measure_names(
    matcher: Matcher, documents: Iterable[Document], kinds: Iterable[str]
) -> dict[tuple[str, str], NameStats]:
    """Per (kind, normalised name): dictionary hits of ``matcher.find_all`` and gold ones.

    Args:
        matcher: the matcher whose dictionary is measured (abbreviations are not counted).
        documents: documents with gold mentions (PubTator types, see ``PUBTATOR_KINDS``).
        kinds: the kinds these documents annotate exhaustively (BC5CDR: chemical, disease).
    """
    wanted = tuple(kinds)
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for doc in documents:
        gold = {(m.start, m.end, PUBTATOR_KINDS.get(m.type)) for m in doc.mentions}
        for span in matcher.find_all(doc, kinds=wanted):
            if span.how != "dictionary":
                continue
            tally = counts[(span.entity_type, normalise_name(span.text))]
            tally[0] += 1
            tally[1] += (span.start, span.end, span.entity_type) in gold
    return {key: NameStats(hits, correct) for key, (hits, correct) in counts.items()}


def unreliable_names(
    stats: dict[tuple[str, str], NameStats], min_hits: int = 2, max_precision: float = 0.5
) -> dict[str, frozenset[str]]:
    """Names (normalised) per kind seen at least ``min_hits`` times with precision below ``max_precision``."""
    out: dict[str, set[str]] = defaultdict(set)
    for (kind, name), stat in stats.items():
        if stat.hits >= min_hits and stat.precision < max_precision:
            out[kind].add(name)
    return {kind: frozenset(names) for kind, names in out.items()}


def merge_stats(*parts: dict[tuple[str, str], NameStats]) -> dict[tuple[str, str], NameStats]:
    """Add up measurements from several corpora."""
    total: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for part in parts:
        for key, stat in part.items():
            total[key][0] += stat.hits
            total[key][1] += stat.correct
    return {key: NameStats(h, c) for key, (h, c) in total.items()}
