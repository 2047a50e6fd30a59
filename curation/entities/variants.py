"""Sequence-variant notation: one canonical key per variant, and a finder for free text.

Curators and abstracts write the same variant many ways: ``V600E``, ``p.V600E``,
``Val600Glu``, ``p.(Val600Glu)``, ``Val 600 Glu``. :func:`normalise_variant` maps each to
one key (one-letter amino acids, no ``p.``: ``"V600E"``), :func:`find_variants` finds every
mention in a text with its key, and :func:`variant_matches` says whether a found key
satisfies a query key (``"V600"`` is satisfied by ``"V600E"``).

Key forms:
    protein substitution ``V600E``; stop ``R161*``; synonymous ``S157S``; codon ``V600``;
    frameshift ``L531fs`` (the new residue and the stop distance are dropped, so that
    ``L531fs*30``, ``L531FS`` and ``p.Leu531ProfsTer30`` agree); ``F76del``,
    ``E746_A750del``, ``A763_Y764insFQEA``, ``Y772_A775dup``, ``G776delinsVC``;
    DNA ``c.1799T>A`` (a bare ``677C>T`` reads as ``c.``; a transcript prefix
    ``NM_004333.4:`` is dropped), ``c.549del``, ``IVS16+1G>A``; a codon without its residue
    ``codon 600``; dbSNP ``rs121913529``; fusions ``BCR::ABL1`` (``v`` marks an unknown
    partner: a typed "ALK fusion" is ``v::ALK``; "BCR-ABL1" and "BCR/ABL1" are read as a
    fusion only when told which names are genes, see :func:`variant_keys`);
    CIViC categories by their CIViC name (``Amplification``, ``Exon 19 Deletion``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from curation.entities.variant_categories import variant_category
from curation.entities.variant_grammar import A1, A3, FINDERS, FUSION, key_of_match, one_letter, protein_key
from curation.entities.variant_prose import find_prose


class VariantMention(NamedTuple):
    """One variant found in a text: character offsets, covered text, canonical key."""

    start: int
    end: int
    text: str
    key: str


_CODON = re.compile(rf"(?:p\.\s?)?(?P<ref>{A3}|{A1})(?P<pos>\d{{1,5}})")
_ALTS = re.compile(rf"(?:p\.\s?)?(?P<ref>{A3}|{A1})(?P<pos>\d{{1,5}})(?P<alts>(?:{A1}|\*)(?:/(?:{A1}|\*))+)")
_GENE_PREFIX = re.compile(r"^(?P<gene>[A-Z][A-Za-z0-9-]{1,15})\s+(?P<rest>.+)$")
# A gene symbol as typed: "ALK", "NTRK1"; not "Kinase", "NUCLEAR", "TRUNCATING" (long, no digit).
_SYMBOL = re.compile(r"[A-Z](?:[A-Z0-9]{1,5}|[A-Z0-9]*\d[A-Z0-9]*)")
_TRANSCRIPT = re.compile(r"^(?:N[MRPGC]_\d+|ENS[TG]\d+)(?:\.\d+)?(?:\([A-Za-z0-9-]+\))?:\s?")
_CODON_WORD = re.compile(
    r"(?i)codons?\s?(?P<pos>\d{1,5}(?:\s?(?:/|,|and|or)\s?\d{1,5})*)(?:\s(?:mutations?|mutants?|variants?))?"
)
# "BCR-ABL1", "BCR/ABL1", "EML4-ALK fusion": a fusion when both sides are genes (gene_of).
_TYPED_FUSION = re.compile(
    r"(?P<g1>[A-Z][A-Za-z0-9]{1,14})\s?[-/\u2010-\u2015]\s?(?P<g2>[A-Z][A-Za-z0-9]{1,14})"
    r"(?:[\s-](?:gene\s)?(?:fusions?|rearrange\w*|translocations?|positive|\+))?"
)


def variant_keys(text: str, gene_of: Callable[[str], str | None] | None = None) -> list[str]:
    """Every key a variant name stands for, most specific first.

    "R167W (c.499C>T)" -> ["R167W", "c.499C>T"]; "Q157P/R" -> ["Q157P", "Q157R"];
    "BRAF V600E" -> ["V600E"] (a leading gene symbol is dropped; the caller keeps the gene);
    "BCR::ABL1 Fusion" -> ["BCR::ABL1"]; "ALK fusion" -> ["v::ALK"]; "codon 12" -> ["codon 12"].
    Returns [] when the text is not a variant this module knows.

    Args:
        text: a variant name as written in a KB or typed by a curator.
        gene_of: the gene concept a name denotes, or None (a lexicon lookup). With it,
            "BCR-ABL1" and "BCR/ABL1" are the fusion "BCR::ABL1" when both sides are
            distinct genes and the whole is not itself a gene name ("HLA-A", "IL-6" stay
            what they are); without it such names are not variants.
    """
    clean = _TRANSCRIPT.sub("", " ".join(text.strip().split()))
    if not clean:
        return []
    if gene_of is not None:
        fusion = _typed_fusion(clean, gene_of)
        if fusion:
            return [fusion]
    keys = _keys(clean)
    if not keys:  # "R161* c.481C>T", "Splice Site c.340+1G>A": notation among other words
        keys = [k for token in clean.split() if not variant_category(token) for k in _part_keys(token)]
    if not keys:
        prefixed = _GENE_PREFIX.match(clean)
        if prefixed:
            keys = _keys(prefixed["rest"])
            if keys in (["Fusion"], ["Rearrangement"]) and _SYMBOL.fullmatch(prefixed["gene"]):
                keys = [f"v::{prefixed['gene']}"]  # "ALK fusion": CIViC's v::ALK, the gene kept
    if not keys:
        loose = variant_category(clean, loose=True)
        keys = [loose] if loose else []
    return list(dict.fromkeys(keys))


def _typed_fusion(clean: str, gene_of: Callable[[str], str | None]) -> str | None:
    """A typed fusion, "BCR-ABL1" -> "BCR::ABL1", when both sides are distinct genes and the whole is not one."""
    m = _TYPED_FUSION.fullmatch(clean)
    if m is None or gene_of(clean[: m.end("g2")]) is not None:
        return None
    first, second = gene_of(m["g1"]), gene_of(m["g2"])
    if first is None or second is None or first == second:
        return None
    return f"{m['g1']}::{m['g2']}"


def _keys(clean: str) -> list[str]:
    fusion = FUSION.match(clean)
    if fusion:  # "EML4::ALK Fusion", "EML4::ALK e6::e20": the partner genes are the key
        return [key_of_match("fusion", fusion)]
    keys: list[str] = []
    for part in re.split(r"\s*[()]\s*", clean):
        if part:
            keys.extend(_part_keys(part))
    return keys


def _part_keys(part: str) -> list[str]:
    category = variant_category(part)
    if category:
        return [category]
    alts = _ALTS.fullmatch(part)
    if alts:
        return [protein_key(alts["ref"], alts["pos"], a) for a in alts["alts"].split("/")]
    for name, regex in FINDERS:
        found = regex.fullmatch(part)
        if found:
            return [key_of_match(name, found)]
    spaced = re.fullmatch(rf"(?:p\.\s?)?({A1})\s+(\d{{1,5}})\s+({A1}|\*|X)", part)
    if spaced:  # "V 600 E": too loose to find in text, fine as typed by a curator
        return [protein_key(*spaced.groups())]
    codon = _CODON.fullmatch(part)
    if codon:
        return [f"{one_letter(codon['ref'])}{int(codon['pos'])}"]
    codons = _CODON_WORD.fullmatch(part)  # "codon 600", "codons 12/13": the residue unknown
    if codons:
        return [f"codon {int(pos)}" for pos in re.findall(r"\d+", codons["pos"])]
    if re.fullmatch(rf"{A1}\d+(?:/{A1}\d+)+", part):  # "G12/G13"
        return part.split("/")
    stop_loss = re.fullmatch(rf"\*(\d+)({A1})", part)  # "*757L"
    if stop_loss:
        return [f"*{stop_loss[1]}{stop_loss[2]}"]
    legacy = re.fullmatch(rf"({A1}\d+_{A1}\d+)>({A1}+)", part)  # "E746_T751>I"
    if legacy:
        return [f"{legacy[1]}delins{legacy[2]}"]
    star = re.fullmatch(r"([A-Z][A-Z0-9]+)\*(\d+[A-Z]?)", part)  # star alleles "UGT1A1*28"
    if star:
        return [f"{star[1]}*{star[2]}"]
    return []


def normalise_variant(text: str) -> str | None:
    """The canonical key of a variant name, or None when it is not a known notation.

    Example:
        >>> normalise_variant("p.Val600Glu"), normalise_variant("Val 600 Glu")
        ('V600E', 'V600E')
    """
    keys = variant_keys(text)
    return keys[0] if keys else None


def find_variants(text: str, prose: bool = True) -> list[VariantMention]:
    """Every variant mention in free text, non-overlapping (longest wins), in text order.

    Finds protein (one- and three-letter, ``p.``), DNA (``c.``/``g.``, bare ``677C>T``,
    ``IVS``), dbSNP, ``Δ32`` and ``A::B`` fusion notation, amino-acid names ("arginine 150
    proline") and, with ``prose``, the descriptions of :mod:`curation.entities.variant_prose`
    ("C to T transition at nucleotide 3916", "G-395A", "32-bp deletion"). Category words
    ("amplification", "mutation") are not reported: they are too common to highlight; see
    :func:`curation.entities.variant_categories.category_regex`.
    """
    found: list[tuple[int, int, int, str]] = []
    for rank, (name, regex) in enumerate(FINDERS):
        for m in regex.finditer(text):
            if name == "sub1" and not _plausible_sub1(m):
                continue
            found.append((m.start(), m.end(), rank, key_of_match(name, m)))
    if prose:

        found.extend((start, end, len(FINDERS), key) for start, end, key in find_prose(text))
    found.sort(key=lambda f: (-(f[1] - f[0]), f[2], f[0]))
    taken: list[tuple[int, int]] = []
    kept: list[VariantMention] = []
    for start, end, _, key in found:
        if any(start < e and s < end for s, e in taken):
            continue
        taken.append((start, end))
        kept.append(VariantMention(start, end, text[start:end], key))
    return sorted(kept)


def _plausible_sub1(m: re.Match[str]) -> bool:
    """Reject one-letter look-alikes: "E2F", "H2A", "P2X", "C3a" (one-digit positions
    without ``p.`` are almost always names), and the same letter on both sides of a
    short number ("T4T")."""
    if m["pre"]:
        return True
    return len(m["pos"]) >= 2 and m.group(0) not in _NOT_VARIANTS


# Cell lines and names that look like one-letter substitutions.
_NOT_VARIANTS = frozenset({"T98G", "H295R", "S100A", "S100B", "H69V", "C33A", "C4I"})


def variant_matches(query: str, found: str) -> bool:
    """Whether a variant found in text (key ``found``) satisfies a query key.

    Equal keys match; a codon key ("V600", "G12") is satisfied by any change at that
    codon ("V600E", "V600fs", "V600del"), and "codon 600" by any residue's; a fusion with
    an unknown partner ("v::ALK") by any fusion of that gene.
    """
    if query == found:
        return True
    codon = re.fullmatch(r"codon (\d+)", query)
    if codon:
        return re.match(rf"(?:codon )?[A-Z*]?{codon[1]}(?!\d)", found) is not None
    if re.fullmatch(rf"{A1}\d+", query):
        return re.match(rf"{re.escape(query)}(?!\d)", found) is not None
    fusion = re.fullmatch(r"(.+)::(.+)", query)
    other = re.fullmatch(r"(.+)::(.+)", found)
    if fusion and other:
        g1, g2 = fusion.groups()
        return g1 in ("v", "?", other[1]) and g2 in ("v", "?", other[2]) and (g1, g2) != ("v", "v")
    return False
