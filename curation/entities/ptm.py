"""Post-translational modifications: PTM types and modified residues, as keys and in text.

A PTM record names a type ("phosphorylation") and a residue ("serine 473"). Text says the
type as a noun, verb or prefix ("phosphorylated", "phosphorylates", "phospho-AKT") and
the residue as a name, a three-letter or a one-letter code ("serine 473", "Ser-473",
"pSer473", "S473"). :func:`normalise_ptm` and :func:`normalise_residue` give one key for
each ("phosphorylation", "S473"); :func:`find_ptms` and :func:`find_residues` find them.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from curation.entities.amino_acids import AA1, AA3, AA_NAMES

# Canonical PTM type -> regex of its surface forms (noun, verb, adjective, prefix).
# Reverse modifications are their own types: dephosphorylation is not phosphorylation.
PTM_TYPES: dict[str, str] = {
    "phosphorylation": (
        r"(?:auto|trans)?phospho(?:rylat\w*|-|(?-i:(?=[A-Z])))|phosphosites?|phospho(?:serine|threonine|tyrosine)"
    ),
    "dephosphorylation": r"dephosphorylat\w*",
    "acetylation": r"(?:auto)?acetylat\w*|acetyl-(?=lysine|K)|acetyllysine",
    "deacetylation": r"deacetylat\w*",
    "methylation": r"(?:mono|di|tri)?methylat\w*|methyl(?:lysine|arginine)|dimethylarginine",
    "demethylation": r"demethylat\w*",
    "ubiquitination": r"(?:poly|mono|auto)?ubiquit(?:in)?(?:at|yl)\w*",
    "deubiquitination": r"deubiquit(?:in)?(?:at|yl)\w*",
    "sumoylation": r"sumoylat\w*|SUMOylat\w*",
    "neddylation": r"neddylat\w*",
    "glycosylation": r"(?:[NO]-)?glycosylat\w*|O-GlcNAcylat\w*|GlcNAcylat\w*",
    "palmitoylation": r"(?:S-)?palmitoylat\w*",
    "myristoylation": r"(?:N-)?myristoylat\w*",
    "prenylation": r"prenylat\w*|farnesylat\w*|geranylgeranylat\w*",
    "hydroxylation": r"hydroxylat\w*",
    "nitrosylation": r"(?:S-)?nitrosylat\w*",
    "citrullination": r"citrullinat\w*",
    "ADP-ribosylation": r"(?:poly-?)?ADP-ribosylat\w*|PARylat\w*",
    "crotonylation": r"crotonylat\w*",
    "succinylation": r"succinylat\w*",
    "sulfation": r"sulfat(?:ion|ed)|sulphat(?:ion|ed)",
    "carboxylation": r"carboxylat(?:ion|ed)",
    "proteolytic cleavage": r"proteolytic(?:ally)? cleav\w*",
}

_PTM_REGEX = re.compile(
    "|".join(f"(?P<t{i}>{pattern})" for i, pattern in enumerate(PTM_TYPES.values())),
)
_PTM_TEXT = re.compile(rf"(?<![A-Za-z])(?:{_PTM_REGEX.pattern})", re.IGNORECASE)
_PTM_NAMES = tuple(PTM_TYPES)

# UniProt MOD_RES descriptions start with a modified residue name.
_UNIPROT = {
    "phospho": "phosphorylation", "acetyl": "acetylation", "methyl": "methylation",
    "dimethyl": "methylation", "trimethyl": "methylation", "hydroxy": "hydroxylation",
    "sulfo": "sulfation", "citrulline": "citrullination", "adp-ribosyl": "ADP-ribosylation",
    "succinyl": "succinylation", "crotonyl": "crotonylation",
}  # fmt: skip


class PTMMention(NamedTuple):
    """One PTM-type mention: offsets, covered text, canonical type."""

    start: int
    end: int
    text: str
    key: str


class ResidueMention(NamedTuple):
    """One residue mention: offsets, covered text, key such as "S473"."""

    start: int
    end: int
    text: str
    key: str


def normalise_ptm(text: str) -> str | None:
    """The canonical PTM type of a word or phrase, or None.

    "Phosphorylated", "phospho-", "phosphorylates" -> "phosphorylation";
    UniProt "Phosphoserine" -> "phosphorylation"; "N-linked (GlcNAc...) asparagine" ->
    "glycosylation".
    """
    clean = " ".join(text.strip().split())
    if not clean:
        return None
    low = clean.lower()
    if low.startswith(("n-linked", "o-linked")):
        return "glycosylation"
    for prefix, ptm in _UNIPROT.items():
        if re.match(
            rf"{prefix}(?:serine|threonine|tyrosine|lysine|arginine|histidine|proline|asparagine|aspartate)", low
        ):
            return ptm
    m = _PTM_TEXT.search(clean)  # also "S473 Phosphorylation", "PROMOTER METHYLATION"
    if m and m.lastgroup:
        return _PTM_NAMES[int(m.lastgroup[1:])]
    return None


def find_ptms(text: str) -> list[PTMMention]:
    """Every PTM-type word in a text ("phosphorylated", "phospho-", "ubiquitylation")."""
    found = []
    for m in _PTM_TEXT.finditer(text):
        if m.lastgroup is None:
            continue
        end = m.end()
        while end > m.start() and text[end - 1] == "-":  # "phospho-AKT": the prefix, not its dash
            end -= 1
        found.append(PTMMention(m.start(), end, text[m.start() : end], _PTM_NAMES[int(m.lastgroup[1:])]))
    return found


# --- residues -----------------------------------------------------------------------------

_PTM_AA = "STYKRHCDENPQWG"  # residues that carry PTMs in UniProt MOD_RES
_NAME = "(?:" + "|".join(sorted(AA_NAMES, key=len, reverse=True)) + ")"
# Three-letter codes as written in papers ("Ser", "SER"), never lower case: "his", "met"
# and "pro" are English words.
_THREE = "(?:" + "|".join(f"{k.capitalize()}|{k.upper()}" for k in AA3 if k != "ter") + ")"
_RES_NAME = re.compile(rf"(?<![A-Za-z])(?P<aa>{_NAME})(?:\s?-\s?|\s)(?:residue\s)?(?P<pos>\d{{1,5}})(?![\d])", re.I)
_RES_THREE = re.compile(
    rf"(?<![A-Za-z0-9])(?:p-?|phospho-?)?(?P<aa>{_THREE})\s?(?:-|(?P<open>\())?\s?(?P<pos>\d{{1,5}})(?(open)\))(?![A-Za-z0-9])"
)
_RES_ONE = re.compile(rf"(?<![A-Za-z0-9])(?:p-?)?(?P<aa>[{_PTM_AA}])-?(?P<pos>\d{{2,5}})(?![A-Za-z0-9])")
_RES_FULL = re.compile(
    rf"^(?:residue\s)?(?:p-?|phospho-?)?(?P<aa>{_NAME}|{_THREE.lower()}|[{AA1}])\s?[-(]?\s?(?P<pos>\d{{1,5}})\)?$", re.I
)


def _one(aa: str) -> str:
    low = aa.lower()
    return AA_NAMES.get(low) or AA3.get(low) or aa.upper()


def normalise_residue(text: str) -> str | None:
    """The key of a residue ("serine 473", "Ser473", "Ser-473", "pS473", "S473" -> "S473").

    Returns None when the text is not a residue.
    """
    m = _RES_FULL.match(" ".join(text.strip().split()))
    if not m:
        return None
    return f"{_one(m['aa'])}{int(m['pos'])}"


def find_residues(text: str, one_letter: bool = True) -> list[ResidueMention]:
    """Residue mentions in a text, non-overlapping, in text order.

    Args:
        text: the text to search.
        one_letter: also report one-letter forms ("S473", "pY705"). They are only read
            for residues that carry PTMs and positions of two digits or more, and never
            when a substitution follows ("S473A" is a variant, see curation.entities.variants);
            callers that highlight all residues should ask for them only where the text
            talks about PTMs, since "K562" or "T47" are cell lines.
    """
    regexes = [_RES_NAME, _RES_THREE] + ([_RES_ONE] if one_letter else [])
    found: list[ResidueMention] = []
    taken: list[tuple[int, int]] = []
    for regex in regexes:
        for m in regex.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            taken.append((m.start(), m.end()))
            found.append(ResidueMention(m.start(), m.end(), m.group(0), f"{_one(m['aa'])}{int(m['pos'])}"))
    return sorted(found)
