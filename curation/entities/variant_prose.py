"""Variants written in prose or legacy notation, for :func:`curation.entities.variants.find_variants`.

Abstracts (BioRED annotates these as SequenceVariant) describe many variants without HGVS:
"tryptophan to arginine substitution at amino acid 10", "C to T transition at nucleotide
3916", "alanine for valine at position 88", promoter SNPs such as "G-395A", "-1082(G/A)",
"-511CC", "+3100 T/G", sizes such as "32-bp deletion", repeats such as "(CCTTT)14".
The forms here were collected from BioRED *Train*; Dev and Test stay for measurement.

Keys follow :mod:`curation.entities.variants` where a position and both alleles are known
("W10R", "c.3916C>T"); other forms get a compact key of their own ("c.-511CC",
"32bp deletion", "(CCTTT)14", "I/V").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from curation.entities.amino_acids import AA3, AA_NAMES

_NUC_NAMES = {"adenine": "A", "cytosine": "C", "guanine": "G", "thymine": "T", "thymidine": "T", "uracil": "U"}
_THREE = "|".join(k.capitalize() for k in AA3 if k != "ter")
# Names in any case; three-letter codes capitalised only ("his", "met" and "pro" are words).
_AA_WORD = "(?:(?i:" + "|".join(sorted(AA_NAMES, key=len, reverse=True)) + f")|{_THREE})"
# An amino acid in prose: "arginine", "Arg", "Arginine (R)", "a stop", "glutamic acid residue (GAA)".
_AA_BARE = rf"(?:premature\s)?(?:{_AA_WORD}|(?i:stop|termination))(?:\s\(\w{{1,3}}\))?(?:\s(?:residue|codon))?"
_AA = rf"(?:an?\s)?{_AA_BARE}"  # after "to", "by", "for": "to a stop codon"
_NUC = rf"(?:[ACGT]|(?i:{'|'.join(_NUC_NAMES)}))"
_TO = r"(?:\s?(?:-->|->|→|>|---+>?|-to-)\s?|\s(?:to|by|with|into)\s)"
_CHANGE = r"(?:\s(?:point\s)?(?:substitution|mutation|transition|transversion|change|replacement))?"
_SITE_WORD = r"(?:amino[- ]acid|codon|residue|nucleotide|position|base|nt)(?:\s(?:position|number))?\s"
# "at nucleotide 3916", "at the codon 326", "at 33468"; not "at the 5' end".
_SITE = rf"(?:\s(?:was\s)?(?:identified\s)?(?:at|in)\s(?:(?:the\s)?{_SITE_WORD}|(?=[-+]?\d+(?![\d'\u2032]))))"
# A signed position may follow a gene symbol ("FOXP3-924 A/G", "IL8-251A/A") but not a
# number ("10-20") or a word.
_SIGNED_LEFT = r"(?:(?<=[A-Z]\d)|(?<![a-z\d.]))"

_PROSE: tuple[tuple[str, re.Pattern[str]], ...] = (
    # "tryptophan to arginine substitution at amino acid 10", "Lys to Asn at position 198"
    ("aa_to_at", re.compile(rf"(?<![\w-])(?P<ref>{_AA_BARE}){_TO}(?P<alt>{_AA}){_CHANGE}{_SITE}(?P<pos>\d{{1,5}})\b")),
    # "alanine for valine at position 88": the first replaces the second
    (
        "aa_for_at",
        re.compile(
            rf"(?<![\w-])(?P<alt>{_AA_BARE})\sfor\s(?:the\s)?(?P<ref>{_AA}){_CHANGE}{_SITE}(?P<pos>\d{{1,5}})\b"
        ),
    ),
    # "arginine at amino acid position 229 by glycine"
    (
        "aa_at_by",
        re.compile(rf"(?<![\w-])(?P<ref>{_AA_BARE}){_SITE}(?P<pos>\d{{1,5}})\s(?:by|to|with|into)\s(?P<alt>{_AA})\b"),
    ),
    # "threonine to alanine substitution", "from glutamic acid to a stop codon": no position
    (
        "aa_to",
        re.compile(
            rf"(?:(?<=from\s)|(?<![\w-])(?=\w+(?:\s\w+)?{_TO}\S+(?:\s\S+){{0,2}}\s(?:substitution|mutation|exchange)))"
            rf"(?P<ref>(?i:{'|'.join(sorted(AA_NAMES, key=len, reverse=True))})){_TO}(?P<alt>{_AA})(?![\w-])"
        ),
    ),
    # "157delMTTTVP": a protein deletion by position and residues
    ("aa_op", re.compile(r"(?<![\w.-])(?P<pos>\d{1,5})(?P<op>del|ins|dup)(?P<seq>[A-Z]{2,})(?![\w])")),
    # "codon 358, tyrosine to histidine", "326 from Ser to Cys"
    (
        "codon_aa",
        re.compile(rf"(?<![\w-])(?:codon\s)?(?P<pos>\d{{1,5}}),?\s(?:from\s)?(?P<ref>{_AA_BARE}){_TO}(?P<alt>{_AA})\b"),
    ),
    # "272gly----stop", "273ser----phe"
    ("pos_aa_aa", re.compile(rf"(?<![\w-])(?P<pos>\d{{1,5}})(?P<ref>{_AA_WORD}){_TO}(?P<alt>{_AA_WORD}|stop)\b")),
    # "C to T transition at nucleotide 3916", "(G-->A) at nucleotide position 2141"
    (
        "nuc_to_at",
        re.compile(rf"\(?(?<![\w-])(?P<ref>{_NUC}){_TO}(?P<alt>{_NUC})\)?{_CHANGE}{_SITE}(?P<pos>[-+]?\d{{1,6}})\b"),
    ),
    # "G-->A", "C to T transition": a nucleotide change with no position ("A to C" alone
    # is as often a range of figure panels)
    ("nuc_to", re.compile(r"(?<![\w/-])(?P<ref>[ACGT])\s?(?:-->|->|→|>)\s?(?P<alt>[ACGT])(?![\w/-])")),
    (
        "nuc_to",
        re.compile(
            r"(?<![\w/-])(?P<ref>[ACGT])(?:\sto\s|-to-)(?P<alt>[ACGT])\s(?:substitution|mutation|transition|transversion|change)"
        ),
    ),
    # "T deletion at 5063", "deletion of C at nucleotide 888", "T insertion at 7916 and 7917"
    (
        "nuc_op_at",
        re.compile(
            r"(?<![\w-])(?P<seq>[ACGT]{1,10})\s(?:nucleotide\s)?(?P<op>deletion|insertion|duplication)\sat\s(?:nucleotide\s|position\s)?(?P<pos>\d{1,6}(?:\sand\s\d{1,6})?)\b"
        ),
    ),
    (
        "op_nuc_at",
        re.compile(
            r"(?<![\w-])(?P<op>deletion|insertion|duplication)\sof\s(?:an?\s)?(?P<seq>[ACGT]{1,10})\sat\s(?:nucleotide\s|position\s)?(?P<pos>\d{1,6})\b"
        ),
    ),
    # legacy promoter notation: "G-395A", "C-1228T", "A 1166C", "C-344 T"
    ("legacy", re.compile(r"(?<![\w/-])(?P<ref>[ACGT])\s?(?P<pos>[-+]\d{1,5}|\s\d{3,5})\s?(?P<alt>[ACGT])(?![\w/])")),
    # alleles: "-1082(G/A)", "1858C/T", "+3100 T/G", "-924, A/G", "IVS9+459, A/G"
    (
        "alleles",
        re.compile(
            rf"(?:(?<![\w.+-])(?P<pos>IVS\d+[-+]\d+|\d{{2,6}})|{_SIGNED_LEFT}(?P<sign>[-+]\d{{1,6}}))"
            r",?\s?(?P<open>\()?(?P<ref>[ACGT])/(?P<alt>[ACGT])(?(open)\))(?![\w/])"
        ),
    ),
    # genotypes at a signed position: "-511CC", "-3279 AC+AA", "IVS9+459 GG", "-930G"
    (
        "genotype",
        re.compile(_SIGNED_LEFT + r"(?P<pos>(?:IVS\d+)?[-+]\d{1,6})\s?(?P<gt>[ACGT]{1,2}(?:\+[ACGT]{2})?)(?![\w/>])"),
    ),
    ("allele_at", re.compile(r"(?<![\w-])(?P<gt>[ACGT])\sallele\s(?:at|for)\s(?:the\s)?(?P<pos>[-+]?\d{1,6})\b")),
    # sizes: "32-bp deletion", "96 bp insertion", "dup24bp", "19-base pair deletion", "5.5 kb deletion"
    (
        "size",
        re.compile(
            r"(?<![\w-])(?P<n>\d+(?:\.\d)?|one|two|three|four|five|six|seven|eight|nine|ten)[- ]?"
            r"(?P<unit>bp|base[- ]pairs?|basepairs?|nt|nucleotides?|kb|Mb)"
            r"(?:\s\([ACGT]+\))?\s(?:genomic\s)?(?P<op>insertion/deletion|ins/del|insertion|deletion|duplication|indel)s?\b",
            re.I,
        ),
    ),
    ("size_op", re.compile(r"(?<![\w-])(?P<op>dup|del|ins)(?P<n>\d+)\s?(?P<unit>bp|nt)\b")),
    # repeats: "(CCTTT)14", "CAG repeat"
    ("repeat", re.compile(r"(?<![\w])\((?P<unit>[ACGT]{2,6})\)n?(?P<n>\d{1,3})(?![\w])")),
    ("repeat_word", re.compile(r"(?<![\w-])(?P<unit>[ACGT]{3})\s(?:trinucleotide\s)?repeats?\b")),
)

_NUMBERS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}


def _one(word: str) -> str:
    """One-letter code of an amino acid or nucleotide in prose ("a stop codon" -> "*")."""
    low = re.sub(r"\s\(\w+\)|\s(?:residue|codon)$|^(?:an?\s)?(?:premature\s)?", "", word.strip().lower()).strip()
    if low in ("stop", "termination"):
        return "*"
    return AA_NAMES.get(low) or AA3.get(low) or _NUC_NAMES.get(low) or low.upper()


def _key(name: str, m: re.Match[str]) -> str:
    if name in ("aa_to_at", "aa_for_at", "aa_at_by", "codon_aa", "pos_aa_aa"):
        return f"{_one(m['ref'])}{int(m['pos'])}{_one(m['alt'])}"
    if name == "nuc_to_at":
        return f"c.{m['pos']}{_one(m['ref'])}>{_one(m['alt'])}"
    if name == "aa_to":
        return f"{_one(m['ref'])}?{_one(m['alt'])}"
    if name == "aa_op":
        return f"p.{m['pos']}{m['op']}{m['seq']}"
    if name == "nuc_to":
        return f"{m['ref']}>{m['alt']}"
    if name in ("nuc_op_at", "op_nuc_at"):
        op = {"deletion": "del", "insertion": "ins", "duplication": "dup"}[m["op"]]
        return f"c.{m['pos'].split()[0]}{op}" + (m["seq"] if op == "ins" else "")
    if name == "alleles":
        return f"c.{m['pos'] or m['sign']}{m['ref']}>{m['alt']}"
    if name == "legacy":
        return f"c.{m['pos'].strip()}{m['ref']}>{m['alt']}"
    if name in ("genotype", "allele_at"):
        return f"c.{m['pos']}{m['gt']}"
    if name in ("size", "size_op"):
        n = m["n"].lower()
        unit = "bp" if m["unit"].lower().startswith(("b", "nt", "nuc")) else m["unit"]
        op = {"del": "deletion", "ins": "insertion", "dup": "duplication", "ins/del": "indel"}.get(m["op"].lower())
        return f"{_NUMBERS.get(n, n)}{unit} {op or m['op'].lower()}"
    if name in ("repeat", "repeat_word"):
        return f"({m['unit']}){m['n']}" if name == "repeat" else f"{m['unit']} repeat"
    raise ValueError(f"unknown prose regex {name!r}")


def find_prose(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, key) of every prose or legacy variant description; may overlap."""
    for name, regex in _PROSE:
        for m in regex.finditer(text):
            yield m.start(), m.end(), _key(name, m)
