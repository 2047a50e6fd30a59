"""Regexes for a set of names: how a name may be written in running text.

Used by :meth:`curation.entities.matching.Matcher.matches` for g(e, d), where the entity and its
synonyms are searched directly in the text (so "ABL1" is found inside "BCR-ABL1"), and for
fusions, whose partners are genes of the lexicon ("BCR-ABL", "BCR/ABL1", "BCR::ABL1").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from curation.entities.lexicon import Lexicon, normalise_name

_DASHES = "-\u2010\u2011\u2012\u2013\u2014\u2212"


def case_sensitive(name: str) -> bool:
    """Whether a dictionary name is matched by exact case.

    Short names (up to 4 characters) and names with capitals after the first letter
    ("DOX", "mTOR", "ErbB2") are; longer lower- or title-case names ("Vemurafenib") are not.
    """
    return len(name) <= 4 or any(c.isupper() for c in name[1:])


def _name_pattern(name: str) -> str:
    """Regex of one name: any dash or none where it has a dash, any run of spaces for one."""
    parts = []
    for char in name:
        if char in _DASHES:
            parts.append(f"[{_DASHES}\\s]?")
        elif char.isspace():
            parts.append(r"\s+")
        else:
            parts.append(re.escape(char))
    return "".join(parts)


def names_regex(names: Iterable[str]) -> re.Pattern[str] | None:
    """One regex for a set of names; short and mixed-case names by exact case."""
    exact = sorted({n for n in names if n and case_sensitive(n)}, key=len, reverse=True)
    loose = sorted({n.lower() for n in names if n and not case_sensitive(n)}, key=len, reverse=True)
    alternatives = [_name_pattern(n) for n in exact] + [f"(?i:{_name_pattern(n)})" for n in loose]
    if not alternatives:
        return None
    return re.compile(rf"(?<![A-Za-z0-9])(?:{'|'.join(alternatives)})(?![A-Za-z0-9])")


def gene_lookup(lexicon: Lexicon) -> Callable[[str], str | None]:
    """The gene concept a name denotes in ``lexicon``, for reading typed fusions ("BCR-ABL1").

    A partner of a fusion the lexicon knows as a variant ("EML4" of CIViC's "EML4::ALK
    Fusion") counts as a gene even when no gene dictionary names it: CIViC files fusions
    under their 3' gene only.
    """
    partners = {
        normalise_name(part)
        for synonym in lexicon.entries("variant")
        if "::" in synonym.concept_id
        for part in synonym.concept_id.split("::")
        if part not in ("v", "?")
    }

    def gene_of(name: str) -> str | None:
        found = lexicon.lookup(name, "gene")
        if found:
            return found[0][1]
        return name.upper() if normalise_name(name) in partners else None

    return gene_of


def fusion_regex(key: str, lexicon: Lexicon) -> re.Pattern[str] | None:
    """How text writes a fusion: "BCR-ABL1", "BCR/ABL", "BCR::ABL1"; "v::ALK" also "ALK fusion",
    "ALK-rearranged", "EML4-ALK"."""

    def symbols(gene: str) -> str:
        names = [n for n in lexicon.expand(gene, "gene") if " " not in n and len(n) <= 12] or [gene]
        return "|".join(re.escape(n) for n in sorted(set(names), key=len, reverse=True))

    g1, g2 = key.split("::", 1)
    joint = r"\s?(?:::|[-/\u2013\u2014:])\s?"
    any_gene = r"[A-Z][A-Za-z0-9]{1,9}"
    tail = r"[\s-](?:gene\s)?(?:fusions?|rearrange\w*|translocat\w*|positive|\+)"
    if g1 in ("v", "?") and g2 in ("v", "?"):
        return None
    if g1 in ("v", "?"):
        pattern = rf"{any_gene}{joint}(?:{symbols(g2)})|(?:{symbols(g2)}){tail}"
    elif g2 in ("v", "?"):
        pattern = rf"(?:{symbols(g1)}){joint}{any_gene}|(?:{symbols(g1)}){tail}"
    else:
        pattern = rf"(?:{symbols(g1)}){joint}(?:{symbols(g2)})"
    return re.compile(rf"(?<![A-Za-z0-9])(?:{pattern})(?![A-Za-z0-9])")
