"""A corpus annotated in batch (``python -m curation annotate``): every document's mentions, written as PubTator or
JSON lines.

Outputs (offsets are characters of the title, one space, then the abstract, as PubTator defines them;
of the text alone for a document without a title):

* ``pubtator``: ``id|t|title``, ``id|a|abstract``, then one line per mention,
  ``id<TAB>start<TAB>end<TAB>text<TAB>type<TAB>concept_id<TAB>confidence<TAB>source``: the six
  PubTator columns, then the link's confidence (3 decimals) and what found it (dictionary, rule,
  recogniser); readers that expect six columns ignore the rest. Types are BioRED's names
  (GeneOrGeneProduct, ChemicalEntity, DiseaseOrPhenotypicFeature, SequenceVariant, CellLine); an
  unlinked mention has concept id ``-``.
* ``jsonl``: ``{"id", "text", "annotations": [{start, end, text, type, concept_id, canonical,
  confidence, source}]}`` per document (plus ``title`` and ``abstract`` when it has a title).

The documents come from :mod:`curation.ingest.annotation_inputs`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from curation.entities.annotation import Annotation, Annotator
from curation.records import Document, one_line

OUTPUT_FORMATS = ("pubtator", "jsonl")
#: kind → PubTator type (BioRED's names); other kinds are written as they are.
PUBTATOR_TYPES = {
    "gene": "GeneOrGeneProduct",
    "chemical": "ChemicalEntity",
    "disease": "DiseaseOrPhenotypicFeature",
    "variant": "SequenceVariant",
    "cellline": "CellLine",
    "species": "OrganismTaxon",
}
# A mention's text on one PubTator line: line breaks and tabs become spaces (one character for one).


@dataclass(frozen=True)
class AnnotatedCorpus:
    """Documents and their mentions (same order), and the annotator version that found them."""

    documents: tuple[Document, ...]
    annotations: tuple[tuple[Annotation, ...], ...]
    version: str

    @property
    def mentions(self) -> int:
        return sum(len(found) for found in self.annotations)


def annotate_corpus(
    documents: Sequence[Document], annotator: Annotator, batch: int = 64,
    progress: Callable[[int, int], None] | None = None,
) -> AnnotatedCorpus:
    """Every document's mentions, by ``annotator`` (batches of ``batch`` texts)."""
    found: list[tuple[Annotation, ...]] = []
    for first in range(0, len(documents), batch):
        chunk = documents[first : first + batch]
        found += [tuple(spans) for spans in annotator.annotate([d.text for d in chunk])]
        if progress is not None:
            progress(len(found), len(documents))
    return AnnotatedCorpus(tuple(documents), tuple(found), annotator.version)


def to_pubtator(corpus: AnnotatedCorpus) -> str:
    """The corpus as PubTator, mention lines with confidence and source in columns 7 and 8."""
    out = []
    for doc, found in zip(corpus.documents, corpus.annotations, strict=True):
        lines = [f"{doc.pmid}|t|{doc.title}", f"{doc.pmid}|a|{doc.abstract}"]
        for a in found:
            kind = PUBTATOR_TYPES.get(a.type, a.type)
            lines.append("\t".join((doc.pmid, str(a.start), str(a.end), one_line(a.text), kind,
                                    a.concept_id or "-", f"{a.confidence:.3f}", a.source)))
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def to_jsonl(corpus: AnnotatedCorpus) -> str:
    """The corpus as JSON lines, one document per line, offsets into ``text``."""
    lines = []
    for doc, found in zip(corpus.documents, corpus.annotations, strict=True):
        obj: dict[str, object] = {"id": doc.pmid, "text": doc.text}
        if doc.title:
            obj |= {"title": doc.title, "abstract": doc.abstract}
        obj["annotations"] = [{"start": a.start, "end": a.end, "text": a.text, "type": a.type,
                               "concept_id": a.concept_id, "canonical": a.canonical,
                               "confidence": round(a.confidence, 4), "source": a.source} for a in found]
        lines.append(json.dumps(obj, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def render(corpus: AnnotatedCorpus, output_format: str) -> str:
    if output_format == "pubtator":
        return to_pubtator(corpus)
    if output_format == "jsonl":
        return to_jsonl(corpus)
    raise ValueError(f"output format must be one of {OUTPUT_FORMATS}, not {output_format!r}")
