"""What every recogniser shares: the corpus types it recognises, a corpus part, and its error.

Both the spaCy CNN (:mod:`curation.entities.recogniser`) and the transformer
(:mod:`curation.entities.transformer_recogniser`) train on :class:`CorpusPart` and label mentions
with :data:`LABELS`; :class:`RecogniserError` is what either raises for a folder or corpus it cannot use.
"""

from __future__ import annotations

from dataclasses import dataclass

from curation.errors import CurationError
from curation.records import Document

#: corpus mention type -> recogniser label; kinds are the matcher's vocabulary (label.lower()).
LABELS: dict[str, str] = {
    "GeneOrGeneProduct": "GENE",
    "SequenceVariant": "VARIANT",
    "ChemicalEntity": "CHEMICAL",
    "Chemical": "CHEMICAL",
    "DiseaseOrPhenotypicFeature": "DISEASE",
    "Disease": "DISEASE",
    "CellLine": "CELLLINE",
}


class RecogniserError(CurationError):
    """A recogniser folder or training corpus that cannot be used, and what to do."""


@dataclass(frozen=True)
class CorpusPart:
    """Documents of one annotated file and the labels it annotates (None: every label)."""

    name: str
    documents: tuple[Document, ...]
    labels: tuple[str, ...] | None = None
