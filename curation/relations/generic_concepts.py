"""Concepts too general to be an answer: "Neoplasms" beside every cancer abstract, "Drug-Related Side Effects and
Adverse Reactions" beside every drug, named in so many abstracts that any query's top documents relate them.

A suggestion of one is no fact a curator writes down, so :func:`is_generic` leaves it out of the missing slot
unless the KB itself holds it as an answer of the slot (the schema asks for it). The list is small and
written out: MeSH descriptors, by id and by label. It was chosen on dev (bench/suggest.py, ``generic``): the
candidates in the top 3 of 10 or more of the 1,897 Dev queries (BioRED and BC5CDR, the rule then tried without
this list: top 20, a sentence's pairs only) and gold in at most a fifth of those, that name a class (of diseases,
of substances) rather than one disease or substance (Breast Neoplasms, 20 times and never gold, is one disease:
kept). The counts below are that run's; docs/BENCHMARKS.md has the final rule's.
"""

from __future__ import annotations

#: kind → {MeSH id: label}
GENERIC: dict[str, dict[str, str]] = {
    "disease": {
        "D009369": "Neoplasms",  # in the top 3 of 173 Dev queries, gold in 29
        "D064420": "Drug-Related Side Effects and Adverse Reactions",  # 21, gold in none
        "D003643": "Death",  # 26, none
        "D002277": "Carcinoma",  # 18, one
        "D030342": "Genetic Diseases, Inborn",  # 15, none
        "D008107": "Liver Diseases",  # 10, none
    },
    "chemical": {
        "D017382": "Reactive Oxygen Species",  # 18, none
    },
}
_LABELS = {kind: {label.casefold() for label in ids.values()} for kind, ids in GENERIC.items()}


def is_generic(kind: str, concept_ids: tuple[str, ...] | list[str], name: str = "") -> bool:
    """Whether a candidate (its concept ids, its display name) is one of :data:`GENERIC` of its kind."""
    ids = GENERIC.get(kind, {})
    return any(c in ids for c in concept_ids) or name.casefold() in _LABELS.get(kind, set())
