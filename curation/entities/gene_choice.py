"""Which gene a name means when the dictionaries give it to several: the family, the text's species, the corpora.

A short alias often names several genes (human ERBB2 and mouse Erbb2; "PKC" for PRRT2 in one vocabulary and for
the protein kinase C family in most abstracts). :func:`choose_gene` decides, in this order:

1. a family: when a corpus uses the name for a family (``family:<name>``, GNormPlus / NLM-Gene "FamilyName"
   annotations) at least as often as for a gene, the family is the concept: "PKC" is offered as the PKC
   family, never as one of its genes;
2. the species the text is about (:mod:`curation.entities.species`; human when it names none);
3. the written case, for a name with an upper-case letter: "sAD" is the name a concept was given in that case,
   not the "SAD" of another;
   then an NCBI Gene id over an Ensembl one (a mouse gene the vocabularies know only by ``ENSMUSG...`` while a
   corpus gives the same name its NCBI id, which is what curators and the corpora use);
4. how many records give the name to each gene (:meth:`Lexicon.uses`: a corpus mention each where the corpus
   is read directly, one per source in the store), then human, then the lexicon's own order;
5. a non-human gene chosen by its Ensembl id is answered with its NCBI id when the corpora give one
   (:func:`ncbi_twin`): the installed vocabularies have no mouse Ensembl -> NCBI crosswalk, but a corpus gene
   that shares a name with the Ensembl gene, and is not known as another species', is the same gene.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from curation.entities.corpus_genes import is_family
from curation.entities.lexicon import Lexicon
from curation.entities.species import HUMAN

GENE = "gene"
# Greek letters and isoform suffixes that turn a family's name into a member's ("PKCalpha", "PKC-beta", "PKC2").
_MEMBER_SUFFIX = (r"(?:[-\s]?(?:alpha|beta|gamma|delta|epsilon|zeta|eta|theta|iota|kappa|lambda|mu|nu|xi|"
                  r"omicron|pi|rho|sigma|tau|upsilon|phi|chi|psi|omega|[a-z]|\d{1,2}[a-z]?|i{1,3}|iv|v))")
MAX_MEMBERS = 30


def family_of(concepts: Sequence[str]) -> str:
    """The family concept among a name's ``concepts`` ("" when none): a family concept exists only for a name
    the corpora use for a family at least as often as for a gene (:mod:`curation.entities.corpus_genes`)."""
    return next((c for c in concepts if is_family(c)), "")


def same_case(lexicon: Lexicon, kind: str, name: str, concepts: Sequence[str]) -> list[str]:
    """The concepts that have ``name`` written exactly so, when the name has an upper-case letter and some
    but not all of them do ("sAD" the Alzheimer's abbreviation, not "SAD"); else ``concepts``."""
    if name == name.lower() or len(concepts) < 2:
        return list(concepts)
    kept = [c for c in concepts if name in lexicon.names(kind, c)]
    return kept if 0 < len(kept) < len(concepts) else list(concepts)


def choose_gene(lexicon: Lexicon, name: str, species: str = "") -> str:
    """The gene concept ``name`` means in a text about ``species`` ("" when the lexicon does not know the name;
    the module docstring gives the order)."""
    concepts = list(dict.fromkeys(c for _, c in lexicon.lookup(name, GENE)))
    if len(concepts) < 2:
        return concepts[0] if concepts else ""
    family = family_of(concepts)
    if family:
        return family
    genes = [c for c in concepts if not is_family(c)]
    prefer = species or HUMAN
    cased = set(same_case(lexicon, GENE, name, genes))
    order = {c: i for i, c in enumerate(genes)}
    chosen = max(genes, key=lambda c: (lexicon.species(GENE, c) == prefer, c in cased, c.isdigit(),
                                       lexicon.uses(name, GENE, c), lexicon.species(GENE, c) == HUMAN, -order[c]))
    return ncbi_twin(lexicon, chosen) or chosen


def ncbi_twin(lexicon: Lexicon, concept: str) -> str:
    """The NCBI Gene id of a non-human gene the lexicon knows by an Ensembl id ("" when none is clear): the numeric
    concepts that share one of its names and are of its species or of none, the one most records give those
    names to, when it has strictly more than the next."""
    species = lexicon.species(GENE, concept)
    if concept.isdigit() or is_family(concept) or species in ("", HUMAN):
        return ""
    records: Counter[str] = Counter()
    for name in lexicon.names(GENE, concept):
        for _, other in lexicon.lookup(name, GENE):
            if other.isdigit() and lexicon.species(GENE, other) in ("", species):
                records[other] += lexicon.uses(name, GENE, other)
    ranked = records.most_common(2)
    return ranked[0][0] if ranked and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]) else ""


def family_members(lexicon: Lexicon, family: str, limit: int = MAX_MEMBERS) -> tuple[str, ...]:
    """The genes a family concept covers: the genes with a name that is one of the family's names plus a member
    suffix ("PKCalpha", "PKC-beta" for "PKC"), human first, at most ``limit``."""
    stems = sorted({re.escape(n) for n in lexicon.names(GENE, family)}, key=len, reverse=True)
    if not stems:
        return ()
    pattern = re.compile(rf"(?:{'|'.join(stems)}){_MEMBER_SUFFIX}", re.I)
    found = list(dict.fromkeys(c for c, n in lexicon.name_rows(GENE) if not is_family(c) and pattern.fullmatch(n)))
    found.sort(key=lambda c: lexicon.species(GENE, c) != HUMAN)
    return tuple(found[:limit])
