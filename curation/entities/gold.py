"""Gold mentions (an annotated corpus's) as rows of the concept index, source "gold".

One definition for the app's annotation path (:mod:`curation.relations.concept_index`) and the
recogniser job's worker (:mod:`curation.learning.recogniser.learner`), which annotates a snapshot outside the store.
"""

from __future__ import annotations

from curation.entities.lexicon import Lexicon, is_placeholder_id
from curation.entities.synonyms import PUBTATOR_KINDS
from curation.records import Document
from curation.store.annotations import AnnotationRow

# Corpus types the lexicon has no kind for, named in the kind vocabulary (BioRED's cell lines and species).
OTHER_KINDS = {"CellLine": "cellline", "OrganismTaxon": "species", "Species": "species"}


def corpus_kind(mention_type: str) -> str:
    """A corpus mention type in the kind vocabulary ("GeneOrGeneProduct" → "gene", "CellLine" → "cellline")."""
    return PUBTATOR_KINDS.get(mention_type) or OTHER_KINDS.get(mention_type) or mention_type.lower()


def gold_rows(document: Document, lexicon: Lexicon) -> list[AnnotationRow]:
    """A document's gold mentions as annotation rows (canonical name from the lexicon, else the text).

    A placeholder id ("-1", "-": the corpus found a mention but no concept) becomes no concept id: the
    mention is still highlighted, and no concept "-1" gathers every such mention.
    """
    rows = []
    for m in document.mentions:
        kind = corpus_kind(m.type)
        concept = "" if is_placeholder_id(m.concept_id) else m.concept_id
        canonical = (lexicon.canonical(kind, concept) if concept else "") or m.text
        rows.append(AnnotationRow(document.pmid, m.start, m.end, m.text, kind, concept, canonical, 1.0,
                                  "gold", m.source or "gold"))
    return rows
