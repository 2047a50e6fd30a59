"""The four NCBI entity corpora beside BioRED and BC5CDR, as partially annotated recogniser training parts.

``ner_corpora/`` of the data directory holds the training splits of GNormPlus, NLM-Gene, tmVar3 and NCBI disease
(see the data directory's README). Each annotates only its own kinds and draws a name's edges by its own guideline,
so each becomes a :class:`~curation.entities.recogniser_corpus.CorpusPart` with:

* its types mapped to the recogniser's (:data:`TYPE_MAPS`): GNormPlus / NLM-Gene ``Gene`` → gene; tmVar3's
  ``DNAMutation``, ``ProteinMutation``, ``SNP`` and ``OtherMutation`` → variant, its ``Gene`` / ``Disease`` /
  ``CellLine`` → their kinds; NCBI disease's ``SpecificDisease``, ``DiseaseClass`` and ``CompositeMention`` →
  disease. Two guideline differences are choices (:class:`Guidelines`, made on BioRED Dev): gene families
  (``FamilyName``) as genes or left out, and NCBI disease's ``Modifier`` ("colorectal" in "colorectal cancer
  cells") as a disease or left out;
* its ``labels``: the kinds it annotates, so that the tokens of the other kinds are *missing* (neither entity nor
  outside): a disease in GNormPlus is unannotated, not "not an entity";
* missing spans (:func:`missing_spans`): the names a dictionary of BioRED + BC5CDR Train's gold mentions finds of
  the kinds the corpus does not annotate, and the corpus's own mentions of types that are left out (a
  ``DomainMotif``, a ``Species``, a family when families are left out), so those are never taught as outside.

Held out: a document of BioRED Dev/Test or BC5CDR Dev/Test is never trained on (the data directory has removed
them; checked again here), and a document BioRED Train also holds keeps BioRED's annotation (BioRED annotates
every kind). A fixed fifth of each file (:func:`curation.entities.corpus_genes.is_dev`, by a digest of the PMID:
the split the corpus-learned gene names hold out too) is that corpus's dev split: never trained on, scored for the
kinds it annotates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from curation.entities.corpus_genes import is_dev
from curation.entities.recogniser_corpus import LABELS, CorpusPart
from curation.records import Document

#: file of each corpus, relative to the data directory
FILES: dict[str, str] = {
    "gnormplus": "ner_corpora/gnormplus/GNormPlus_Train.PubTator",
    "nlmgene": "ner_corpora/nlmgene/NLMgene_Train.PubTator",
    "tmvar3": "ner_corpora/tmvar3/tmVar3_Train.PubTator",
    "ncbi_disease": "ner_corpora/ncbi_disease/NCBIdisease_TrainDev.PubTator",
}
# Each corpus's type -> the corpus type of LABELS it stands for (one of BioRED's: the recogniser's labels follow).
_GENE, _VARIANT, _DISEASE, _CELL = "GeneOrGeneProduct", "SequenceVariant", "DiseaseOrPhenotypicFeature", "CellLine"
TYPE_MAPS: dict[str, dict[str, str]] = {
    "gnormplus": {"Gene": _GENE},
    "nlmgene": {"Gene": _GENE},
    "tmvar3": {"Gene": _GENE, "Disease": _DISEASE, "CellLine": _CELL, "DNAMutation": _VARIANT,
               "ProteinMutation": _VARIANT, "SNP": _VARIANT, "OtherMutation": _VARIANT},
    "ncbi_disease": {"SpecificDisease": _DISEASE, "DiseaseClass": _DISEASE, "CompositeMention": _DISEASE},
}


@dataclass(frozen=True)
class Guidelines:
    """How two annotation-guideline differences are handled, chosen on BioRED Dev (``bench.recogniser_corpora``).

    Both are left missing by default: trained once each way on this CPU, the recogniser alone scored entity F1
    0.749 on BioRED Dev with both taught (families as genes, modifiers as diseases), 0.756 with families left
    missing, 0.754 with modifiers left missing, and 0.762 with both left missing (gene 0.797, disease 0.771).
    BioRED annotates a family as a gene only where it names one product, and "colorectal" in "colorectal cancer
    cells" not at all. Differences of ~0.01 per kind are within run-to-run noise (chemical and variant, which
    neither choice touches, moved by up to 0.036 between runs).

    Attributes:
        families: GNormPlus / NLM-Gene ``FamilyName`` mentions taught as genes (False: left missing).
        modifiers: NCBI disease ``Modifier`` mentions taught as diseases (False: left missing).
    """

    families: bool = False
    modifiers: bool = False

    def type_map(self, corpus: str) -> dict[str, str]:
        """``corpus``'s types -> BioRED's corpus types, under these choices."""
        types = dict(TYPE_MAPS[corpus])
        if self.families and corpus in ("gnormplus", "nlmgene"):
            types["FamilyName"] = _GENE
        if self.modifiers and corpus == "ncbi_disease":
            types["Modifier"] = _DISEASE
        return types


@dataclass(frozen=True)
class NcbiParts:
    """The four corpora as training parts and dev parts, and the missing spans of every training document's text."""

    train: tuple[CorpusPart, ...]
    dev: tuple[CorpusPart, ...]
    missing: Mapping[str, tuple[tuple[int, int], ...]]

    def unlabelled(self, fallback: Callable[[str], Iterable[tuple[int, int]]] | None = None
                   ) -> Callable[[str], list[tuple[int, int]]]:
        """The ``unlabelled`` callable of the recogniser's training: these parts' spans by text, else ``fallback``'s
        (BC5CDR's genes and variants)."""
        def spans(text: str) -> list[tuple[int, int]]:
            if text in self.missing:
                return list(self.missing[text])
            return list(fallback(text)) if fallback is not None else []

        return spans


def mapped(document: Document, types: Mapping[str, str]) -> tuple[Document, list[tuple[int, int]]]:
    """``document`` with its mentions' types mapped (the others dropped), and the spans of the dropped ones."""
    kept, dropped = [], []
    for mention in document.mentions:
        if mention.type in types:
            kept.append(replace(mention, type=types[mention.type]))
        else:
            dropped.append((mention.start, mention.end))
    return replace(document, mentions=tuple(kept)), dropped


def missing_spans(text: str, dropped: Sequence[tuple[int, int]], labels: Sequence[str],
                  dictionary: Callable[[str], Iterable[tuple[int, int, str]]]) -> tuple[tuple[int, int], ...]:
    """The spans of ``text`` to leave missing: the corpus's dropped mentions, and the dictionary's names of kinds
    (labels) the corpus does not annotate."""
    found = [(start, end) for start, end, label in dictionary(text) if label not in labels]
    return tuple(sorted(set(found) | set(dropped)))


def kind_dictionary(documents: Iterable[Document], kinds: Sequence[str] = ("gene", "variant", "chemical", "disease")
                    ) -> Callable[[str], list[tuple[int, int, str]]]:
    """Where a text names one of ``kinds``, with the recogniser's label: by a dictionary of the given documents'
    gold names, and the variant notation rules."""
    from curation.entities.lexicon import Lexicon
    from curation.entities.matching import Matcher
    from curation.entities.synonyms import mention_synonyms

    kinds = tuple(kinds)
    mentions = [m for d in documents for m in d.mentions]
    lexicon = Lexicon(s for s in mention_synonyms(mentions) if s.entity_type in kinds)
    matcher = Matcher(lexicon, shapes=False)

    def spans(text: str) -> list[tuple[int, int, str]]:
        return [(s.start, s.end, s.entity_type.upper()) for s in matcher.find_all(text, kinds=kinds)]

    return spans


def load_ncbi_parts(data_dir: Path, held_out: set[str], annotated_elsewhere: set[str],
                    dictionary: Callable[[str], Iterable[tuple[int, int, str]]],
                    read: Callable[[Path], list[Document]], guidelines: Guidelines = Guidelines()) -> NcbiParts:
    """The four corpora of ``data_dir`` as training and dev parts (module docstring).

    Args:
        held_out: PMIDs never trained on nor scored here (BioRED / BC5CDR Dev and Test).
        annotated_elsewhere: PMIDs BioRED Train holds (its annotation of every kind wins).
        dictionary: (start, end, LABEL) of names in a text (:func:`kind_dictionary`).
        read: reads a PubTator file (the recogniser's strict reader).
    """
    train, dev, missing = [], [], {}
    for corpus, relative in FILES.items():
        types = guidelines.type_map(corpus)
        labels = tuple(sorted({LABELS[t] for t in types.values()}))
        chosen, scored = [], []
        for document in read(Path(data_dir) / relative):
            if document.pmid in held_out or document.pmid in annotated_elsewhere:
                continue
            kept, dropped = mapped(document, types)
            if is_dev(document.pmid):
                scored.append(kept)
                continue
            chosen.append(kept)
            missing[kept.text] = missing_spans(kept.text, dropped, labels, dictionary)
        train.append(CorpusPart(f"{corpus}_train", tuple(chosen), labels))
        dev.append(CorpusPart(f"{corpus}_dev", tuple(scored), labels))
    return NcbiParts(tuple(train), tuple(dev), missing)
