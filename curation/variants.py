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
    DNA ``c.1799T>A`` (a bare ``677C>T`` reads as ``c.``), ``c.549del``, ``IVS16+1G>A``;
    dbSNP ``rs121913529``; fusions ``BCR::ABL1`` (``v`` marks an unknown partner);
    CIViC categories by their CIViC name (``Amplification``, ``Exon 19 Deletion``).
"""

from __future__ import annotations

import re
from typing import NamedTuple

AA3 = {
    "ala": "A", "arg": "R", "asn": "N", "asp": "D", "cys": "C", "gln": "Q", "glu": "E",
    "gly": "G", "his": "H", "ile": "I", "leu": "L", "lys": "K", "met": "M", "phe": "F",
    "pro": "P", "ser": "S", "thr": "T", "trp": "W", "tyr": "Y", "val": "V", "sec": "U",
    "ter": "*",
}  # fmt: skip
AA_NAMES = {
    "alanine": "A", "arginine": "R", "asparagine": "N", "aspartate": "D", "aspartic acid": "D",
    "cysteine": "C", "glutamine": "Q", "glutamate": "E", "glutamic acid": "E", "glycine": "G",
    "histidine": "H", "isoleucine": "I", "leucine": "L", "lysine": "K", "methionine": "M",
    "phenylalanine": "F", "proline": "P", "serine": "S", "threonine": "T", "tryptophan": "W",
    "tyrosine": "Y", "valine": "V",
}  # fmt: skip
AA1 = "ACDEFGHIKLMNPQRSTVWY"
STOP_WORDS = ("*", "x", "ter", "stop", "term")

_A1 = f"[{AA1}]"
_A3 = "(?:" + "|".join(sorted((k.capitalize() for k in AA3 if k != "ter"), key=len, reverse=True)) + ")"
_A3I = "(?i:" + "|".join(k for k in AA3 if k != "ter") + ")"  # three-letter, any case (CIViC upper-cases)
_ANAME = "(?i:" + "|".join(sorted(AA_NAMES, key=len, reverse=True)) + ")"
_STOP = r"(?:\*|X|Ter|stop|STOP|Stop)"
_L = r"(?<![A-Za-z0-9_.\-+*>])"  # left boundary of a mention
_R = r"(?![A-Za-z0-9_+>])"  # right boundary
_NUC = "[ACGTU]"


class VariantMention(NamedTuple):
    """One variant found in a text: character offsets, covered text, canonical key."""

    start: int
    end: int
    text: str
    key: str


def _aa(token: str) -> str:
    """One-letter code of an amino acid written as 1 or 3 letters or a stop word."""
    low = token.lower()
    if low in STOP_WORDS:
        return "*"
    if low in AA3:
        return AA3[low]
    if low in AA_NAMES:
        return AA_NAMES[low]
    if low == "=":
        return "="
    return token.upper()


def _seq(text: str) -> str:
    """An amino-acid sequence in one-letter code ("GluAla" -> "EA", "fqea" -> "FQEA")."""
    if not text:
        return ""
    three = re.fullmatch(rf"(?:{_A3I})+", text)
    if three and len(text) % 3 == 0 and not re.fullmatch(f"{_A1}+", text):
        return "".join(_aa(text[i : i + 3]) for i in range(0, len(text), 3))
    return text.upper()


# --- protein notation -------------------------------------------------------------------

_AA_ANY = rf"(?:{_A3}|{_A1})"
_PREFIX = r"(?:p\.\s?(?P<open>\()?)?"
_CLOSE = r"(?(open)\))"
_FS = r"(?:fs|FS|Fs|frameshift)(?:\s?(?:\*|X|Ter|x)\s?\d*|\d+)?"

_P_FS = re.compile(rf"{_L}{_PREFIX}(?P<ref>{_AA_ANY})(?P<pos>\d{{1,5}})(?P<alt>{_AA_ANY})?{_FS}{_CLOSE}{_R}")
_P_RANGE = re.compile(
    rf"{_L}{_PREFIX}(?P<r1>{_AA_ANY})(?P<p1>\d{{1,5}})(?:_(?P<r2>{_AA_ANY})(?P<p2>\d{{1,5}}))?"
    rf"(?P<op>delins|del|ins|dup|DELINS|DEL|INS|DUP)(?P<seq>(?:{_A3}|[A-Z])*){_CLOSE}{_R}"
)
_P_SUB1 = re.compile(rf"{_L}(?P<pre>p\.\s?(?P<open>\()?)?(?P<ref>{_A1})(?P<pos>\d{{1,5}})(?P<alt>{_A1}|\*|X|=){_CLOSE}(?![A-Za-z0-9_])")
_P_SUB3 = re.compile(
    rf"{_L}{_PREFIX}(?P<ref>{_A3})\s?[-(]?\s?(?P<pos>\d{{1,5}})\)?\s?(?:-->|->|→|-|to\s)?\s?"
    rf"(?P<alt>{_A3}|{_STOP}|=){_CLOSE}{_R}"
)
_P_STOPWORD = re.compile(rf"{_L}(?P<ref>{_A1})(?P<pos>\d{{1,5}})(?P<alt>stop|Stop|STOP|Ter)\b")
_P_NAMES = re.compile(
    rf"(?<![A-Za-z])(?P<ref>{_ANAME})[\s-]?\(?(?P<pos>\d{{1,5}})\)?\s?(?:(?:-->|->|→|to|by|>|-)\s?)?(?P<alt>{_ANAME}|stop)\b"
)

# --- DNA notation -----------------------------------------------------------------------

_POS = r"[-*]?\d+(?:\s?[+-]\s?\d+)?(?:_[-*]?\d+(?:[+-]\d+)?)?"
_ARROW = r"\s?(?:>|-->|->|→)\s?"
_D_SUB = re.compile(
    rf"{_L}(?:(?P<pre>[cgmnr])\.\s?)?(?P<pos>{_POS})\s?(?P<ref>{_NUC})(?:{_ARROW})(?P<alt>{_NUC})(?![A-Za-z0-9])"
)
_D_OP = re.compile(
    rf"{_L}(?:(?P<pre>[cgmnr])\.\s?)(?P<pos>{_POS})(?P<op>delins|del|ins|dup|inv)(?P<seq>{_NUC}+|\d+)?(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_D_BARE_OP = re.compile(
    rf"{_L}(?P<pos>\d+(?:[+-]\d+)?(?:[_-]\d+(?:[+-]\d+)?)?)(?P<op>delins|del|ins|dup|DEL|INS|DUP)(?:\s?(?P<seq>{_NUC}+|\d+))?(?![A-Za-z0-9])"
)
_IVS = re.compile(
    rf"{_L}IVS\s?(?P<n>\d+)\s?(?P<sign>[+-])\s?(?P<off>\d+)\s?(?:(?P<ref>{_NUC})(?:{_ARROW})(?P<alt>{_NUC})"
    rf"|(?P<op>del|ins|dup)(?P<seq>{_NUC}*))(?![A-Za-z0-9])"
)
_RS = re.compile(r"(?<![A-Za-z0-9])[rR][sS]\s?(?P<num>\d{3,})(?![0-9])")

# --- fusions and CIViC categories -------------------------------------------------------

_GENE = r"[A-Z][A-Z0-9]{1,9}(?:-[A-Z0-9]{1,4})?"
_FUSION = re.compile(rf"(?<![A-Za-z0-9])(?P<g1>{_GENE}|v)::(?P<g2>{_GENE}|v|\?)(?![A-Za-z0-9])")

CATEGORIES: dict[str, str] = {
    # CIViC variant name (lower case) -> canonical key; regexes below say how text says it.
    "mutation": "Mutation", "mutations": "Mutation", "mutant": "Mutation", "mut": "Mutation",
    "amplification": "Amplification", "amplified": "Amplification", "amp": "Amplification",
    "fusion": "Fusion", "fusions": "Fusion", "rearrangement": "Rearrangement",
    "translocation": "Rearrangement", "overexpression": "Overexpression",
    "underexpression": "Underexpression", "expression": "Expression", "loss": "Loss",
    "deletion": "Deletion", "loss-of-function": "Loss-of-function",
    "loss of function": "Loss-of-function", "gain-of-function": "Gain-of-function",
    "gain of function": "Gain-of-function", "itd": "ITD", "internal tandem duplication": "ITD",
    "wildtype": "Wildtype", "wild-type": "Wildtype", "wild type": "Wildtype",
    "frameshift": "Frameshift", "frameshift truncation": "Frameshift Truncation",
    "truncating mutation": "Truncating Mutation", "inactivating mutation": "Inactivating Mutation",
    "activating mutation": "Activating Mutation", "deleterious mutation": "Deleterious Mutation",
    "methylation": "Methylation", "promoter methylation": "Promoter Methylation",
    "promoter hypermethylation": "Promoter Hypermethylation", "promoter mutation": "Promoter Mutation",
    "phosphorylation": "Phosphorylation", "copy number variation": "Copy Number Variation",
    "loh": "LOH", "loss of heterozygosity": "LOH", "biallelic inactivation": "Biallelic Inactivation",
    "kinase domain mutation": "Kinase Domain Mutation", "tkd mutation": "TKD Mutation",
    "alteration": "Alteration", "nuclear expression": "Nuclear Expression",
    "cytoplasmic expression": "Cytoplasmic Expression", "high": "High",
    "serum levels": "Serum Levels", "egfrviii": "EGFRvIII", "viii": "EGFRvIII", "viii deletion": "EGFRvIII",
}  # fmt: skip

_EXON = re.compile(
    r"(?i)^exons?\s?(?P<exons>\d+(?:\s?-\s?\d+)?)\s+(?P<what>[a-z][a-z -]*?)s?$"
)
_EXON_KINDS = {
    "deletion": "Deletion", "del": "Deletion", "insertion": "Insertion", "ins": "Insertion",
    "mutation": "Mutation", "skipping": "Skipping", "skipping mutation": "Skipping Mutation",
    "duplication": "Duplication", "frameshift": "Frameshift", "overexpression": "Overexpression",
}  # fmt: skip

# How text says a category; used when a curator's variant is a category (matching.py).
CATEGORY_PATTERNS: dict[str, str] = {
    "Mutation": r"mutat\w*|mutant\w*",
    "Amplification": r"amplif\w*|copy[- ]number gains?",
    "Fusion": r"fusions?|fused|rearrange\w*|translocat\w*|chimeric",
    "Rearrangement": r"rearrange\w*|translocat\w*|fusions?",
    "Overexpression": r"over-?express\w*|high(?:er)? (?:levels? of )?expression|up-?regulat\w*",
    "Underexpression": r"under-?express\w*|low(?:er)? expression|down-?regulat\w*|reduced expression",
    "Expression": r"express\w*",
    "Loss": r"loss(?:es)?|deleted|deletions?|lost|absen(?:t|ce)|null|inactivat\w*",
    "Deletion": r"delet\w*|del\b",
    "Loss-of-function": r"loss[- ]of[- ]function|inactivat\w*|LOF\b",
    "Gain-of-function": r"gain[- ]of[- ]function|activating",
    "ITD": r"ITDs?\b|internal tandem duplications?",
    "Wildtype": r"wild[- ]?type|\bWT\b",
    "Frameshift": r"frame-?shift\w*",
    "Frameshift Truncation": r"frame-?shift\w*|truncat\w*",
    "Truncating Mutation": r"truncat\w*|nonsense",
    "Methylation": r"methylat\w*",
    "Promoter Methylation": r"promoter (?:hyper)?methylat\w*|methylat\w* (?:of the )?promoter",
    "Promoter Hypermethylation": r"promoter (?:hyper)?methylat\w*|(?:hyper)?methylat\w* (?:of the )?promoter",
    "Phosphorylation": r"phosphorylat\w*",
    "Copy Number Variation": r"copy[- ]number",
    "LOH": r"\bLOH\b|loss of heterozygosity",
    "EGFRvIII": r"EGFR\s?vIII|EGFRVIII|\bvIII\b|de2-7",
}  # fmt: skip


def variant_category(text: str, loose: bool = False) -> str | None:
    """The CIViC category key of a variant name ("amplification" -> "Amplification").

    Exon-level names keep their exon: "EXON 19 DELETION" -> "Exon 19 Deletion". With
    ``loose``, any name ending in a category word ("p16 Expression", "DNA Binding Domain
    Mutation") is a category too, keyed by its title-cased text.

    Returns None when ``text`` is not a category.
    """
    clean = " ".join(text.strip().split())
    low = clean.lower()
    if low in CATEGORIES:
        return CATEGORIES[low]
    exon = _EXON.match(clean)
    if exon:
        what = exon.group("what").strip().lower()
        kind = _EXON_KINDS.get(what) or _title(what)
        return f"Exon {exon.group('exons').replace(' ', '')} {kind}"
    if loose and low.endswith(_CATEGORY_TAILS):
        return _title(clean)
    return None


_CATEGORY_TAILS = (" mutation", " expression", " deletion", " rearrangement", " methylation", " loss")


def _title(text: str) -> str:
    """Title-case the all-lower-case or all-upper-case words, keep symbols ("CD44s") as written."""
    words = []
    for word in text.split():
        plain = word.isalpha() and (word.islower() or (word.isupper() and len(word) > 3))
        words.append(word.capitalize() if plain else word)
    return " ".join(words)


def category_regex(key: str) -> re.Pattern[str] | None:
    """A regex for how abstracts mention a category variant, or None when there is none.

    ``Exon 19 Deletion`` matches "exon 19 deletion", "deletions in exon 19", "ex19del",
    "del19"; the plain categories use :data:`CATEGORY_PATTERNS`.
    """
    exon = re.fullmatch(r"Exon (\d+(?:-\d+)?) (.+)", key)
    if exon:
        number, kind = exon.group(1), exon.group(2).split()[0].lower()
        stem = {"deletion": r"del\w*", "insertion": r"ins\w*", "skipping": r"skip\w*",
                "duplication": r"dup\w*"}.get(kind, re.escape(kind[:5]) + r"\w*")  # fmt: skip
        short = {"deletion": "del", "insertion": "ins", "skipping": "skip", "duplication": "dup"}.get(kind, kind)
        return re.compile(
            rf"(?i)\bexons?\s?{number}\b[\w\s-]{{0,20}}?\b{stem}"
            rf"|\b{stem}[\w\s-]{{0,20}}?\bexons?\s?{number}\b|\bex{number}\s?{short}\w*|\b{short}\s?{number}\b"
        )
    pattern = CATEGORY_PATTERNS.get(key)
    if pattern is None and " " not in key:
        pattern = re.escape(key.lower()) + r"\w*"
    return re.compile(rf"(?i)(?<![A-Za-z0-9])(?:{pattern})(?![A-Za-z0-9])") if pattern else None


# --- key builders ------------------------------------------------------------------------


def _protein_key(ref: str, pos: str, alt: str) -> str:
    ref_1, alt_1 = _aa(ref), _aa(alt)
    if alt_1 == "=":
        alt_1 = ref_1
    return f"{ref_1}{int(pos)}{alt_1}"


def _range_key(m: re.Match[str]) -> str:
    left = f"{_aa(m['r1'])}{int(m['p1'])}"
    if m["r2"]:
        left += f"_{_aa(m['r2'])}{int(m['p2'])}"
    op = m["op"].lower()
    seq = _seq(m["seq"] or "")
    # A deleted or duplicated sequence is implied by the range; inserted ones are not.
    return left + op + (seq if op in ("ins", "delins") else "")


def _dna_pos(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _dna_op_key(prefix: str, m: re.Match[str]) -> str:
    op = m["op"].lower()
    seq = (m["seq"] or "").upper()
    return f"{prefix}.{_dna_pos(m['pos'])}{op}" + (seq if op in ("ins", "delins") and not seq.isdigit() else "")


def _key_of_match(name: str, m: re.Match[str]) -> str:
    """Canonical key of a match of one of the module regexes, by regex name."""
    if name == "fs":
        return f"{_aa(m['ref'])}{int(m['pos'])}fs"
    if name == "range":
        return _range_key(m)
    if name in ("sub1", "sub3", "stopword", "names"):
        return _protein_key(m["ref"], m["pos"], m["alt"])
    if name == "dsub":
        return f"{(m['pre'] or 'c').lower()}.{_dna_pos(m['pos'])}{m['ref'].upper()}>{m['alt'].upper()}"
    if name == "dop":
        return _dna_op_key(m["pre"].lower(), m)
    if name == "bareop":
        return _dna_op_key("c", m)
    if name == "ivs":
        where = f"IVS{m['n']}{m['sign']}{m['off']}"
        if m["ref"]:
            return f"{where}{m['ref'].upper()}>{m['alt'].upper()}"
        return where + m["op"].lower() + (m["seq"] or "").upper() * (m["op"].lower() == "ins")
    if name == "rs":
        return f"rs{m['num']}"
    if name == "fusion":
        return f"{m['g1']}::{m['g2']}"
    raise ValueError(f"unknown variant regex {name!r}")


# Finder regexes in priority order: on overlap the longer match wins, then the earlier one.
_FINDERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("fs", _P_FS),
    ("range", _P_RANGE),
    ("sub3", _P_SUB3),
    ("stopword", _P_STOPWORD),
    ("sub1", _P_SUB1),
    ("names", _P_NAMES),
    ("dsub", _D_SUB),
    ("dop", _D_OP),
    ("ivs", _IVS),
    ("bareop", _D_BARE_OP),
    ("rs", _RS),
    ("fusion", _FUSION),
)

_CODON = re.compile(rf"(?:p\.\s?)?(?P<ref>{_A3}|{_A1})(?P<pos>\d{{1,5}})")
_ALTS = re.compile(rf"(?:p\.\s?)?(?P<ref>{_A3}|{_A1})(?P<pos>\d{{1,5}})(?P<alts>(?:{_A1}|\*)(?:/(?:{_A1}|\*))+)")
_GENE_PREFIX = re.compile(r"^(?P<gene>[A-Z][A-Za-z0-9-]{1,15})\s+(?P<rest>.+)$")


def variant_keys(text: str) -> list[str]:
    """Every key a variant name stands for, most specific first.

    "R167W (c.499C>T)" -> ["R167W", "c.499C>T"]; "Q157P/R" -> ["Q157P", "Q157R"];
    "BRAF V600E" -> ["V600E"] (a leading gene symbol is dropped); "BCR::ABL1 Fusion" ->
    ["BCR::ABL1"]. Returns [] when the text is not a variant this module knows.
    """
    clean = " ".join(text.strip().split())
    if not clean:
        return []
    keys = _keys(clean)
    if not keys:
        prefixed = _GENE_PREFIX.match(clean)
        if prefixed:
            keys = _keys(prefixed["rest"])
    if not keys:
        loose = variant_category(clean, loose=True)
        keys = [loose] if loose else []
    return list(dict.fromkeys(keys))


def _keys(clean: str) -> list[str]:
    fusion = _FUSION.match(clean)
    if fusion:  # "EML4::ALK Fusion", "EML4::ALK e6::e20": the partner genes are the key
        return [_key_of_match("fusion", fusion)]
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
        return [_protein_key(alts["ref"], alts["pos"], a) for a in alts["alts"].split("/")]
    for name, regex in _FINDERS:
        found = regex.fullmatch(part)
        if found:
            return [_key_of_match(name, found)]
    spaced = re.fullmatch(rf"(?:p\.\s?)?({_A1})\s+(\d{{1,5}})\s+({_A1}|\*|X)", part)
    if spaced:  # "V 600 E": too loose to find in text, fine as typed by a curator
        return [_protein_key(*spaced.groups())]
    codon = _CODON.fullmatch(part)
    if codon:
        return [f"{_aa(codon['ref'])}{int(codon['pos'])}"]
    if re.fullmatch(rf"{_A1}\d+(?:/{_A1}\d+)+", part):  # "G12/G13"
        return part.split("/")
    return []


def normalise_variant(text: str) -> str | None:
    """The canonical key of a variant name, or None when it is not a known notation.

    Example:
        >>> normalise_variant("p.Val600Glu"), normalise_variant("Val 600 Glu")
        ('V600E', 'V600E')
    """
    keys = variant_keys(text)
    return keys[0] if keys else None


def find_variants(text: str) -> list[VariantMention]:
    """Every variant notation in free text, non-overlapping, in text order.

    Finds protein (one- and three-letter, ``p.``), DNA (``c.``/``g.``, bare ``677C>T``,
    ``IVS``), dbSNP and ``A::B`` fusion notation, and amino-acid names ("arginine 150
    proline"). Category words ("amplification", "mutation") are not reported here: they
    are too common to highlight; see :func:`category_regex`.
    """
    found: list[tuple[int, int, int, str]] = []
    for rank, (name, regex) in enumerate(_FINDERS):
        for m in regex.finditer(text):
            if name == "sub1" and not _plausible_sub1(m):
                continue
            found.append((m.start(), m.end(), rank, _key_of_match(name, m)))
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
    codon ("V600E", "V600fs", "V600del"); a fusion with an unknown partner ("v::ALK")
    by any fusion of that gene.
    """
    if query == found:
        return True
    if re.fullmatch(rf"{_A1}\d+", query):
        return re.match(rf"{re.escape(query)}(?!\d)", found) is not None
    fusion = re.fullmatch(r"(.+)::(.+)", query)
    other = re.fullmatch(r"(.+)::(.+)", found)
    if fusion and other:
        g1, g2 = fusion.groups()
        return g1 in ("v", "?", other[1]) and g2 in ("v", "?", other[2]) and (g1, g2) != ("v", "v")
    return False
