"""The benchmark's corpus: every distinct PMID of BioRED, BC5CDR and HoC, and what its gold mentions say.

Ids and names: entity types are told apart by looking each relation id up among the document's
mentions (ids are NCBI Gene numbers, MeSH ids, or variant ids such as ``rs74805019``,
``p|SUB|V|600|E``); BC5CDR's "Chemical" and "Disease" are BioRED's chemical and disease types. A
variant's gene is the gene mentioned nearest to it (:func:`nearest_gene`).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path

from curation.entities.lexicon import is_placeholder_id
from curation.errors import CurationError
from curation.ingest.jsonl import read_jsonl
from curation.ingest.problems import Problems
from curation.ingest.pubtator import read_pubtator
from curation.records import Document

GENE = "GeneOrGeneProduct"
VARIANT = "SequenceVariant"
CHEMICAL = "ChemicalEntity"
DISEASE = "DiseaseOrPhenotypicFeature"
# Mention type -> the benchmark's entity type (BioRED and BC5CDR name chemicals and diseases apart).
ENTITY_TYPES = {
    GENE: "Gene",
    VARIANT: "Variant",
    CHEMICAL: "Chemical",
    "Chemical": "Chemical",
    DISEASE: "Disease",
    "Disease": "Disease",
}
# Corpus sources in order of precedence: a PMID in several keeps the first one's text
# (BioRED has titles and gene annotations; HoC has neither titles nor original spacing).
SOURCES = (("biored", "*.PubTator"), ("bc5cdr", "*.PubTator.txt"), ("hoc", "*.jsonl"))
# Composite mention ids ("3172,3651,6927", BC5CDR's "D002318|D012131"). "|" is also the
# field separator inside BioRED variant ids ("p|SUB|V|600|E"), so variants split on , ; only.
_COMPOSITE = re.compile(r"[,;|]")
_VARIANT_COMPOSITE = re.compile(r"[,;]")


class BenchmarkError(CurationError):
    """The benchmark cannot be built from the given data folder."""


# --- ids and names ------------------------------------------------------------------------


def concept_parts(concept_id: str, mention_type: str = "") -> tuple[str, ...]:
    """The single ids of a possibly composite mention id (placeholder parts, "-", "-1", "", dropped)."""
    pattern = _VARIANT_COMPOSITE if mention_type == VARIANT else _COMPOSITE
    return tuple(p for p in (part.strip() for part in pattern.split(concept_id)) if not is_placeholder_id(p))


def nearest_gene(document: Document, variant_id: str) -> str | None:
    """The gene a variant belongs to, by proximity of mentions in the document.

    Rule: over every (variant mention, gene mention) pair, the character gap between the two
    spans (0 when they touch or overlap); the gene with the smallest gap wins. Ties go to the
    gene mentioned more often in the document, then to the smaller id (as text), so the
    result is deterministic. Only gene mentions annotated with one id count.

    Known misses: a variant whose gene is never mentioned (an rs number of an intergenic
    locus, a gene named only in the title of a different annotation) gets the nearest
    *other* gene; two genes in one sentence ("BRCA1 and BRCA2 185delAG") can pick the wrong
    one; a gene named only in composite mentions is not seen. No gene mention at all → None.
    """
    gaps = gene_gaps(document, variant_id)
    if not gaps:
        return None
    frequency = Counter(m.concept_id for m in document.mentions if m.type == GENE)
    return min(gaps, key=lambda gene: (gaps[gene], -frequency[gene], gene))


def gene_gaps(document: Document, variant_id: str) -> dict[str, int]:
    """Per gene with a single-id mention, the smallest character gap between one of its mentions
    and one of the variant's (0 when they touch or overlap)."""
    variants = [
        m for m in document.mentions if m.type == VARIANT and variant_id in concept_parts(m.concept_id, VARIANT)
    ]
    genes = [m for m in document.mentions if m.type == GENE and len(concept_parts(m.concept_id, GENE)) == 1]
    gaps: dict[str, int] = {}
    for v in variants:
        for g in genes:
            distance = max(0, g.start - v.end, v.start - g.end)
            gaps[g.concept_id] = min(distance, gaps.get(g.concept_id, distance))
    return gaps


# --- corpus and the whole build -----------------------------------------------------------


def source_files(data_dir: str | Path) -> dict[str, list[Path]]:
    """The corpus files under ``data_dir``, per source.

    Raises:
        BenchmarkError: a source folder has no file of its pattern.
    """
    data_dir = Path(data_dir)
    out = {}
    for folder, pattern in SOURCES:
        files = sorted((data_dir / folder).glob(pattern))
        if not files:
            raise BenchmarkError(f"no {pattern} file in {data_dir / folder}; the benchmark needs BioRED, BC5CDR and "
                                 "HoC there (set CURATION_DATA_DIR to the shared data folder)")
        out[folder] = files
    return out


def load_corpus(data_dir: str | Path) -> tuple[list[Document], list[Document]]:
    """(corpus, annotated): one document per distinct PMID, and every PubTator document read.

    Read strictly: a malformed line stops the build with its file and line.
    """
    files = source_files(data_dir)
    corpus: dict[str, Document] = {}
    annotated: list[Document] = []
    for folder, _ in SOURCES:
        for path in files[folder]:
            reader = read_jsonl if path.suffix == ".jsonl" else read_pubtator
            for document in reader(path, Problems(path)):
                corpus.setdefault(document.pmid, document)
                if folder != "hoc":
                    annotated.append(document)
    return list(corpus.values()), annotated


def document_concepts(documents: Iterable[Document]) -> dict[str, frozenset[str]]:
    """Per PMID, every concept id of its gold mentions (composite ids split, sources merged)."""
    out: dict[str, set[str]] = defaultdict(set)
    for document in documents:
        for mention in document.mentions:
            out[document.pmid].update(concept_parts(mention.concept_id, mention.type))
    return {pmid: frozenset(ids) for pmid, ids in out.items()}
