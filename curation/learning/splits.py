"""The stable gene split: each gene's part (train, dev or test) is a function of the gene alone.

A gene's part comes from a hash of the split's seed and the gene's normalised key, mapped to [0, 1) and
compared with the fractions. Adding records, or genes, to a KB never moves a gene that was already
there, so a dev or test gene stays held out for the life of the KB (a shuffled list would re-draw every
gene when one gene is added). The same key decides where a curator's decision on that gene belongs
(:mod:`curation.learning.holdout`).
"""

from __future__ import annotations

import hashlib
from typing import Literal

from curation.learning.sampling import entity_key
from curation.schemas import RelationSchema

Part = Literal["train", "dev", "test"]
FRACTIONS = (0.8, 0.1, 0.1)


def gene_key(schema: RelationSchema, value: str) -> str:
    """The normalised key of a query gene / protein value (as KB matching compares them)."""
    gene_type = schema.query_types[0]
    return entity_key(schema.kind(gene_type), value)


def unit_hash(key: str, seed: int, salt: str = "split") -> float:
    """A stable number in [0, 1) for ``key`` (the same on every machine and Python run; no ``hash()``)."""
    digest = hashlib.sha256(f"{salt}\x00{seed}\x00{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def gene_part(key: str, seed: int = 13, fractions: tuple[float, float, float] = FRACTIONS) -> Part:
    """The part of the gene with normalised ``key``: train below ``fractions[0]``, then dev, then test."""
    if any(f < 0 for f in fractions) or abs(sum(fractions) - 1.0) > 1e-6:
        raise ValueError(f"split fractions must be non-negative and sum to 1, got {fractions}")
    u = unit_hash(key, seed)
    if u < fractions[0]:
        return "train"
    return "dev" if u < fractions[0] + fractions[1] else "test"
