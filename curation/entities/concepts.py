"""EDEL's g(e, d) over the stored annotations: a name, or the concept behind it, is in the document.

The text matcher (:meth:`curation.entities.matching.Matcher.matched`) finds an entity by its own
names and their synonyms in the lexicon. The concept index adds what the recogniser found and
the linker linked: the entity counts as mentioned when one of the document's stored annotations
of the same kind carries a concept the entity denotes (its lexicon concepts, the linker's applied
link for a name the lexicon does not know, its variant keys). An unlinked annotation (a
recognised span whose link was not confident enough) never counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from curation.entities.annotation import Annotation, Linker
from curation.entities.matching import Matcher
from curation.entities.variants import variant_keys, variant_matches
from curation.records import Document


class ConceptIndex:
    """g(e, d) = the text matcher's answer, or a stored annotation of one of e's concepts.

    Args:
        matcher: the text matcher (its lexicon names the concepts).
        annotations: stored annotations by PMID.
        linker: links an entity name the lexicon does not know (only applied links count).
    """

    def __init__(
        self, matcher: Matcher, annotations: Mapping[str, Sequence[Annotation]], linker: Linker | None = None
    ) -> None:
        self.matcher = matcher
        self.linker = linker
        self._by_pmid: dict[str, dict[str, set[str]]] = {}
        for pmid, found in annotations.items():
            per_kind: dict[str, set[str]] = {}
            for a in found:
                if a.concept_id:
                    per_kind.setdefault(a.type, set()).add(a.concept_id)
            self._by_pmid[pmid] = per_kind
        self._concepts: dict[tuple[str, str], frozenset[str]] = {}

    def concepts_of(self, entity: str, kind: str) -> frozenset[str]:
        """The concept ids an entity name denotes in ``kind`` (cached)."""
        key = (entity, kind)
        if key not in self._concepts:
            found = {concept for _, concept in self.matcher.lexicon.lookup(entity, kind)}
            if not found and self.linker is not None and kind not in ("variant", "residue", "ptm"):
                link = self.linker.link(entity, kind)
                if link.applied:
                    found.add(link.concept_id)
            self._concepts[key] = frozenset(found)
        return self._concepts[key]

    def annotated(self, entity: str, kind: str, pmid: str) -> bool:
        """Whether the stored annotations of ``pmid`` hold a concept of ``entity``."""
        stored = self._by_pmid.get(pmid, {}).get(kind)
        if not stored:
            return False
        if kind == "variant":
            keys = variant_keys(entity)
            if keys and any(variant_matches(k, c) for k in keys for c in stored):
                return True
        return not self.concepts_of(entity, kind).isdisjoint(stored)

    def matched(self, entity: str, kind: str, document: Document) -> bool:
        """g(e, d)."""
        if self.matcher.matched(entity, kind, document):
            return True
        return self.annotated(entity, kind, document.pmid)

    def added(self, pairs: Iterable[tuple[str, str, Document]]) -> int:
        """How many (entity, kind, document) pairs only the stored annotations match."""
        return sum(
            1 for e, k, d in pairs if not self.matcher.matched(e, k, d) and self.annotated(e, k, d.pmid)
        )
