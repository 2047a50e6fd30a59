"""Whether the KB already holds a suggested completion of a partial relation, and from which PMIDs."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence

import duckdb

from curation.entities.lexicon import Lexicon
from curation.entities.query import QueryConcept
from curation.schemas import RelationSchema
from curation.store.kb import list_kb_answers

_PARTS = re.compile(r"\s*(?:,|\+|;|/|\band\b|\bplus\b)\s*", re.IGNORECASE)


def kb_holdings(con: duckdb.DuckDBPyConnection, schema: RelationSchema, concepts: Sequence[QueryConcept],
                lexicon: Lexicon) -> dict[str, list[str | None]]:
    """Casefolded answer name → the PMIDs of the KB records that complete this partial relation with it.

    A KB record completes it when each typed slot holds one of the slot's names (typed, canonical, or any
    form the search looks for); a combination answer ("Dabrafenib, Trametinib") counts for each of its parts.
    """
    names = {c.slot: [c.typed, c.canonical, *c.forms, *(
        n for cid in c.concept_ids for n in lexicon.names(c.kind, cid))] for c in concepts}
    out: dict[str, list[str | None]] = defaultdict(list)
    for value, pmid in list_kb_answers(con, schema.name, schema.answer, names):
        for part in {p.casefold() for p in [value, *_PARTS.split(value)] if p.strip()}:
            if pmid not in out[part]:
                out[part].append(pmid)
    return out


def held_in_kb(holdings: Mapping[str, list[str | None]], lexicon: Lexicon, kind: str, concept_id: str, name: str
               ) -> tuple[bool, tuple[str, ...]]:
    """Whether ``holdings`` (:func:`kb_holdings`) hold the suggested concept under any of its names, and the
    PMIDs of the KB records that do."""
    names = {name.casefold(), concept_id.casefold(), *(n.casefold() for n in lexicon.names(kind, concept_id))}
    canonical = lexicon.canonical(kind, concept_id)
    if canonical:
        names.add(canonical.casefold())
    found = [pmid for n in names for pmid in holdings.get(n, ())]
    return bool(found), tuple(sorted({p for p in found if p}))
