"""The four NCBI corpora as partially annotated recogniser training parts: types mapped, other kinds missing."""

from __future__ import annotations

from pathlib import Path

from curation.entities.corpus_genes import is_dev
from curation.entities.recogniser import blank, to_spacy_docs
from curation.entities.recogniser_corpus import CorpusPart
from curation.learning.recogniser.data import ALL, load_corpora
from curation.learning.recogniser.ncbi_corpora import (
    FILES,
    Guidelines,
    NcbiParts,
    load_ncbi_parts,
    mapped,
    missing_spans,
)
from curation.records import Document, Mention

TITLE = "PKC and BRCA1 in breast cancer."
ABSTRACT = "The PH domain of BRCA1 binds cisplatin in patients."


def _gnormplus_document(pmid: str = "7") -> Document:
    text = f"{TITLE} {ABSTRACT}"

    def at(name: str, kind: str) -> Mention:
        start = text.index(name)
        return Mention(pmid, start, start + len(name), name, kind, "1")

    return Document(pmid, TITLE, ABSTRACT, "gnormplus", (at("PKC", "FamilyName"), at("BRCA1", "Gene"),
                                                        at("PH domain", "DomainMotif")))


def test_a_corpus_keeps_its_kinds_and_leaves_the_types_it_drops_missing():
    document = _gnormplus_document()
    kept, dropped = mapped(document, Guidelines(families=False).type_map("gnormplus"))
    assert [(m.text, m.type) for m in kept.mentions] == [("BRCA1", "GeneOrGeneProduct")]
    assert [document.text[s:e] for s, e in dropped] == ["PKC", "PH domain"]
    kept, _ = mapped(document, Guidelines(families=True).type_map("gnormplus"))
    assert [m.text for m in kept.mentions] == ["PKC", "BRCA1"]  # a family taught as a gene
    assert "Modifier" in Guidelines(modifiers=True).type_map("ncbi_disease") and "Modifier" not in \
        Guidelines().type_map("ncbi_disease")  # left missing by default (chosen on BioRED Dev)
    assert "FamilyName" not in Guidelines().type_map("gnormplus")


def test_names_of_kinds_a_corpus_does_not_annotate_are_missing_not_outside():
    document = _gnormplus_document()
    text = document.text
    # a dictionary that knows BRCA1 (gene), breast cancer (disease) and cisplatin (chemical)
    names = {"BRCA1": "GENE", "breast cancer": "DISEASE", "cisplatin": "CHEMICAL", "PH": "GENE", "domain of": "GENE"}

    def dictionary(t: str):
        return [(t.index(n), t.index(n) + len(n), label) for n, label in names.items() if n in t]

    kept, dropped = mapped(document, Guidelines(families=False).type_map("gnormplus"))
    spans = missing_spans(text, dropped, ("GENE",), dictionary)
    assert sorted(text[s:e] for s, e in spans) == ["PH domain", "PKC", "breast cancer", "cisplatin"]
    # names of a dictionary that overlap (a name inside a dropped mention, two crossing names) are one missing span
    crossing = missing_spans(text, dropped, ("CHEMICAL",), dictionary)
    assert {"PH", "domain of", "PH domain"} <= {text[s:e] for s, e in crossing}
    to_spacy_docs(blank(), CorpusPart("x", (kept,), ("CHEMICAL",)), lambda t: list(crossing))
    parts = NcbiParts((), (), {text: spans})

    docs, counts = to_spacy_docs(blank(), CorpusPart("gnormplus_train", (kept,), ("GENE",)), parts.unlabelled())
    tags: dict[str, str] = {}
    for token in docs[0]:
        tags.setdefault(token.text, token.ent_iob_)  # each word's first place
    assert tags["BRCA1"] == "B" and tags["cisplatin"] == "" and tags["cancer"] == "" and tags["PKC"] == ""
    assert tags["patients"] == "O" and counts["missing_tokens"] == 6
    assert parts.unlabelled(lambda t: [(0, 1)])("another text") == [(0, 1)]  # other documents: the fallback's


def test_the_dev_split_is_the_gene_names_fixed_fifth_by_pmid():
    pmids = [str(10_000_000 + i) for i in range(2000)]
    share = sum(map(is_dev, pmids)) / len(pmids)
    assert 0.17 < share < 0.23 and [is_dev(p) for p in pmids[:50]] == [is_dev(p) for p in pmids[:50]]


def test_held_out_and_biored_documents_are_never_trained_on(tmp_path):
    documents = [_gnormplus_document(str(p)) for p in range(1, 40)]
    read = lambda path: documents if path.name == Path(FILES["gnormplus"]).name else []  # noqa: E731
    parts = load_ncbi_parts(tmp_path, {"1"}, {"2"}, lambda text: [], read)
    train, dev = parts.train[0], parts.dev[0]
    trained = {d.pmid for d in train.documents}
    scored = {d.pmid for d in dev.documents}
    assert not trained & {"1", "2"} and not scored & {"1", "2"} and not trained & scored
    assert trained | scored == {str(p) for p in range(3, 40)} and train.labels == ("GENE",)


def test_all_corpora_of_the_real_data_train_apart_from_every_held_out_document(data_dir):
    corpora = load_corpora(data_dir, ALL)
    names = [p.name for p in corpora.train]
    assert names == ["biored_train", "bc5cdr_train", "gnormplus_train", "nlmgene_train", "tmvar3_train",
                     "ncbi_disease_train"]
    held_out = {d.pmid for p in (corpora.dev, corpora.biored_test, corpora.bc5cdr_dev, corpora.bc5cdr_test)
                for d in p.documents}
    for part in corpora.train[2:]:
        assert part.documents and not {d.pmid for d in part.documents} & held_out, part.name
    for part in corpora.corpus_dev:
        trained = {d.pmid for p in corpora.train for d in p.documents}
        assert part.documents and not {d.pmid for d in part.documents} & trained, part.name
    assert dict((p.name, p.labels) for p in corpora.train)["ncbi_disease_train"] == ("DISEASE",)
    # GNormPlus annotates genes only: a disease of its text is missing, as is tmVar3's "patients" (a Species)
    unlabelled = corpora.unlabelled_spans()
    tmvar = corpora.train[4].documents
    assert any(d.text[s:e].lower().startswith("patient") for d in tmvar[:20] for s, e in unlabelled(d.text))
