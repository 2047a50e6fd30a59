"""Gene normalisation: corpus-learned names, the text's species, families offered as one concept."""

from __future__ import annotations

import pytest

from curation.entities.annotation import Annotator
from curation.entities.corpus_genes import corpus_gene_synonyms, family_id, gene_synonyms, is_dev, read_annotated
from curation.entities.gene_choice import choose_gene, family_members, ncbi_twin, same_case
from curation.entities.lexicon import Lexicon
from curation.entities.matching import Matcher
from curation.entities.normalise import Normaliser
from curation.entities.query import LINKED, QueryLinker
from curation.entities.species import dominant_species, text_species
from curation.records import Document, Mention, Synonym


def _doc(pmid: str, text: str, *mentions: tuple[str, str, str]) -> Document:
    found = []
    for name, kind, concept in mentions:
        start = text.index(name)
        found.append(Mention(pmid, start, start + len(name), name, kind, concept))
    return Document(pmid, "", text, mentions=tuple(found))


@pytest.fixture
def genes() -> Lexicon:
    return Lexicon([
        Synonym("2064", "gene", "ERBB2", "ensembl:human", True, "human"),
        Synonym("2064", "gene", "HER2", "ensembl:human", False, "human"),
        Synonym("13866", "gene", "Erbb2", "ensembl:mouse", True, "mouse"),
        Synonym("13866", "gene", "HER2", "corpus:nlmgene", False, "mouse"),
        Synonym("5788", "gene", "PRRT2", "ensembl:human", True, "human"),
        Synonym("5788", "gene", "PKC", "ensembl:human", False, "human"),  # paroxysmal kinesigenic choreoathetosis
        Synonym("5578", "gene", "PRKCA", "ensembl:human", True, "human"),
        Synonym("5578", "gene", "PKC-alpha", "ensembl:human", False, "human"),
        Synonym("5579", "gene", "PRKCB", "ensembl:human", True, "human"),
        Synonym("5579", "gene", "PKCbeta", "ensembl:human", False, "human"),
        Synonym(family_id("PKC"), "gene", "PKC", "corpus:gnormplus:family", True, ""),
    ])


def test_the_species_words_of_a_text_name_the_species_it_studies():
    assert dominant_species(text_species("Erbb2 knockout mice; murine cells from one human donor")) == "mouse"
    assert dominant_species(text_species("rats and mice")) in ("rat", "mouse")
    assert dominant_species(text_species("a kinase assay")) == ""


def test_a_name_two_species_share_goes_to_the_species_of_the_text(genes):
    assert choose_gene(genes, "HER2", "mouse") == "13866"
    assert choose_gene(genes, "HER2", "human") == "2064"
    assert choose_gene(genes, "HER2", "") == "2064"  # no species word: the human gene
    annotator = Annotator(Matcher(genes))
    mouse, human = annotator.annotate(["HER2 signalling in transgenic mice.", "HER2 in patients with cancer."])
    assert [a.concept_id for a in mouse if a.text == "HER2"] == ["13866"]
    assert [a.concept_id for a in human if a.text == "HER2"] == ["2064"]


def test_a_family_name_is_offered_as_the_family_never_as_one_of_its_genes(genes):
    assert choose_gene(genes, "PKC", "human") == "family:pkc"
    assert set(family_members(genes, "family:pkc")) == {"5578", "5579"}  # PRRT2's "PKC" is no member's name
    linked = QueryLinker(genes, Normaliser(genes)).link("Gene", "PKC", "gene")
    assert linked.status == LINKED and linked.concept_ids == ("family:pkc",)
    assert "family" in linked.note and "PRKCA" in linked.note
    assert {"5578", "5579", "5788"} <= {c.concept_id for c in linked.alternatives}  # each gene can be applied


def test_a_name_written_with_capitals_keeps_the_concepts_that_write_it_so():
    lexicon = Lexicon([Synonym("D000544", "disease", "sAD", "corpus"), Synonym("D016574", "disease", "SAD", "mesh")])
    assert same_case(lexicon, "disease", "sAD", ["D000544", "D016574"]) == ["D000544"]
    assert same_case(lexicon, "disease", "sad", ["D000544", "D016574"]) == ["D000544", "D016574"]
    linked = QueryLinker(lexicon, Normaliser(lexicon)).link("Disease", "sAD", "disease")
    assert linked.concept_ids == ("D000544",)


def test_corpus_gene_names_keep_their_ids_counts_species_and_families():
    documents = [
        _doc("1", "Prkca and PKC in mice; PKC again in mice.", ("Prkca", "Gene", "18750"), ("PKC", "FamilyName", "")),
        _doc("2", "PKC family members in mouse cells.", ("PKC", "FamilyName", "")),
        _doc("3", "Precore protein of HBV virus.", ("Precore", "Gene", "944568")),
    ]
    synonyms = list(gene_synonyms(documents, "corpus:test"))
    genes = {(s.concept_id, s.name, s.species) for s in synonyms}
    assert ("18750", "Prkca", "mouse") in genes and ("944568", "Precore", "virus") in genes
    family = [s for s in synonyms if s.concept_id == "family:pkc"]
    assert len(family) == 2 and family[0].species == ""  # one record per mention: the lexicon counts uses
    lexicon = Lexicon(synonyms)
    assert lexicon.uses("pkc", "gene", "family:pkc") == 2


def test_a_pubtator_family_line_without_an_id_is_read_and_the_dev_split_is_left_out(tmp_path):
    folder = tmp_path / "gnormplus"
    folder.mkdir()
    dev = next(str(n) for n in range(1000, 2000) if is_dev(str(n)))
    train = next(str(n) for n in range(1000, 2000) if not is_dev(str(n)))
    lines = []
    for pmid in (dev, train):
        lines += [f"{pmid}|t|PKC and BRCA1.", f"{pmid}|a|In patients.", f"{pmid}\t0\t3\tPKC\tFamilyName",
                  f"{pmid}\t8\t13\tBRCA1\tGene\t672", ""]
    path = folder / "GNormPlus_Train.PubTator"
    path.write_text("\n".join(lines), encoding="utf-8")
    assert [m.type for m in read_annotated(path)[0].mentions] == ["FamilyName", "Gene"]
    synonyms = list(corpus_gene_synonyms(path))
    # train only; a text about patients does not make a corpus gene human (the human vocabularies say which are)
    assert [(s.concept_id, s.species) for s in synonyms if s.name == "BRCA1"] == [("672", "")]
    assert not any(s.concept_id == "family:pkc" for s in synonyms)  # one family use (dev's left out): no family


def test_the_real_corpora_teach_pkc_as_a_family_and_mouse_genes_by_their_ids(data_dir):
    nlm = data_dir / "ner_corpora" / "nlmgene" / "NLMgene_Train.PubTator"
    gnorm = data_dir / "ner_corpora" / "gnormplus" / "GNormPlus_Train.PubTator"
    if not nlm.exists() or not gnorm.exists():
        pytest.skip("ner_corpora/ is not in the data directory")
    documents = read_annotated(nlm)
    share = sum(is_dev(d.pmid) for d in documents) / len(documents)
    assert 0.15 < share < 0.25  # the fixed dev split: about a fifth of the documents
    synonyms = list(corpus_gene_synonyms(nlm)) + list(corpus_gene_synonyms(gnorm))
    lexicon = Lexicon(synonyms)
    assert choose_gene(lexicon, "PKC", "human") == "family:pkc"
    species = {s.species for s in synonyms}
    assert {"mouse", "rat"} <= species and "human" not in species
    train_mentions = sum(m.type == "Gene" and m.concept_id.strip().isdigit()
                         for d in documents if not is_dev(d.pmid) for m in d.mentions)
    assert sum(not s.concept_id.startswith("family:") for s in corpus_gene_synonyms(nlm)) == train_mentions


def test_a_mouse_gene_known_by_an_ncbi_id_wins_over_its_ensembl_only_entry():
    lexicon = Lexicon([
        Synonym("ENSMUSG00000027314", "gene", "Dll4", "ensembl:mouse", True, "mouse"),
        Synonym("54485", "gene", "Dll4", "corpus:nlmgene", False, "mouse"),
        Synonym("54567", "gene", "DLL4", "ensembl:human", True, "human"),
    ])
    assert choose_gene(lexicon, "Dll4", "mouse") == "54485"  # the id the corpora and curators use
    assert choose_gene(lexicon, "Dll4", "human") == "54567"


def test_a_mouse_gene_chosen_by_its_ensembl_id_is_answered_with_the_ncbi_id_a_corpus_gives_one_of_its_names():
    lexicon = Lexicon([
        Synonym("ENSMUSG00000054342", "gene", "Kcnn4", "ensembl:mouse", True, "mouse"),
        Synonym("ENSMUSG00000054342", "gene", "KCa3.1", "ensembl:mouse", False, "mouse"),
        Synonym("3783", "gene", "KCNN4", "ensembl:human", True, "human"),
        Synonym("16534", "gene", "KCa3.1", "corpus:nlmgene", False, ""),
        Synonym("99999", "gene", "Kcnn4", "corpus:nlmgene", False, "rat"),  # another species' gene: never the twin
    ])
    assert choose_gene(lexicon, "Kcnn4", "mouse") == "16534"
    assert ncbi_twin(lexicon, "ENSMUSG00000054342") == "16534"
    assert ncbi_twin(lexicon, "3783") == ""  # already an NCBI id
    tied = Lexicon([*lexicon.entries(), Synonym("77777", "gene", "Kcnn4", "corpus:gnormplus", False, "")])
    assert ncbi_twin(tied, "ENSMUSG00000054342") == ""  # two corpus genes with as many records: no clear twin


def test_a_vocabulary_s_species_replaces_the_one_a_corpus_read_from_its_texts_whichever_comes_first():
    corpus = Synonym("672", "gene", "BRCA1", "corpus:nlmgene", False, "mouse")  # one mouse text named it
    vocabulary = Synonym("672", "gene", "BRCA1", "ensembl:human", True, "human")
    assert Lexicon([corpus, vocabulary]).species("gene", "672") == "human"
    assert Lexicon([vocabulary, corpus]).species("gene", "672") == "human"
    assert Lexicon([corpus]).species("gene", "672") == "mouse"
    rat = Synonym("672", "gene", "Brca1", "corpus:gnormplus", False, "rat")
    assert Lexicon([corpus, rat]).species("gene", "672") == "mouse"  # between two guesses, the first stays
