"""CIViC category variants: "Amplification", "Fusion", "Exon 19 Deletion", "Loss-of-function".

CIViC names many variants by what happened to the gene rather than by notation. These
names get a canonical key (:func:`variant_category`) and a regex for how abstracts say the
same thing (:func:`category_regex`: "amplified", "exon 19 deletions", "ex19del"). They are
too common in text to highlight on their own; the matcher uses them when a curator's
variant is a category.
"""

from __future__ import annotations

import re

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
    "serum levels": "Serum Levels", "truncation": "Truncation", "rearrangements": "Rearrangement",
    "internal duplication": "Internal Duplication", "positive": "Positive", "low": "Low",
    "promoter demethylation": "Promoter Demethylation", "deletion polymorphism": "Deletion Polymorphism",
    "egfrviii": "EGFRvIII", "viii": "EGFRvIII", "viii deletion": "EGFRvIII",
    # copy-number and expression words curators type for the categories above
    "copy number gain": "Amplification", "copy-number gain": "Amplification", "cn gain": "Amplification",
    "copy number amplification": "Amplification", "amplifications": "Amplification",
    "copy number loss": "Loss", "copy-number loss": "Loss", "cn loss": "Loss",
    "homozygous deletion": "Deletion", "deletions": "Deletion",
    "over-expression": "Overexpression", "overexpressed": "Overexpression",
}  # fmt: skip

_EXON = re.compile(r"(?i)^exons?\s?(?P<exons>\d+(?:\s?-\s?\d+)?)\s+(?P<what>[a-z][a-z -]*?)s?$")
# Shorthand curators and abstracts use: "ex19del", "exon19del", "ex20ins", "ex14skip", "del19".
_EXON_SHORT = re.compile(
    r"(?i)^(?:ex(?:on)?\s?(?P<exons>\d+)\s?(?P<what>del|ins|dup|skip)\w*|(?P<what2>del|ins)\s?(?P<exons2>\d+))$"
)
_SHORT_KINDS = {"del": "Deletion", "ins": "Insertion", "dup": "Duplication", "skip": "Skipping"}
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

    Exon-level names keep their exon: "EXON 19 DELETION" and the shorthand "ex19del" -> "Exon 19 Deletion". With
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
        # The regex drops a plural "s", which takes the "s" of "ins" with it ("exon 20 ins").
        kind = _EXON_KINDS.get(what) or _EXON_KINDS.get(what + "s") or _title(what)
        return f"Exon {exon.group('exons').replace(' ', '')} {kind}"
    short = _EXON_SHORT.match(clean)
    if short:
        exons = short.group("exons") or short.group("exons2")
        return f"Exon {exons} {_SHORT_KINDS[(short.group('what') or short.group('what2')).lower()]}"
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
