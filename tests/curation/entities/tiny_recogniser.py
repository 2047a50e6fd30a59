"""Tiny annotated abstracts the recogniser's tests train on (entities/, jobs/): three sentences of a gene, a
variant, a drug and a disease, repeated, as Documents with gold mentions or as PubTator text."""

from __future__ import annotations

from curation.records import Document, Mention

SENTENCES = [
    ("BRAF", "GeneOrGeneProduct", "V600E", "SequenceVariant", "vemurafenib", "ChemicalEntity", "melanoma"),
    ("KRAS", "GeneOrGeneProduct", "G12C", "SequenceVariant", "sotorasib", "ChemicalEntity", "lung cancer"),
    ("EGFR", "GeneOrGeneProduct", "L858R", "SequenceVariant", "osimertinib", "ChemicalEntity", "lung cancer"),
]


def _document(pmid: str, gene: str, variant: str, drug: str, disease: str, source: str = "biored") -> Document:
    title = f"{gene} {variant} and {drug} in {disease}."
    abstract = f"Patients with {disease} carrying {gene} {variant} responded to {drug}."
    text = f"{title} {abstract}"
    mentions = []
    for name, kind in ((gene, "GeneOrGeneProduct"), (variant, "SequenceVariant"), (drug, "ChemicalEntity"),
                       (disease, "DiseaseOrPhenotypicFeature")):
        start = 0
        while (start := text.find(name, start)) >= 0:
            mentions.append(Mention(pmid, start, start + len(name), name, kind, f"id:{name}", source))
            start += len(name)
    return Document(pmid, title, abstract, source, tuple(mentions))


def _corpus(n: int, offset: int = 0) -> tuple[Document, ...]:
    docs = []
    for i in range(n):
        gene, _, variant, _, drug, _, disease = SENTENCES[i % len(SENTENCES)]
        docs.append(_document(str(1000 + offset + i), gene, variant, drug, disease))
    return tuple(docs)


def _pubtator(documents) -> str:
    out = []
    for d in documents:
        out += [f"{d.pmid}|t|{d.title}", f"{d.pmid}|a|{d.abstract}"]
        out += [f"{d.pmid}\t{m.start}\t{m.end}\t{m.text}\t{m.type}\t{m.concept_id}" for m in d.mentions]
        out.append("")
    return "\n".join(out) + "\n"
