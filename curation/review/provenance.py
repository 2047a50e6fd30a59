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

from curation.grades import GRADE_LABELS
from curation.records import is_adjudication
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


def decision_provenance(row: Provenanced, rank: int | None = None, version: str = "", mode: str = "",
                        concepts: Sequence[Any] = (), rm3: bool = False, suggestion: Any = None) -> str:
    """What is stored with a decision made on the Curate page: the hit's provenance plus where the curator
    saw it (its rank), what ranked it (the model version and mode, RM3 on or off) and the query as typed and
    as normalised (each slot's linked concepts). Curator and time are columns of the decision itself.

    Args:
        concepts: the search's :class:`curation.entities.query.QueryConcept` per slot.
        suggestion: the :class:`curation.relations.missing_slot.Suggestion` the curator was following (its rank and
            score among the suggestions, and the relation scorer), when the decision was made from one.
    """
    data = hit_provenance(row)
    if suggestion is not None:
        data["suggestion"] = {"name": suggestion.name, "concept_ids": list(suggestion.concept_ids),
                              "rank": suggestion.rank, "score": round(float(suggestion.score), 4),
                              "supporting": suggestion.supporting, "in_kb": suggestion.in_kb,
                              "scorer": getattr(suggestion, "scorer", "")}
    data.update(
        rank=rank,
        version=version,
        mode=mode,
        rm3=bool(rm3),
        query=[
            {"slot": c.slot, "typed": c.typed, "status": c.status, "canonical": c.canonical,
             "concept_ids": list(c.concept_ids), "how": c.how, "confidence": round(float(c.confidence), 3)}
            for c in concepts
        ],
    )
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def describe(provenance: str) -> str:
    """A line for a person: where the curator saw the abstract and what ranked it ("" without provenance)."""
    if not provenance:
        return ""
    try:
        data = json.loads(provenance)
    except json.JSONDecodeError:
        return ""
    parts = []
    if data.get("rank"):
        parts.append(f"rank {data['rank']}")
    if data.get("version"):
        parts.append(f"model {data['version']}" + (f" ({data['mode']})" if data.get("mode") else ""))
    if data.get("group"):
        parts.append(f"mentions {data['group']}")
    linked = [f"{q['typed']} → {q['canonical']}" for q in data.get("query", [])
              if q.get("status") == "linked" and q.get("canonical") and q.get("canonical") != q.get("typed")]
    if linked:
        parts.append("linked " + ", ".join(linked))
    return " · ".join(parts)


def decision_history(decisions: Sequence[Any], team: bool = False) -> list[str]:
    """One line per decision (oldest first): when, who, the grade, the answer, where it was seen and what
    ranked it, and the note; for the Curate card's history (plain text). ``team``: the store is a team store,
    where a typed name (made before it was) is marked self-declared."""
    lines = []
    for d in sorted(decisions, key=lambda d: d.decision_id):
        who = f"{d.curator} (self-declared)" if team and d.identity_source == "self-declared" else d.curator
        parts = [d.created_at[:16], who, GRADE_LABELS.get(d.grade, d.grade)
                 + (" (adjudicated)" if is_adjudication(d) else "")]
        if d.answer:
            parts.append(f"answer {d.answer}")
        if seen := describe(d.provenance):
            parts.append(seen)
        if d.note and not is_adjudication(d):
            parts.append(f"note: {' '.join(d.note.split())}")
        lines.append(" · ".join(parts))
    return lines
