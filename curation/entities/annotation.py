"""One pipeline that annotates a text: recognised, linked mentions with their source.

What the app stores per document at ingest (the concept index), what highlights show and what
``python -m curation annotate`` writes all come from :meth:`Annotator.annotate`:

* the dictionary matcher (:class:`~curation.entities.matching.Matcher`: names of the lexicon,
  notation rules for variants / residues / PTM types, in-text abbreviations);
* a trained recogniser when one is active (:mod:`curation.entities.recogniser`: a spaCy NER
  pipeline trained on BioRED + BC5CDR), whose spans are linked to concepts by a linker;
* a linker (:class:`Linker`): a name → concept with a calibrated confidence; a link is applied
  only when ``applied`` is true, otherwise the span is kept unlinked (``concept_id`` empty).

How spans combine (``combine``), per kind: "dictionary" (the matcher's names alone), "recogniser"
(recognised spans alone), "recogniser_first" (recognised spans, then the names that overlap none)
or "dictionary_first" (names, then the recognised spans that overlap none). ``combine`` is one
policy for every kind or a mapping kind → policy; the shorthands "dictionary" (no recogniser: what
the app does without one), "recogniser" and "union" (= "recogniser_first") apply to every kind.
Notation rules (variants, residues, PTM types) always come first: their keys are exact. The app's
default per-kind policy (:data:`DEFAULT_POLICY`) was chosen on BioRED Dev by ``bench/entities.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from curation.entities.gene_choice import choose_gene
from curation.entities.species import dominant_species, text_species

if TYPE_CHECKING:
    from curation.entities.matching import Matcher

SOURCES = ("gold", "recogniser", "dictionary", "rule")
POLICIES = ("dictionary", "recogniser", "recogniser_first", "dictionary_first")
COMBINE = ("dictionary", "recogniser", "union")
#: kind -> policy with a recogniser, chosen on BioRED Dev (bench/entities.py, "chosen_on_dev"); kinds not
#: listed use "recogniser_first". Chemicals: the dictionaries' names (DrugBank, MeSH, the drug vocabulary,
#: corpus names) first, the recogniser's spans where they find nothing (dev F1 0.838; dictionaries alone 0.837,
#: recogniser first 0.804); genes, diseases and variants: the recogniser's spans first (gene 0.831 against 0.814
#: dictionaries first; variants 0.911 either way, the notation rules deciding). With the shipped biomed-all-2.
DEFAULT_POLICY: dict[str, str] = {"chemical": "dictionary_first"}
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
        combine: str | Mapping[str, str] | None = None,
    ) -> None:
        if combine is None:
            combine = DEFAULT_POLICY if recogniser is not None else "dictionary"
        if isinstance(combine, str):
            if combine not in (*COMBINE, *POLICIES):
                raise ValueError(f"combine must be one of {', '.join(COMBINE + POLICIES)}, not {combine!r}")
            policy = {"union": "recogniser_first"}.get(combine, combine)
            self.policy: dict[str, str] = {}
            self.default = policy
        else:
            bad = {k: v for k, v in combine.items() if v not in POLICIES}
            if bad:
                raise ValueError(f"unknown combine policies {bad}; use {', '.join(POLICIES)}")
            self.policy = dict(combine)
            self.default = "recogniser_first"
        uses_recogniser = self.default != "dictionary" or any(v != "dictionary" for v in self.policy.values())
        if uses_recogniser and recogniser is None:
            raise ValueError(f"combine={combine!r} needs a recogniser")
        self.matcher = matcher
        self.recogniser = recogniser if uses_recogniser else None
        self.linker = linker
        self.combine = combine
        self._links: dict[tuple[str, str], Link] = {}  # (name, kind) -> the linker's answer

    def policy_of(self, kind: str) -> str:
        return self.policy.get(kind, self.default)

    @property
    def version(self) -> str:
        """What produced the annotations: stored with them, so a new recogniser re-annotates."""
        if self.recogniser is None:
            return "dictionary"
        linker = self.linker.name if self.linker is not None else "lexicon"
        policy = ",".join(f"{k}={v}" for k, v in sorted(self.policy.items()))
        combine = self.default + (f"({policy})" if policy else "")
        return f"{combine}:{self.recogniser.name}:{linker}"

    def annotate(self, texts: Iterable[str], batch_size: int = 64) -> list[list[Annotation]]:
        """Mentions per text, non-overlapping, in text order."""
        texts = list(texts)
        self.matcher.analyse_many(texts, batch_size=batch_size)
        recognised: list[list[tuple[int, int, str]]] = [[] for _ in texts]
        if self.recogniser is not None:
            recognised = self.recogniser.recognise(texts)
            self._link_ahead(texts, recognised)
        return [self._one(text, spans) for text, spans in zip(texts, recognised, strict=True)]

    def _link_ahead(self, texts: list[str], recognised: list[list[tuple[int, int, str]]]) -> None:
        """Link every recognised name the lexicon does not settle, one linker batch per kind, into a cache
        (the same names recur across abstracts; one encoder batch is far cheaper than a call per name)."""
        if self.linker is None:
            return
        lexicon = self.matcher.lexicon
        todo: dict[str, set[str]] = {}
        for text, spans in zip(texts, recognised, strict=True):
            for start, end, kind in spans:
                name = text[start:end]
                if (name, kind) in self._links or self.policy_of(kind) == "dictionary":
                    continue
                known = {c for _, c in lexicon.lookup(name, kind)}
                if not known or (len(known) > 1 and kind != "gene"):  # a gene name of several: chosen in context
                    todo.setdefault(kind, set()).add(name)
        if len(self._links) > 200_000:
            self._links.clear()
        many = getattr(self.linker, "link_many", None)
        for kind, names in todo.items():
            ordered = sorted(names)
            links = many(ordered, kind) if many is not None else [self.linker.link(n, kind) for n in ordered]
            self._links.update({(n, kind): link for n, link in zip(ordered, links, strict=True)})

    def _one(self, text: str, recognised: list[tuple[int, int, str]]) -> list[Annotation]:
        found = self.matcher.find_all(text)
        species = dominant_species(text_species(text))
        if self.recogniser is None:
            return [self._from_span(s, text, species=species) for s in found]
        rules = [s for s in found if s.how in _RULE_HOWS]
        names = [s for s in found if s.how not in _RULE_HOWS]
        exact = {(s.start, s.end, s.entity_type): s for s in names}
        # (start, end, kind, dictionary span or None) in two rounds; rules before both.
        first: list[tuple[int, int, str, object]] = []
        second: list[tuple[int, int, str, object]] = []
        for s in names:
            policy = self.policy_of(s.entity_type)
            if policy in ("dictionary", "dictionary_first"):
                first.append((s.start, s.end, s.entity_type, s))
            elif policy == "recogniser_first":
                second.append((s.start, s.end, s.entity_type, s))
        for start, end, kind in recognised:
            policy = self.policy_of(kind)
            if policy in ("recogniser", "recogniser_first"):
                first.append((start, end, kind, None))
            elif policy == "dictionary_first":
                second.append((start, end, kind, None))
        out = [self._from_span(s, text, species=species) for s in rules]
        taken = bytearray(len(text) + 1)
        for s in rules:
            taken[s.start : s.end] = b"\x01" * (s.end - s.start)
        for round_ in (first, second):
            # Longest first, so a name inside a longer recognised span (or the reverse) yields to it.
            for start, end, kind, span in sorted(round_, key=lambda x: (x[0] - x[1], x[0], x[2])):
                if any(taken[start:end]):
                    continue
                taken[start:end] = b"\x01" * (end - start)
                if span is not None:
                    out.append(self._from_span(span, text, species=species))
                else:
                    out.append(self._recognised(text, start, end, kind, exact.get((start, end, kind)), species))
        return sorted(out, key=lambda a: (a.start, a.end))

    def _recognised(self, text: str, start: int, end: int, kind: str, same, species: str = "") -> Annotation:
        """A recognised span, linked: the dictionary's concept for the same span, an exact unambiguous
        lexicon name (a gene name of several genes: the one the text's species and the corpora choose),
        else the linker's link when it may be applied; otherwise unlinked."""
        lexicon = self.matcher.lexicon
        span_text = text[start:end]
        if same is not None and same.how == "dictionary":
            return self._from_span(same, text, source="recogniser", species=species)
        known = lexicon.lookup(span_text, kind)
        if len({c for _, c in known}) == 1 or (known and kind == "gene"):
            concept = known[0][1] if kind != "gene" else choose_gene(lexicon, span_text, species)
            return Annotation(start, end, span_text, kind, concept, lexicon.canonical(kind, concept), 1.0, "recogniser")
        link = None
        if self.linker is not None:
            link = self._links.get((span_text, kind)) or self.linker.link(span_text, kind)
        if link is not None and link.applied:
            return Annotation(start, end, span_text, kind, link.concept_id, link.canonical, link.confidence,
                              "recogniser")
        confidence = link.confidence if link is not None else 0.0
        return Annotation(start, end, span_text, kind, "", span_text, confidence, "recogniser")

    def _from_span(self, span, text: str, source: str | None = None, species: str = "") -> Annotation:
        kind = span.entity_type
        rule = span.how in _RULE_HOWS
        concept = span.concept
        if kind == "gene" and span.how == "dictionary":  # a name of several genes: the text's species decides
            concept = choose_gene(self.matcher.lexicon, span.text, species) or concept
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
