"""Gold mentions (an annotated corpus's) as rows of the concept index, source "gold".

One definition for the app's annotation path (:mod:`curation.workflows.entities`) and the
recogniser job's worker (:mod:`curation.jobs.recogniser`), which annotates a snapshot outside the store.
"""

from __future__ import annotations

from curation.entities.lexicon import Lexicon
from curation.entities.synonyms import PUBTATOR_KINDS
from curation.records import Document
from curation.store.annotations import AnnotationRow

# Corpus types the lexicon has no kind for, named in the kind vocabulary (BioRED's cell lines and species).
OTHER_KINDS = {"CellLine": "cellline", "OrganismTaxon": "species", "Species": "species"}


def corpus_kind(mention_type: str) -> str:
    """A corpus mention type in the kind vocabulary ("GeneOrGeneProduct" → "gene", "CellLine" → "cellline")."""
    return PUBTATOR_KINDS.get(mention_type) or OTHER_KINDS.get(mention_type) or mention_type.lower()


def gold_rows(document: Document, lexicon: Lexicon) -> list[AnnotationRow]:
    """A document's gold mentions as annotation rows (canonical name from the lexicon, else the text)."""
    rows = []
    for m in document.mentions:
        kind = corpus_kind(m.type)
        canonical = lexicon.canonical(kind, m.concept_id) or m.text
        rows.append(AnnotationRow(document.pmid, m.start, m.end, m.text, kind, m.concept_id, canonical, 1.0,
                                  "gold", m.source or "gold"))
    return rows
