"""One pipeline that annotates a text: recognised, linked mentions with their source.

What the app stores per document at ingest (the concept index), what highlights show and what
``python -m curation annotate`` writes all come from :meth:`Annotator.annotate`:

* the dictionary matcher (:class:`~curation.entities.matching.Matcher`: names of the lexicon,
  notation rules for variants / residues / PTM types, in-text abbreviations);
* a trained recogniser when one is active (:mod:`curation.entities.recogniser`: a spaCy NER
  pipeline trained on BioRED + BC5CDR), whose spans are linked to concepts by a linker;
* a linker (:class:`Linker`): a name → concept with a calibrated confidence; a link is applied
  only when ``applied`` is true, otherwise the span is kept unlinked (``concept_id`` empty).

How spans combine (``combine``): "dictionary" = the matcher alone (what the app does without
a recogniser); "recogniser" = recognised spans plus the notation rules; "union" = recognised
spans, then every dictionary span that overlaps none of them. Notation rules (variants,
residues, PTM types) win over a recognised span they overlap: their keys are exact.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from curation.entities.matching import Matcher

SOURCES = ("gold", "recogniser", "dictionary", "rule")
COMBINE = ("dictionary", "recogniser", "union")
# Matcher ``how`` values that come from notation rules rather than names.
_RULE_HOWS = frozenset({"variant", "residue", "ptm"})


@dataclass(frozen=True)
class Annotation:
    """One mention in a text, as stored in the concept index.

    Attributes:
        start, end: character offsets into the annotated text (for a document, ``Document.text``).
        text: the covered text.
        type: the kind ("gene", "variant", "chemical", "disease", "cellline", "residue", "ptm").
        concept_id: the linked concept (lexicon id, variant key, ...); empty when no link was applied.
        canonical: the concept's display name (the text itself when unlinked).
        confidence: the link's confidence in [0, 1] (1.0 for exact names and notation rules).
        source: "gold" (an annotated corpus), "recogniser", "dictionary" or "rule".
    """

    start: int
    end: int
    text: str
    type: str
    concept_id: str
    canonical: str
    confidence: float
    source: str


@dataclass(frozen=True)
class Link:
    """A linker's answer for one name: the best concept and whether it may be applied."""

    concept_id: str
    canonical: str
    confidence: float
    applied: bool
    candidates: tuple[tuple[str, str, float], ...] = ()  # (concept id, canonical, score), best first


class Recogniser(Protocol):
    """A trained span recogniser (see :mod:`curation.entities.recogniser`)."""

    name: str

    def recognise(self, texts: Sequence[str]) -> list[list[tuple[int, int, str]]]:
        """(start, end, kind) spans per text, kinds in the matcher's vocabulary."""
        ...


class Linker(Protocol):
    """Links a recognised name of a kind to a concept with a calibrated confidence."""

    name: str

    def link(self, text: str, kind: str) -> Link: ...


class Annotator:
    """Annotates texts with :class:`Annotation` mentions.

    Args:
        matcher: the dictionary matcher (always used: rules, names, abbreviations).
        recogniser: a trained recogniser, or None (dictionaries only).
        linker: links recognised spans that the lexicon does not name exactly; None leaves them
            unlinked unless the lexicon knows the exact text.
        combine: one of :data:`COMBINE` (default "union" with a recogniser, else "dictionary").
    """

    def __init__(
        self,
        matcher: Matcher,
        recogniser: Recogniser | None = None,
        linker: Linker | None = None,
        combine: str | None = None,
    ) -> None:
        combine = combine or ("union" if recogniser is not None else "dictionary")
        if combine not in COMBINE:
            raise ValueError(f"combine must be one of {', '.join(COMBINE)}, not {combine!r}")
        if combine != "dictionary" and recogniser is None:
            raise ValueError(f"combine={combine!r} needs a recogniser")
        self.matcher = matcher
        self.recogniser = recogniser
        self.linker = linker
        self.combine = combine

    @property
    def version(self) -> str:
        """What produced the annotations: stored with them, so a new recogniser re-annotates."""
        if self.recogniser is None or self.combine == "dictionary":
            return "dictionary"
        linker = self.linker.name if self.linker is not None else "lexicon"
        return f"{self.combine}:{self.recogniser.name}:{linker}"

    def annotate(self, texts: Iterable[str], batch_size: int = 64) -> list[list[Annotation]]:
        """Mentions per text, non-overlapping, in text order."""
        texts = list(texts)
        self.matcher.analyse_many(texts, batch_size=batch_size)
        recognised: list[list[tuple[int, int, str]]] = [[] for _ in texts]
        if self.recogniser is not None and self.combine != "dictionary":
            recognised = self.recogniser.recognise(texts)
        return [self._one(text, spans) for text, spans in zip(texts, recognised, strict=True)]

    def _one(self, text: str, recognised: list[tuple[int, int, str]]) -> list[Annotation]:
        found = self.matcher.find_all(text)
        lexicon = self.matcher.lexicon
        if self.combine == "dictionary":
            return [self._from_span(s, text) for s in found]
        rules = [s for s in found if s.how in _RULE_HOWS]
        names = [s for s in found if s.how not in _RULE_HOWS]
        out = [self._from_span(s, text) for s in rules]
        taken = bytearray(len(text) + 1)
        for s in rules:
            taken[s.start : s.end] = b"\x01" * (s.end - s.start)
        exact = {(s.start, s.end, s.entity_type): s for s in names}
        for start, end, kind in sorted(recognised):
            if any(taken[start:end]):
                continue
            taken[start:end] = b"\x01" * (end - start)
            span_text = text[start:end]
            same = exact.get((start, end, kind))
            if same is not None and same.how == "dictionary":
                out.append(self._from_span(same, text, source="recogniser"))
                continue
            known = lexicon.lookup(span_text, kind)
            if len({c for _, c in known}) == 1:
                concept = known[0][1]
                out.append(Annotation(start, end, span_text, kind, concept, lexicon.canonical(kind, concept), 1.0,
                                      "recogniser"))
                continue
            link = self.linker.link(span_text, kind) if self.linker is not None else None
            if link is not None and link.applied:
                out.append(Annotation(start, end, span_text, kind, link.concept_id, link.canonical, link.confidence,
                                      "recogniser"))
            else:
                confidence = link.confidence if link is not None else 0.0
                out.append(Annotation(start, end, span_text, kind, "", span_text, confidence, "recogniser"))
        if self.combine == "union":
            for s in names:
                if not any(taken[s.start : s.end]):
                    out.append(self._from_span(s, text))
        return sorted(out, key=lambda a: (a.start, a.end))

    def _from_span(self, span, text: str, source: str | None = None) -> Annotation:
        kind = span.entity_type
        rule = span.how in _RULE_HOWS
        concept = span.concept
        canonical = concept
        if not rule:
            names = self.matcher.lexicon.canonical(kind, concept) if kind in self.matcher.lexicon.kinds else ""
            canonical = names or span.text
        # "shape" spans (drug-like word forms) name no concept of the lexicon.
        linked = rule or span.how != "shape"
        return Annotation(
            span.start,
            span.end,
            span.text,
            kind,
            concept if linked else "",
            canonical,
            1.0 if linked else 0.5,
            source or ("rule" if rule else "dictionary"),
        )
