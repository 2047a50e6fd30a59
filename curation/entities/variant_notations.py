"""The ways one variant is written: ``V600E`` ≡ ``p.V600E`` ≡ ``Val600Glu`` ≡ ``p.Val600Glu``.

Used to expand a curator's variant into every surface form the lexical stage of search looks for
(:mod:`curation.entities.query`), and by the benchmark to reword queries.
"""

from __future__ import annotations

import re

from curation.entities.amino_acids import AA3
from curation.entities.variants import normalise_variant

_THREE = {one: three.capitalize() for three, one in AA3.items()}
_PROTEIN = re.compile(r"([A-Z])(\d+)([A-Z*])")
_DNA = re.compile(r"([cg])\.(.+)")


def notations(name: str) -> list[str]:
    """Other ways to write a variant: ``V600E`` → ``p.V600E``, ``Val600Glu``, ``p.Val600Glu``;
    ``c.643C>T`` → ``643C>T``. Empty for anything that is not a variant notation."""
    key = normalise_variant(name)
    if key is None:
        return []
    protein = _PROTEIN.fullmatch(key)
    if protein:
        ref, position, alt = protein.groups()
        if ref not in _THREE or alt not in _THREE:
            return [key, f"p.{key}"]
        three = f"{_THREE[ref]}{position}{_THREE[alt]}"
        return [key, f"p.{key}", three, f"p.{three}"]
    dna = _DNA.fullmatch(key)
    if dna:
        return [key, dna.group(2)]
    return [key]
