"""Query understanding: what a curator typed in each slot, linked to the concepts it means.

Each typed name goes through the same steps as the entity linker of the concept index:

1. **exact**: a name of the dictionaries (case, dash and spacing aside) links to every concept it
   names in the slot's kind; failing that, **spelling**: the same with dashes, spaces, dots and slashes
   left out ("B-Raf" is BRAF). A gene name several species share links the preferred species' genes only
   (human unless the linker or the slot is told otherwise: HER2 and KRAS are the human genes); the
   others are offered, and the curator applies one as any suggestion (``applied``). A name the corpora use
   for a gene family ("PKC") links the family, its genes offered; a name written with capitals (not a gene's,
   whose case says its species) links the concepts that have it in that case when others have it only in another
   ("sAD", not "SAD");
2. **notation**: a variant the rules can read ("Leu858Arg", "p.L858R", "ex19del", "V600") links to
   its key; a codon ("V600") matches every change at that codon and says so;
3. **linker**: the learned linker of the concept index, when one is active; its link is applied only
   when it clears the linker's calibrated threshold;
4. **similar names**: otherwise the character n-gram normaliser's best candidates are *offered*
   ("did you mean"), never applied silently: the curator clicks one to apply it.

A variant category typed alone ("amplification", "fusion") links to the category before any of these
steps: a KB profile that carries the word among its names ("V600E AMPLIFICATION") is another variant.

A linked slot carries the surface forms of its concepts (their own dictionary names, a variant's
other notations, the forms of every variant at a codon), which is what the lexical stage searches
for; a name that also names another concept ("Ras" for KRAS, also HRAS's) or that is a variant
notation ("G12D" among a gene's gold names) is not one of them (:meth:`QueryLinker.own_names`).
An unlinked slot searches for what was typed, as typed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from curation.entities.annotation import Linker
from curation.entities.corpus_genes import is_family
from curation.entities.gene_choice import family_members, family_of, same_case
from curation.entities.lexicon import Lexicon, loose_name, normalise_name
from curation.entities.normalise import Candidate, Normaliser
from curation.entities.variant_categories import variant_category
from curation.entities.variant_notations import notations
from curation.entities.variants import normalise_variant, variant_matches

MAX_TYPED_CHARS = 200  # longer is a passage, not a name
MAX_FORMS = 60  # surface forms kept per slot (a concept with hundreds of names keeps its first)
LINKED, OFFERED, UNKNOWN = "linked", "offered", "unknown"
RULE_KINDS = ("variant", "residue", "ptm")
DEFAULT_SPECIES = "human"  # a typed gene means the human gene unless the schema or the curator says otherwise
_CODON = re.compile(r"(?:[A-Z]\d+|codon \d+)")


class QueryError(ValueError):
    """A typed value that cannot be searched (too long, no text); the message names the slot."""


@dataclass(frozen=True)
class QueryConcept:
    """One slot of the query after linking.

    Attributes:
        slot: the schema's entity type ("Gene").
        typed: what the curator typed.
        kind: the entity kind searched ("gene", "variant", ...).
        status: "linked" (applied), "offered" (a suggestion waits for the curator) or "unknown".
        concept_ids: the applied concepts (empty unless linked).
        canonical: the display name of the applied concept (the typed text when not linked).
        confidence: the link's confidence (1.0 for exact names and notation rules).
        how: "exact", "notation", "codon", "spelling", "linker", "applied by the curator", or "" when not linked.
        alternatives: other candidate concepts, best first (the "did you mean" suggestions).
        forms: the surface forms the lexical stage searches for, typed or canonical first.
        note: a sentence for the curator (a codon query, an ambiguous name), or "".
        species: (concept id, species) of the linked concepts and the alternatives whose species is known.
    """

    slot: str
    typed: str
    kind: str
    status: str
    concept_ids: tuple[str, ...] = ()
    canonical: str = ""
    confidence: float = 0.0
    how: str = ""
    alternatives: tuple[Candidate, ...] = ()
    forms: tuple[str, ...] = ()
    note: str = ""
    species: tuple[tuple[str, str], ...] = ()

    @property
    def linked(self) -> bool:
        return self.status == LINKED

    @property
    def codon(self) -> bool:
        return self.how == "codon"

    def species_of(self, concept_id: str) -> str:
        """The species of a linked or offered concept ("" when unknown)."""
        return dict(self.species).get(concept_id, "")

    @property
    def linked_species(self) -> str:
        """The species of the linked concepts when they share one ("human"), else ""."""
        found = {self.species_of(c) for c in self.concept_ids}
        return found.pop() if len(found) == 1 else ""

    @property
    def other_species(self) -> tuple[Candidate, ...]:
        """Alternatives that are the same name in another species (exact matches only), best first."""
        linked = self.linked_species
        return tuple(c for c in self.alternatives if c.how in ("exact", "spelling")
                     and self.species_of(c.concept_id) not in ("", linked))


def check_typed(slot: str, typed: str) -> str:
    """The typed value with its spacing tidied, or :class:`QueryError` naming the slot."""
    text = " ".join(typed.split())
    if len(text) > MAX_TYPED_CHARS:
        raise QueryError(
            f"{slot}: {len(text):,} characters typed; a name has at most {MAX_TYPED_CHARS}. Type the entity's name, "
            "not a passage of text"
        )
    return text


class QueryLinker:
    """Links typed names to concepts (see the module docstring).

    Args:
        lexicon: the dictionaries (the matcher's).
        normaliser: the character n-gram normaliser over the same lexicon (the "did you mean" list).
        linker: the active learned linker, or None.
        variant_keys_known: every variant key the concept index holds (codon queries expand to them).
        species: the species a name several species share links to ("human"); "" links every one.
    """

    def __init__(
        self, lexicon: Lexicon, normaliser: Normaliser, linker: Linker | None = None,
        variant_keys_known: Iterable[str] = (), species: str = DEFAULT_SPECIES,
    ) -> None:
        self.lexicon = lexicon
        self.normaliser = normaliser
        self.linker = linker
        self.variant_keys_known = tuple(sorted(set(variant_keys_known)))
        self.species = species

    def link(self, slot: str, typed: str, kind: str, applied: str | None = None,
             species: str | None = None) -> QueryConcept:
        """Link one typed name; ``applied``: a concept id the curator chose among the suggestions;
        ``species``: this slot's preferred species (None: the linker's, e.g. a schema's own)."""
        prefer = self.species if species is None else species
        text = check_typed(slot, typed)
        if not text:
            raise QueryError(f"{slot}: nothing typed")
        candidates = self.normaliser.normalise(text, kind, k=6) if kind != "generic" else []
        if applied:
            return self._applied(slot, text, kind, applied, candidates)
        exact = [c for c in candidates if c.how == "exact"]
        rule = [c for c in candidates if c.how in RULE_KINDS]
        category = variant_category(text) if kind == "variant" else None
        if category:
            # A category typed alone ("amplification", "fusion") is the category, whatever KB profile
            # ("Amplification, V600E", "V600E AMPLIFICATION") also carries the word as one of its names.
            chosen = [Candidate(category, kind, category, text, 1.0, "variant")]
            return self._linked(slot, text, kind, chosen, candidates, "notation", 1.0)
        if kind == "variant" and (rule or exact):
            # A variant is settled by its notation: the dictionaries' variant names include KB profiles
            # ("V600E AMPLIFICATION") that would tie unrelated keys to a name.
            chosen = rule or exact
            codon = all(_CODON.fullmatch(c.concept_id) for c in chosen)
            how = "codon" if codon else ("notation" if rule else "exact")
            return self._linked(slot, text, kind, chosen, candidates, how, 1.0)
        if exact:
            if kind != "gene":  # a gene's case says its species, which the preferred species settles below
                cased = same_case(self.lexicon, kind, text, [c.concept_id for c in exact])
                exact = [c for c in exact if c.concept_id in cased]
            return self._linked(slot, text, kind, self._preferred(kind, exact, prefer), candidates, "exact", 1.0)
        if rule:
            return self._linked(slot, text, kind, rule, candidates, "notation", 1.0)
        if kind not in RULE_KINDS and kind != "generic":
            loose = [
                Candidate(concept, kind, self.lexicon.canonical(kind, concept) or text, text, 1.0, "spelling")
                for _, concept in self.lexicon.lookup_loose(text, kind)
            ]
            if loose:
                chosen = self._preferred(kind, loose, prefer)
                candidates = [*[c for c in loose if c not in chosen], *candidates]
                return self._linked(slot, text, kind, chosen, candidates, "spelling", 1.0)
        if self.linker is not None and kind not in RULE_KINDS and kind != "generic":
            link = self.linker.link(text, kind)
            if link.applied and link.concept_id:
                chosen = Candidate(link.concept_id, kind, link.canonical or link.concept_id, text,
                                   float(link.confidence), "linker")
                return self._linked(slot, text, kind, [chosen], candidates, "linker", float(link.confidence))
            if link.concept_id:
                offered = Candidate(link.concept_id, kind, link.canonical or link.concept_id, text,
                                    float(link.confidence), "linker")
                candidates = [offered, *[c for c in candidates if c.concept_id != link.concept_id]]
        if candidates:
            best = candidates[0]
            return QueryConcept(
                slot, text, kind, OFFERED, canonical=text, confidence=float(best.score),
                alternatives=tuple(candidates), forms=(text,),
                note=f"'{text}' is not a name the dictionaries know; searched as typed",
            )
        return QueryConcept(
            slot, text, kind, UNKNOWN, canonical=text, forms=(text,),
            note=f"'{text}' is not a name the dictionaries know and nothing similar is; searched as typed",
        )

    def link_all(
        self, kinds: Mapping[str, str], values: Mapping[str, str], applied: Mapping[str, str] | None = None,
        species: str | None = None,
    ) -> list[QueryConcept]:
        """Every filled slot of ``values`` (slot → typed), in the order of ``kinds`` (slot → kind); ``species``:
        the schema's preferred species (None: the linker's)."""
        applied = applied or {}
        return [
            self.link(slot, values[slot], kind, applied.get(slot), species)
            for slot, kind in kinds.items() if values.get(slot, "").strip()
        ]

    # --- steps --------------------------------------------------------------------------

    def _preferred(self, kind: str, found: Sequence[Candidate], species: str) -> list[Candidate]:
        """The candidates of the preferred species when some are and others are not; else all of them.

        A concept of unknown species (a corpus id no vocabulary places) gives way too: HER2's gold-only
        mouse id must not be searched beside human ERBB2 unless the curator applies it.
        """
        if kind == "gene" and (family := family_of([c.concept_id for c in found])):
            return [c for c in found if c.concept_id == family][:1]  # a family's name: the family, not one gene
        if not species or kind != "gene":
            return list(found)
        preferred = [c for c in found if self.lexicon.species(kind, c.concept_id) == species]
        return preferred or self._orthologs(kind, found, species) or list(found)

    def _orthologs(self, kind: str, found: Sequence[Candidate], species: str) -> list[Candidate]:
        """The preferred species' genes of the same symbol as genes of another species the name alone names.

        Mouse and human orthologs mostly share their symbol, case aside ("Erbb2" / "ERBB2"), so a name the
        sources give only to the mouse gene ("c-erbB-2" in Ensembl's mouse aliases) links the human one; the
        mouse gene stays offered.
        """
        out: list[Candidate] = []
        for candidate in found:
            symbol = self.lexicon.canonical(kind, candidate.concept_id)
            for _, concept in self.lexicon.lookup(symbol, kind) if symbol else ():
                if self.lexicon.species(kind, concept) == species and concept not in {c.concept_id for c in out}:
                    out.append(Candidate(concept, kind, self.lexicon.canonical(kind, concept) or symbol,
                                         candidate.matched, candidate.score, candidate.how))
        return out

    def _applied(self, slot: str, text: str, kind: str, concept: str, candidates: Sequence[Candidate]) -> QueryConcept:
        canonical = self.lexicon.canonical(kind, concept) or next(
            (c.canonical for c in candidates if c.concept_id == concept), concept)
        chosen = Candidate(concept, kind, canonical, text, 1.0, "applied")
        return self._linked(slot, text, kind, [chosen], candidates, "applied by the curator", 1.0)

    def _linked(
        self, slot: str, text: str, kind: str, chosen: Sequence[Candidate], candidates: Sequence[Candidate],
        how: str, confidence: float,
    ) -> QueryConcept:
        ids = tuple(dict.fromkeys(c.concept_id for c in chosen))
        forms = self.forms(text, kind, ids, codon=how == "codon")
        note = ""
        if how == "codon":
            found = len(forms) - 1
            note = (f"'{text}' is a codon: every change at it counts ({found} written forms in the corpus)"
                    if found else f"'{text}' is a codon: every change at it counts")
        elif kind == "gene" and len(ids) == 1 and is_family(ids[0]):
            members = family_members(self.lexicon, ids[0])
            named = ", ".join(self.lexicon.canonical(kind, c) or c for c in members[:8])
            note = (f"'{text}' names a gene family, not one gene; the family is searched"
                    + (f" (its genes include {named}: apply one below)" if named else ""))
            candidates = [*candidates, *(Candidate(c, kind, self.lexicon.canonical(kind, c) or c, text, 1.0, "member")
                                         for c in members)]
        elif len(ids) > 1 and kind not in RULE_KINDS:
            note = f"'{text}' names {len(ids)} concepts; all are searched"
        others = tuple(c for c in dict.fromkeys(candidates) if c.concept_id not in ids)
        species = tuple((c, sp) for c in dict.fromkeys([*ids, *(o.concept_id for o in others)])
                        if (sp := self.lexicon.species(kind, c)))
        linked = {self.lexicon.species(kind, c) for c in ids} - {""}
        same_name = {o.concept_id for o in others if o.how in ("exact", "spelling")}
        passed = sorted({sp for c, sp in species if c in same_name} - linked)
        if passed and linked and how in ("exact", "spelling") and not note:
            note = (f"'{text}' also names a {' and a '.join(passed)} gene; the {'/'.join(sorted(linked))} one is "
                    "searched (apply another below)")
        canonical = chosen[0].canonical if how != "codon" else text
        return QueryConcept(slot, text, kind, LINKED, ids, canonical, confidence, how, others, forms, note, species)

    def forms(self, typed: str, kind: str, concept_ids: Sequence[str], codon: bool = False) -> tuple[str, ...]:
        """Every surface form of the concepts: the typed text first, then their names and notations."""
        out = [typed]
        if kind == "variant":
            keys = list(concept_ids)
            if codon:
                keys += [k for k in self.variant_keys_known if any(variant_matches(q, k) for q in concept_ids)]
            for key in keys:
                out += notations(key) or [key]
                if variant_category(key) == key:  # a category's own names ("AMPLIFICATION"), not a profile's
                    out += [n for n in self.lexicon.names(kind, key) if variant_category(n) == key]
        else:
            for concept in concept_ids:
                out += self.own_names(kind, concept, concept_ids)
        seen: dict[str, str] = {}
        for form in out[1:]:
            seen.setdefault(normalise_name(form), form)
        if normalise_name(typed) not in seen:  # a typed spelling of a known name gives way to the dictionary's
            seen = {normalise_name(typed): typed, **seen}
        return tuple(seen.values())[:MAX_FORMS]

    def own_names(self, kind: str, concept: str, linked: Sequence[str] = ()) -> tuple[str, ...]:
        """The names of ``concept`` that a search may use for it: the ones that name it alone, in its kind.

        Left out:

        - a name that also names another concept of the kind, outside ``linked``, which is not this one under
          another id: "Ras" names KRAS in some abstracts and HRAS in others, so searching "Ras" for KRAS finds
          HRAS papers. Another concept is this one under another id (the mouse ortholog "Kras", a KB's copy
          filed by its symbol) when this concept's display name, dashes and spaces aside, is one of its names,
          or when it has no name this concept lacks (CIViC's "TP53" beside NCBI's 7157, shown "p53");
        - a name that is a variant notation the dictionaries also file as a variant ("G12D", a gold mention
          annotated with mouse Kras's gene id): it names a change, not the gene.

        The display name is always kept.
        """
        display = self.lexicon.canonical(kind, concept)
        mine = {loose_name(n) for n in self.lexicon.names(kind, concept)}

        def another(other: str) -> bool:
            theirs = {loose_name(n) for n in self.lexicon.names(kind, other)}
            return loose_name(display) not in theirs and not theirs <= mine

        kept = []
        for name in self.lexicon.names(kind, concept):
            others = {c for _, c in self.lexicon.lookup(name, kind)} - {concept, *linked}
            shared = any(another(other) for other in others)
            variant = (kind != "variant" and normalise_variant(name) is not None
                       and bool(self.lexicon.lookup(name, "variant")))
            if name == display or not (shared or variant):
                kept.append(name)
        return tuple(kept)
