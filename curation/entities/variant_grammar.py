"""The grammar of variant notation: one regular expression per notation, in priority order, and the
canonical key each match gives (:func:`key_of_match`).

:mod:`curation.entities.variants` reads typed names and free text with these; the key forms are
listed there.
"""

from __future__ import annotations

import re

from curation.entities.amino_acids import AA1, AA3, AA_NAMES

STOP_WORDS = ("*", "x", "ter", "stop", "term")

A1 = f"[{AA1}]"  # one amino acid, one-letter code
A3 = "(?:" + "|".join(sorted((k.capitalize() for k in AA3 if k != "ter"), key=len, reverse=True)) + ")"
_A3I = "(?i:" + "|".join(k for k in AA3 if k != "ter") + ")"  # three-letter, any case (CIViC upper-cases)
_ANAME = "(?i:" + "|".join(sorted(AA_NAMES, key=len, reverse=True)) + ")"
_STOP = r"(?:\*|X|Ter|stop|STOP|Stop)"
_L = r"(?<![A-Za-z0-9_.\-+*>])"  # left boundary of a DNA mention ("-" belongs to positions)
_LP = r"(?<![A-Za-z0-9_.*>])"  # left boundary of a protein mention ("rs123-V274I", "*15+C1007G")
_R = r"(?![A-Za-z0-9_+>])"  # right boundary
_NUC = "[ACGTU]"


def one_letter(token: str) -> str:
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
    if three and len(text) % 3 == 0 and not re.fullmatch(f"{A1}+", text):
        return "".join(one_letter(text[i : i + 3]) for i in range(0, len(text), 3))
    return text.upper()


# --- protein notation -------------------------------------------------------------------

_AA_ANY = rf"(?:{A3}|{A1})"
_PREFIX = r"(?:p\.\s?(?P<open>\()?)?"
_CLOSE = r"(?(open)\))"
_FS = r"(?:fs|FS|Fs|frameshift)(?:\s?(?:\*|X|Ter|x)\s?\d*|\d+)?"

_P_FS = re.compile(rf"{_LP}{_PREFIX}(?P<ref>{_AA_ANY})(?P<pos>\d{{1,5}})(?P<alt>{_AA_ANY})?{_FS}{_CLOSE}{_R}")
_P_RANGE = re.compile(  # "E746_A750del", and the older "E746-A750del"
    rf"{_LP}{_PREFIX}(?P<r1>{_AA_ANY})(?P<p1>\d{{1,5}})(?:[_-](?P<r2>{_AA_ANY})(?P<p2>\d{{1,5}}))?"
    rf"(?P<op>delins|del|ins|dup|DELINS|DEL|INS|DUP)(?P<seq>(?:{A3}|[A-Z])*){_CLOSE}{_R}"
)
_P_SUB1 = re.compile(
    rf"{_LP}(?P<pre>p\.\s?(?P<open>\()?)?(?P<ref>{A1})(?P<pos>\d{{1,5}})(?P<alt>{A1}|\*|X|=){_CLOSE}(?![A-Za-z0-9_])"
)
_P_SUB3 = re.compile(
    rf"{_LP}{_PREFIX}(?P<ref>{A3})\s?[-(]?\s?(?P<pos>\d{{1,5}})\)?\s?(?:-->|->|→|-|to\s)?\s?"
    rf"(?P<alt>{A3}|{_STOP}|=){_CLOSE}{_R}"
)
# A substitution glued to a lower-case prefix: "KrasG12D", "sG145R", "hGRalphaD401H".
_P_GLUED = re.compile(rf"(?<=[a-z])(?P<ref>{A1})(?P<pos>\d{{2,5}})(?P<alt>{A1})(?![A-Za-z0-9_])")
_P_STOPWORD = re.compile(rf"{_LP}(?P<ref>{A1})(?P<pos>\d{{1,5}})(?P<alt>stop|Stop|STOP|Ter)\b")
_P_NAMES = re.compile(
    rf"(?<![A-Za-z])(?P<ref>{_ANAME})[\s-]?\(?(?P<pos>\d{{1,5}})\)?\s?(?:(?:-->|->|→|to|by|>|-)\s?)?(?P<alt>{_ANAME}|stop)\b"
)

# --- DNA notation -----------------------------------------------------------------------

_POS = r"[-+*]?\d+(?:\s?[+-]\s?\d+)?(?:_[-*]?\d+(?:[+-]\d+)?)?"
_ARROW = r"\s?(?:>|-->|->|→)\s?"
_D_SUB = re.compile(
    rf"{_L}(?:(?P<pre>[cgmnr])\.\s?)?(?P<pos>{_POS})\s?(?P<ref>{_NUC})(?:{_ARROW})(?P<alt>{_NUC})(?![A-Za-z0-9])"
)
_D_OP = re.compile(
    rf"{_L}(?:(?P<pre>[cgmnr])\.\s?)(?P<pos>{_POS})(?P<op>delins|del|ins|dup|inv)(?P<seq>{_NUC}+|\d+)?(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_D_BARE_OP = re.compile(
    rf"{_L}(?P<pos>[-+]?\d+(?:[+-]\d+)?(?:[_-]\d+(?:[+-]\d+)?)?)\s?(?P<op>delins|del|ins|dup|DEL|INS|DUP)(?:\s?(?P<seq>{_NUC}+|\d+))?(?![A-Za-z0-9])"
)
_D_LETTERS = re.compile(rf"{_L}(?P<pre>[cg])\.(?P<ref>{_NUC})(?P<pos>\d+)(?P<alt>{_NUC})(?![A-Za-z0-9])")  # c.G1714C
_D_DELPOS = re.compile(rf"(?<![A-Za-z0-9])(?P<op>del|ins)(?P<pos>\d+)(?P<seq>{_NUC}+)(?![A-Za-z0-9])")  # del642T
_DELTA = re.compile(r"(?<![A-Za-z0-9])(?:[Dd]elta|\u0394|\u2206|DD)\s?(?P<pos>\d{2,5}(?:-\d{2,5})?)(?![A-Za-z0-9])")
_P_CODON = re.compile(rf"(?<![A-Za-z0-9])p\.\s?(?P<ref>{A3}|{A1})(?P<pos>\d{{1,5}})(?![A-Za-z0-9_])")
_IVS = re.compile(
    rf"{_L}IVS\s?(?P<n>\d+)\s?(?P<sign>[+-])\s?(?P<off>\d+)\s?(?:(?P<ref>{_NUC})(?:{_ARROW})(?P<alt>{_NUC})"
    rf"|(?P<op>del|ins|dup)(?P<seq>{_NUC}*))(?![A-Za-z0-9])"
)
_RS = re.compile(r"(?<![A-Za-z0-9])[rR][sS]\s?(?P<num>\d{3,})(?![0-9])")

# --- fusions ------------------------------------------------------------------------------

_GENE = r"[A-Z][A-Z0-9]{1,9}(?:-[A-Z0-9]{1,4})?"
FUSION = re.compile(rf"(?<![A-Za-z0-9])(?P<g1>{_GENE}|v)::(?P<g2>{_GENE}|v|\?)(?![A-Za-z0-9])")


# --- key builders ------------------------------------------------------------------------


def protein_key(ref: str, pos: str, alt: str) -> str:
    """The key of a protein substitution: ``("Val", "600", "Glu")`` -> ``"V600E"`` (``=``: synonymous)."""
    ref_1, alt_1 = one_letter(ref), one_letter(alt)
    if alt_1 == "=":
        alt_1 = ref_1
    return f"{ref_1}{int(pos)}{alt_1}"


def _range_key(m: re.Match[str]) -> str:
    left = f"{one_letter(m['r1'])}{int(m['p1'])}"
    if m["r2"]:
        left += f"_{one_letter(m['r2'])}{int(m['p2'])}"
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


def key_of_match(name: str, m: re.Match[str]) -> str:
    """Canonical key of a match of one of the module regexes, by regex name."""
    if name == "fs":
        return f"{one_letter(m['ref'])}{int(m['pos'])}fs"
    if name == "range":
        return _range_key(m)
    if name in ("sub1", "sub3", "stopword", "names", "glued"):
        return protein_key(m["ref"], m["pos"], m["alt"])
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
    if name == "dletters":
        return f"{m['pre']}.{m['pos']}{m['ref']}>{m['alt']}"
    if name == "ddelpos":
        return f"c.{m['pos']}{m['op']}" + (m["seq"] if m["op"] == "ins" else "")
    if name == "delta":
        return f"\u0394{m['pos']}"  # "Delta32", "DD32" (an ASCII rendering of Δ32)
    if name == "pcodon":
        return f"{one_letter(m['ref'])}{int(m['pos'])}"
    if name == "rs":
        return f"rs{m['num']}"
    if name == "fusion":
        return f"{m['g1']}::{m['g2']}"
    raise ValueError(f"unknown variant regex {name!r}")


# The finder regexes in priority order: on overlap the longer match wins, then the earlier one.
FINDERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("fs", _P_FS),
    ("range", _P_RANGE),
    ("sub3", _P_SUB3),
    ("stopword", _P_STOPWORD),
    ("sub1", _P_SUB1),
    ("glued", _P_GLUED),
    ("names", _P_NAMES),
    ("dsub", _D_SUB),
    ("dop", _D_OP),
    ("ivs", _IVS),
    ("bareop", _D_BARE_OP),
    ("dletters", _D_LETTERS),
    ("ddelpos", _D_DELPOS),
    ("delta", _DELTA),
    ("pcodon", _P_CODON),
    ("rs", _RS),
    ("fusion", FUSION),
)
