"""Co-mentioned concept pairs: the unit the relation scorer labels and scores.

For every pair of distinct concepts co-mentioned in a document (:func:`candidate_pairs`), the label says whether
the document relates them: corpora with document-level relations (BioRED: any relation type; BC5CDR:
chemical-induced disease) make a co-mentioned pair with an annotated relation a positive, one without a negative.
:func:`training_pairs` refuses any document whose PMID is held out (a Dev or Test document of any corpus), so a
benchmark never trains on what it scores.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from curation.entities.lexicon import is_placeholder_id
from curation.errors import CurationError
from curation.records import Document, Mention

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")
_ID_SPLIT = re.compile(r"[,;]")


class RelationError(CurationError):
    """A relation scorer that cannot be trained, saved or loaded; the message names the file or the reason."""


@dataclass(frozen=True)
class Pair:
    """Two concepts co-mentioned in one document (``concept_a`` < ``concept_b``), with the gold label if known."""

    pmid: str
    concept_a: str
    type_a: str
    concept_b: str
    type_b: str
    label: int = 0


def concept_ids(mention: Mention) -> list[str]:
    """A mention's concept ids (PubTator joins several with "," or ";"; placeholders "-", "-1", "" mean none)."""
    return [c.strip() for c in _ID_SPLIT.split(mention.concept_id or "") if not is_placeholder_id(c)]


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text`` (a regular expression: ends at . ! ? before a capital/digit)."""
    spans, start = [], 0
    for match in _SENTENCE.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return [(s, e) for s, e in spans if e > s]


@lru_cache(maxsize=256)
def sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """:func:`sentences`, cached per text (every pair of a document asks for them)."""
    return tuple(sentences(text))


def group_by_concept(mentions: Iterable[Mention]) -> dict[str, list[Mention]]:
    """Concept id → its mentions (a mention of several concepts counts for each)."""
    found: dict[str, list[Mention]] = defaultdict(list)
    for m in mentions:
        for cid in concept_ids(m):
            found[cid].append(m)
    return found


def related_pairs(document: Document) -> set[tuple[str, str]]:
    """The (sorted) concept pairs the document's gold relations relate."""
    related = set()
    for r in document.relations:
        for a in _ID_SPLIT.split(r.concept1):
            for b in _ID_SPLIT.split(r.concept2):
                related.add(tuple(sorted((a.strip(), b.strip()))))
    return related


def candidate_pairs(document: Document, mentions: Sequence[Mention] | None = None,
                    types: set[frozenset[str]] | None = None) -> list[Pair]:
    """Every pair of distinct concepts co-mentioned in ``document`` (its gold mentions unless ``mentions``),
    labelled from its gold relations; ``types`` keeps only pairs of those entity-type pairs."""
    grouped = group_by_concept(document.mentions if mentions is None else mentions)
    related = related_pairs(document)
    names = sorted(grouped)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            type_a, type_b = grouped[a][0].type, grouped[b][0].type
            if types is not None and frozenset((type_a, type_b)) not in types:
                continue
            out.append(Pair(document.pmid, a, type_a, b, type_b, int((a, b) in related)))
    return out


def training_pairs(documents: Iterable[Document], held_out: set[str],
                   types: set[frozenset[str]] | None = None) -> tuple[list[Pair], list[Document]]:
    """Labelled pairs of the documents that have gold relations, none of ``held_out`` (PMIDs of Dev/Test).

    Raises:
        RelationError: a held-out document was given (the caller mixed splits).
    """
    pairs, used = [], []
    for document in documents:
        if document.pmid in held_out:
            raise RelationError(f"document {document.pmid} is held out (Dev or Test) and cannot be trained on")
        if not document.relations:
            continue
        used.append(document)
        pairs += candidate_pairs(document, types=types)
    return pairs, used
