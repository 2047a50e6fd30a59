"""EDEL's text-matching function g(e, d) and entity highlighting.

EDEL (seed 000, §3.2) defines g(e, d) = 1 iff entity e, or one of its synonyms, is
mentioned in document d; margin classes are built from it. :meth:`Matcher.matches` returns
the spans behind that decision (g = 1 iff the list is non-empty) and
:meth:`Matcher.find_all` returns every entity span of a text for highlighting.

Three sources of spans:

* dictionary names of a :class:`~curation.entities.synonyms.Lexicon`, found with spaCy
  ``PhraseMatcher`` on ``spacy.blank("en")`` tokens (short or mixed-case names by exact
  case, the rest case-insensitively);
* notation rules: variants (:mod:`curation.entities.variants`), residues and PTM types
  (:mod:`curation.entities.ptm`), so "Val600Glu" in a text matches the entity "V600E";
* abbreviations (scispaCy's Schwartz & Hearst ``AbbreviationDetector``): when an abstract
  defines "chronic myeloid leukaemia (CML)" and the long form is an entity, every "CML"
  counts as that entity; when the long form is something else ("iodide transport defect
  (ITD)"), dictionary hits of the short form are dropped.

Texts are analysed once and cached (LRU) by :class:`~curation.entities.text_analysis.TextAnalyser`, the
matcher's base class, so scoring thousands of (record, abstract) pairs costs one spaCy pass per abstract. A text
whose abbreviations are kept (:mod:`curation.entities.kept_abbreviations`, :attr:`Matcher.kept_abbreviations`) needs
no spaCy pass for g(e, d): spaCy is loaded only when its dictionary hits are asked for (:meth:`Matcher.find_all`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from curation.entities.abbreviations import Abbreviation, covers
from curation.entities.cell_lines import cell_line_hits
from curation.entities.hits import RANK, Hit, compound_hits, resolve_overlaps, same_sentence
from curation.entities.lexicon import Lexicon
from curation.entities.morphology import find_drug_stems, find_formulas, looks_chemical, looks_gene_product
from curation.entities.name_patterns import fusion_regex, gene_lookup, names_regex
from curation.entities.phrase_table import NameTable
from curation.entities.ptm import normalise_ptm, normalise_residue
from curation.entities.text_analysis import Analysis, TextAnalyser
from curation.entities.variant_categories import category_regex, variant_category
from curation.entities.variants import variant_keys, variant_matches
from curation.records import Document, Span

if TYPE_CHECKING:
    from spacy.language import Language

RULE_KINDS = ("variant", "residue", "ptm")
_COMBINATION = re.compile(r"\s*(?:,|\s\+\s|\s(?:and|AND)\s)\s*")
_GENE_FIRST = re.compile(r"(?P<gene>[A-Z][A-Za-z0-9-]{1,15})\s+\S")


class Matcher(TextAnalyser):
    """Finds entity mentions in abstracts: g(e, d) and highlighting, over texts analysed once each
    (:class:`~curation.entities.text_analysis.TextAnalyser`: the spaCy pass, the cache, kept abbreviations).

    Args:
        lexicon: names by kind (see :mod:`curation.entities.synonyms`).
        nlp: a spaCy pipeline to use for tokens (default ``spacy.blank("en")``); the
            scispaCy ``abbreviation_detector`` is added when ``abbreviations`` is set.
        abbreviations: use abbreviation definitions in the text.
        veto: drop dictionary hits of a short form that the text defines as something
            that is not an entity of that kind.
        shapes: in ``find_all``, also report words shaped like drugs ("-tinib", "-olol")
            and abbreviations whose long form is shaped like a chemical or a gene product
            ("thioperamide (THP)"), with ``how`` = "shape" (see :mod:`curation.entities.morphology`).
        cache_size: how many analysed texts to keep.
        names: the lexicon's names as :func:`~curation.entities.phrase_table.name_table` tokenized them (a kept
            copy, :mod:`curation.entities.matcher_cache`); None: tokenized here. Ignored with another ``nlp``.

    Example:
        >>> matcher = Matcher(lexicon)
        >>> bool(matcher.matches("V600E", "variant", "BRAF p.Val600Glu was found"))
        True
    """

    def __init__(
        self,
        lexicon: Lexicon,
        nlp: Language | None = None,
        abbreviations: bool = True,
        veto: bool = True,
        shapes: bool = True,
        cache_size: int = 4096,
        names: NameTable | None = None,
    ) -> None:
        super().__init__(lexicon, nlp, abbreviations, cache_size, names)
        self.veto = veto
        self.shapes = shapes
        self._regexes: dict[tuple[str, str], re.Pattern[str] | None] = {}
        self._gene_of: Callable[[str], str | None] | None = None  # built on the first variant query
        # kind -> (file, checksum) of the normaliser's TF-IDF index kept with this matcher's lexicon, when read from
        # a kept copy (curation.entities.matcher_cache): the normaliser over this lexicon reads them.
        self.kept_fuzzy: dict[str, tuple[Path, str]] = {}

    # --- public API -------------------------------------------------------------------

    def matches(self, entity: str, kind: str, document: Document | str) -> list[Span]:
        """EDEL's g(e, d): where ``entity`` of ``kind`` is mentioned in ``document``.

        Counts the entity's own text, every name of the concepts it denotes in the lexicon,
        equivalent notation (variants, residues, PTM types) and in-text abbreviations of any
        of these. g(e, d) = 1 iff the returned list is non-empty.

        A fusion gene ("BCR::ABL1") or a drug combination ("Dabrafenib,Trametinib",
        "Dabrafenib + Trametinib") counts only when every part is mentioned.

        Args:
            entity: the entity as written in the KB record or typed by the curator.
            kind: its matcher kind (``RelationSchema.kind(entity_type)``).
            document: a Document (offsets into ``Document.text``) or a plain text.

        Returns:
            Spans in text order, possibly overlapping (an entity inside a longer name counts).
        """
        text = document.text if isinstance(document, Document) else document
        entity = " ".join(entity.split())
        if not entity or not text:
            return []
        analysis = self._analyse(text)
        if kind == "variant":
            hits = self._variant_hits(entity, analysis)
        elif kind == "residue":
            key = normalise_residue(entity)
            hits = [h for h in self._residues(analysis, one_letter=True) if h.concept == key]
            hits += [h for h in self._variants(analysis) if key and re.fullmatch(rf"{key}[A-Z*]", h.concept)]
        elif kind == "ptm":
            key = normalise_ptm(entity) or entity.lower()
            hits = [h for h in self._ptms(analysis) if h.concept == key]
        elif (kind == "gene" and "::" in entity) or (kind == "chemical" and _COMBINATION.search(entity)):
            # A fusion named as a gene, a drug combination: every part must be mentioned.
            parts = [p for p in re.split(r"::|" + _COMBINATION.pattern, entity) if p.strip() not in ("v", "?", "")]
            per_part = [self._name_hits(p.strip(), kind, analysis) for p in parts]
            hits = [h for found in per_part for h in found] if all(per_part) else []
        else:
            hits = self._name_hits(entity, kind, analysis)
        spans = {(h.start, h.end, h.concept, h.how): h for h in hits}
        return [self._span(text, h, kind) for h in sorted(spans.values())]

    def matched(self, entity: str, kind: str, document: Document | str) -> bool:
        """g(e, d) as a bool."""
        return bool(self.matches(entity, kind, document))

    def find_all(self, document: Document | str, kinds: Iterable[str] | None = None) -> list[Span]:
        """Every entity span in a text, non-overlapping (longest match wins), in text order.

        Args:
            document: a Document (offsets into ``Document.text``) or a plain text.
            kinds: the kinds to report (default: the lexicon's kinds and the rule kinds; "cellline" only when
                named). Residues in one-letter code ("S473") are reported only in texts that mention a PTM type.

        Returns:
            Spans with ``entity_type`` = kind, ``concept`` = concept id or notation key, ``how`` = "dictionary",
            "variant", "residue", "ptm", "abbreviation", "shape" or "cell_line".
        """
        text = document.text if isinstance(document, Document) else document
        wanted = set(kinds) if kinds is not None else set(self.lexicon.kinds) | set(RULE_KINDS)
        if not text:
            return []
        analysis = self._analyse(text)
        # Overlaps are settled among every kind before ``kinds`` filters, so that the chemical
        # in "mineralocorticoid receptor" stays unreported when only chemicals are asked for.
        every = set(self.lexicon.kinds) | set(RULE_KINDS)
        hits = list(self._dictionary(analysis)) + self._variants(analysis) + self._ptms(analysis)
        hits += self._residues(analysis, one_letter=bool(self._ptms(analysis)))
        if self.shapes:
            hits += compound_hits(hits, text, every)
            found = find_drug_stems(text) + find_formulas(text)
            hits += [Hit(m.start, m.end, "chemical", m.text, "shape") for m in found]
        hits = self._with_abbreviations(hits, analysis, every | {"chemical", "gene"})
        kept = resolve_overlaps(hits + cell_line_hits(text), self.lexicon, text)  # "MDA" of "MDA-MB-231" yields
        return [self._span(text, h, h.kind) for h in kept if h.kind in wanted]


    # --- abbreviations ----------------------------------------------------------------

    def _with_abbreviations(self, hits: list[Hit], analysis: Analysis, wanted: set[str]) -> list[Hit]:
        if not self.use_abbreviations or not analysis.abbreviations:
            return hits
        out = list(hits)
        vetoed: set[tuple[str, str]] = set()  # (short text, kind)
        for abbreviation in analysis.abbreviations:
            covering = [h for h in hits if covers(h.start, h.end, abbreviation) and h.kind in wanted]
            if not covering and self.shapes:
                covering = self._shaped(abbreviation, analysis.text, wanted)
                out += covering
            kinds = {h.kind for h in covering}
            if covering:
                best = max(covering, key=lambda h: (h.end - h.start, -RANK[h.how]))
                for start, end in abbreviation.occurrences:
                    out.append(Hit(start, end, best.kind, best.concept, "abbreviation"))
            if self.veto:
                for kind in wanted - kinds:
                    vetoed.add((abbreviation.short, kind))
        if vetoed:
            text = analysis.text
            out = [h for h in out if h.how != "dictionary" or (text[h.start : h.end], h.kind) not in vetoed]
        return out

    def _shaped(self, abbreviation: Abbreviation, text: str, wanted: set[str]) -> list[Hit]:
        """The long form of an abbreviation as a chemical or gene product, by its shape alone."""
        long = text[abbreviation.long_start : abbreviation.long_end]
        for kind, test in (("gene", looks_gene_product), ("chemical", looks_chemical)):
            if kind in wanted and test(long):
                return [Hit(abbreviation.long_start, abbreviation.long_end, kind, long.lower(), "shape")]
        return []

    # --- g(e, d) helpers --------------------------------------------------------------

    def _name_hits(self, entity: str, kind: str, analysis: Analysis) -> list[Hit]:
        regex = self._name_regex(entity, kind)
        if regex is None:
            return []
        concept = self._concept(entity, kind)
        text = analysis.text
        hits = [Hit(m.start(), m.end(), kind, concept, "dictionary") for m in regex.finditer(text)]
        if self.use_abbreviations:
            for abbreviation in analysis.abbreviations:
                if any(covers(h.start, h.end, abbreviation) for h in hits):
                    hits += [Hit(s, e, kind, concept, "abbreviation") for s, e in abbreviation.occurrences]
        return hits

    def _name_regex(self, entity: str, kind: str) -> re.Pattern[str] | None:
        key = (entity, kind)
        if key not in self._regexes:
            names = [n for n in self.lexicon.expand(entity, kind) if n == entity or len(n) >= 2]
            if len(self._regexes) > 50_000:
                self._regexes.clear()
            self._regexes[key] = names_regex(names)
        return self._regexes[key]

    def _variant_hits(self, entity: str, analysis: Analysis) -> list[Hit]:
        if self._gene_of is None:
            self._gene_of = gene_lookup(self.lexicon)
        keys = variant_keys(entity, gene_of=self._gene_of)
        if not keys:  # not notation: a name such as "DD32 deletion"
            return self._name_hits(entity, "variant", analysis)
        text = analysis.text
        hits = [h for h in self._variants(analysis) if any(variant_matches(k, h.concept) for k in keys)]
        categories: list[Hit] = []
        for key in keys:
            codon = re.fullmatch(r"(?:codon |[A-Z])(\d+)", key)
            if "::" in key:
                hits += self._fusion_hits(key, analysis)
            elif codon:  # "V600", "codon 600": also the codon named in words
                regex = re.compile(rf"(?i)\bcodons?\s(?:\d{{1,5}}\s?(?:,|/|and|or)\s?)*{codon[1]}(?!\d)")
                hits += [Hit(m.start(), m.end(), "variant", key, "variant") for m in regex.finditer(text)]
            elif variant_category(key) or variant_category(key, loose=True) == key:
                regex = category_regex(key)
                if regex is not None:
                    categories += [Hit(m.start(), m.end(), "variant", key, "variant") for m in regex.finditer(text)]
        gene = _GENE_FIRST.match(entity)
        if categories and gene and self.lexicon.lookup(gene["gene"], "gene") and not variant_keys(gene["gene"]):
            # "CDKN2A deletion": a category says nothing of the gene, so the typed gene must be
            # named in the same sentence ("PTEN deletion" is another gene's deletion).
            named = self._name_hits(gene["gene"], "gene", analysis)
            categories = [h for h in categories if any(same_sentence(text, h, g) for g in named)]
        return hits + categories

    def _fusion_hits(self, key: str, analysis: Analysis) -> list[Hit]:
        regex = self._regexes.get((key, "fusion"))
        if (key, "fusion") not in self._regexes:
            regex = fusion_regex(key, self.lexicon)
            self._regexes[(key, "fusion")] = regex
        if regex is None:
            return []
        return [Hit(m.start(), m.end(), "variant", key, "variant") for m in regex.finditer(analysis.text)]

    def _span(self, text: str, hit: Hit, kind: str) -> Span:
        return Span(hit.start, hit.end, text[hit.start : hit.end], kind, hit.concept, hit.how)
