"""A hit's provenance: why the concept search ranked a document where it did, as data and as stored JSON.

What the Curate page shows beside each hit and stores with the curator's decision, and what
``python -m curation search`` prints: the hit's group ("all": it mentions every query concept,
"some"), each stage's score and rank (concepts, lexical or rm3, dense, fused) and, per query concept
it mentions, the concept's name, how many stored mentions it has there, how it was found (the
concept index and its sources, or the text) and the forms written. Mention offsets are left out:
they belong to the document's text, which may be re-ingested; the forms say what was matched.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

from index.hits import ConceptMatch, StageScore

DIGITS = 6  # scores are kept to this many decimals (enough to tell any two ranks apart, short to store)


class Provenanced(Protocol):
    """Anything with a hit's provenance: an :class:`index.hits.Hit`, or a Curate page result row."""

    @property
    def group(self) -> str: ...

    @property
    def stages(self) -> Sequence[StageScore]: ...

    @property
    def concepts(self) -> Sequence[ConceptMatch]: ...


def hit_provenance(hit: Provenanced) -> dict[str, Any]:
    """The hit's group, stages and concept matches as plain JSON-ready data (no offsets)."""
    return {
        "group": hit.group,
        "stages": [
            {"stage": s.stage, "score": round(float(s.score), DIGITS), "rank": s.rank} for s in hit.stages
        ],
        "concepts": [
            {"slot": c.slot, "concept": c.concept, "mentions": int(c.mentions), "how": c.how, "forms": list(c.forms)}
            for c in hit.concepts
        ],
    }


def provenance_json(hit: Provenanced) -> str:
    """:func:`hit_provenance` as compact JSON with sorted keys: what is stored with a decision."""
    return json.dumps(hit_provenance(hit), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
