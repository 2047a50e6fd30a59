"""The species an abstract is about, read from its words: what decides between genes that share a name.

NLM-Gene and GNormPlus give each gene mention the NCBI Gene id of the organism the text studies ("Erbb2" in a
mouse paper is mouse 13866, in a human one ERBB2 2064). Organism words ("mice", "murine", "rats",
"Drosophila", "patients") are what a reader uses to tell; :func:`text_species` counts them and
:func:`dominant_species` names the one the text is mostly about.
"""

from __future__ import annotations

import re
from collections import Counter

HUMAN = "human"
# species -> the words that place a text in it (whole words, any case).
SPECIES_WORDS: dict[str, str] = {
    HUMAN: r"humans?|patients?|homo sapiens|individuals|men|women|children|volunteers|subjects",
    "mouse": r"mouse|mice|murine|mus musculus",
    "rat": r"rats?|rattus",
    "fly": r"drosophila|flies",
    "zebrafish": r"zebrafish|danio",
    "yeast": r"yeasts?|saccharomyces|cerevisiae|pombe",
    "worm": r"c\. elegans|caenorhabditis|nematodes?",
    "chicken": r"chickens?|chicks?|gallus",
    "frog": r"xenopus",
    "cattle": r"bovine|cattle|cows?",
    "pig": r"porcine|pigs?|swine",
    "dog": r"canine|dogs?",
    "plant": r"arabidopsis|thaliana",
    "virus": r"virus|viral|hbv|hcv|hiv|ebv",
}
_WORDS = re.compile(r"\b(?:" + "|".join(f"(?P<{k}>{v})" for k, v in SPECIES_WORDS.items()) + r")\b", re.I)


def text_species(text: str) -> Counter[str]:
    """How many organism words of each species the text has.

    Example:
        >>> text_species("Erbb2 in mice and in murine cells")["mouse"]
        2
    """
    return Counter(match.lastgroup for match in _WORDS.finditer(text) if match.lastgroup)


def dominant_species(counts: Counter[str], share: float = 0.0) -> str:
    """The species with the most words ("" when none, or when the top one holds ``share`` or less of them);
    a tie goes to human, which most abstracts study."""
    if not counts:
        return ""
    top = max(counts.values())
    best = HUMAN if counts.get(HUMAN) == top else max(counts, key=lambda k: (counts[k], k))
    return best if counts[best] > share * sum(counts.values()) else ""
