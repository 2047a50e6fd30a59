"""Every variant category a curator types: its canonical key, and g(e, d) on an abstract sentence.

One table per question: typed text -> key (notation alone), typed text -> key with a gene
dictionary (fusions written "A-B"), typed text + sentence -> the matcher finds it, and the
cases where the typed gene must stay the gene.
"""

from __future__ import annotations

import pytest

from curation.entities.lexicon import Lexicon
from curation.entities.matching import Matcher
from curation.entities.name_patterns import gene_lookup
from curation.entities.normalise import Normaliser
from curation.entities.variants import variant_keys
from curation.records import Synonym

GENES = ("BRAF", "EGFR", "KRAS", "ALK", "BCR", "ABL1", "CDKN2A", "PTEN", "MET", "ERBB2", "KMT2A", "HLA-A")


@pytest.fixture(scope="module")
def lexicon() -> Lexicon:
    return Lexicon(
        [Synonym(g, "gene", g, "civic", True) for g in GENES]
        + [
            Synonym("ABL1", "gene", "ABL", "hgnc"),
            Synonym("IL6", "gene", "IL6", "hgnc", True),
            Synonym("IL6", "gene", "IL-6", "hgnc"),
            Synonym("BCR::ABL1", "variant", "BCR::ABL1 Fusion", "civic", True),
            Synonym("EML4::ALK", "variant", "EML4::ALK Fusion", "civic", True),  # EML4: a partner only
            Synonym("Deletion", "variant", "Deletion", "civic", True),
            Synonym("T17", "variant", "T17 DELETION", "civic", True),  # HSPH1's, in CIViC
        ]
    )


@pytest.fixture(scope="module")
def matcher(lexicon: Lexicon) -> Matcher:
    return Matcher(lexicon)


def _gene_of(lexicon: Lexicon):
    return gene_lookup(lexicon)


# (typed, keys): what a curator types, with no dictionary needed.
TYPED_KEYS = [
    # protein changes in every notation
    ("V600E", ["V600E"]),
    ("Val600Glu", ["V600E"]),
    ("p.V600E", ["V600E"]),
    ("p.(Val600Glu)", ["V600E"]),
    ("BRAF V600E", ["V600E"]),
    ("V600K/E", ["V600K", "V600E"]),
    ("R213*", ["R213*"]),
    ("R213X", ["R213*"]),
    ("p.Arg213Ter", ["R213*"]),
    ("p.Leu531ProfsTer30", ["L531fs"]),
    ("W288fs", ["W288fs"]),
    ("L747_P753delinsS", ["L747_P753delinsS"]),
    ("Y772_A775dup", ["Y772_A775dup"]),
    ("p.A763_Y764insFQEA", ["A763_Y764insFQEA"]),
    # codons
    ("V600", ["V600"]),
    ("Val600", ["V600"]),
    ("codon 600", ["codon 600"]),
    ("KRAS codons 12/13", ["codon 12", "codon 13"]),
    # DNA changes
    ("c.1799T>A", ["c.1799T>A"]),
    ("c.2573T>G", ["c.2573T>G"]),
    ("c.2235_2249del", ["c.2235_2249del"]),
    ("c.1234+1G>A", ["c.1234+1G>A"]),
    ("IVS16+1G>A", ["IVS16+1G>A"]),
    ("NM_004333.4:c.1799T>A", ["c.1799T>A"]),
    # exon-level events; an in-frame exon-19 deletion by residues stays a protein key
    ("exon 19 deletion", ["Exon 19 Deletion"]),
    ("EGFR ex19del", ["Exon 19 Deletion"]),
    ("E746_A750del", ["E746_A750del"]),
    ("E746-A750del", ["E746_A750del"]),
    ("exon 20 insertion", ["Exon 20 Insertion"]),
    ("exon 20 ins", ["Exon 20 Insertion"]),
    ("MET exon 14 skipping", ["Exon 14 Skipping"]),
    # fusions
    ("BCR::ABL1", ["BCR::ABL1"]),
    ("ALK fusion", ["v::ALK"]),
    ("ALK rearrangement", ["v::ALK"]),
    # copy number and expression
    ("ERBB2 amplification", ["Amplification"]),
    ("copy number gain", ["Amplification"]),
    ("CDKN2A deletion", ["Deletion"]),
    ("homozygous deletion", ["Deletion"]),
    ("PTEN loss", ["Loss"]),
    ("copy number loss", ["Loss"]),
    ("overexpression", ["Overexpression"]),
    # dbSNP
    ("rs113488022", ["rs113488022"]),
]


@pytest.mark.parametrize(("typed", "keys"), TYPED_KEYS)
def test_typed_variant_has_its_key(typed: str, keys: list[str]) -> None:
    assert variant_keys(typed) == keys


@pytest.mark.parametrize(
    ("typed", "keys", "without_genes"),
    [
        ("BCR-ABL1", ["BCR::ABL1"], []),
        ("BCR/ABL1", ["BCR::ABL1"], []),
        ("BCR-ABL", ["BCR::ABL"], []),  # ABL is a name of ABL1: a gene, so a fusion
        ("EML4-ALK fusion", ["EML4::ALK"], ["Fusion"]),
        ("HLA-A", [], []),  # a gene name with a dash, not a fusion
        ("IL-6", [], []),
        ("Gene fusion", ["Fusion"], ["Fusion"]),  # not a symbol: the category alone
    ],
)
def test_fusions_written_with_a_dash_need_genes_on_both_sides(
    lexicon: Lexicon, typed: str, keys: list[str], without_genes: list[str]
) -> None:
    assert variant_keys(typed, gene_of=_gene_of(lexicon)) == keys
    assert variant_keys(typed) == without_genes


# (typed, sentence, found): g(e, d) finds the typed variant in the abstract sentence.
TYPED_IN_TEXT = [
    ("Val600Glu", "Melanomas with BRAF V600E respond.", "V600E"),
    ("p.(Val600Glu)", "the p.V600E substitution", "p.V600E"),
    ("V600K/E", "BRAF V600K-mutant melanoma", "V600K"),
    ("R213X", "a nonsense mutation p.Arg213Ter was found", "p.Arg213Ter"),
    ("L531fs", "a p.Leu531ProfsTer30 frameshift", "p.Leu531ProfsTer30"),
    ("V600", "the V600K mutation", "V600K"),
    ("V600", "mutations at codon 600 of BRAF", "codon 600"),
    ("codon 600", "BRAF V600E was found", "V600E"),
    ("codon 12", "KRAS codon 12 mutations predict resistance", "codon 12"),
    ("c.1799T>A", "BRAF c.1799T>A (p.V600E)", "c.1799T>A"),
    ("c.1234+1G>A", "the splice-site variant c.1234+1G>A", "c.1234+1G>A"),
    ("NM_004333.4:c.1799T>A", "the c.1799T>A transversion", "c.1799T>A"),
    ("ex19del", "EGFR exon 19 deletions respond to gefitinib", "exon 19 deletions"),
    ("exon 20 insertion", "EGFR ex20ins tumours", "ex20ins"),
    ("MET exon 14 skipping", "MET exon 14 skipping mutations respond to capmatinib", "exon 14 skipping"),
    ("E746_A750del", "the E746-A750del deletion in EGFR", "E746-A750del"),
    ("BCR-ABL1", "BCR-ABL positive chronic myeloid leukaemia", "BCR-ABL"),
    ("BCR/ABL1", "the BCR::ABL1 fusion", "BCR::ABL1"),
    ("ALK fusion", "EML4-ALK rearranged lung cancer", "EML4-ALK"),
    ("ALK rearrangement", "ALK-rearranged tumours", "ALK-rearranged"),
    ("ERBB2 amplification", "ERBB2-amplified breast cancer", "amplified"),
    ("copy number gain", "a copy-number gain of MET", "copy-number gain"),
    ("CDKN2A deletion", "homozygous deletion of CDKN2A", "deletion"),
    ("PTEN loss", "loss of PTEN predicted a poor outcome", "loss"),
    ("overexpression", "EGFR was overexpressed in 40%", "overexpressed"),
    ("rs113488022", "rs113488022 (BRAF V600E)", "rs113488022"),
]


@pytest.mark.parametrize(("typed", "sentence", "found"), TYPED_IN_TEXT)
def test_matcher_finds_the_typed_variant(matcher: Matcher, typed: str, sentence: str, found: str) -> None:
    assert found in [s.text for s in matcher.matches(typed, "variant", sentence)]


@pytest.mark.parametrize(
    ("typed", "sentence"),
    [
        ("CDKN2A deletion", "PTEN deletion was frequent."),  # another gene's deletion
        ("CDKN2A deletion", "CDKN2A was mutated. PTEN deletion was frequent."),  # another sentence
        ("ERBB2 amplification", "MET amplification confers resistance."),
        ("ALK fusion", "ROS1 fusions respond to crizotinib."),
        ("BCR-ABL1", "BCR and ABL1 were both expressed."),
        ("codon 600", "the c.600G>A change"),  # a DNA position is not a codon
        ("V600E", "BRAF V600K"),
    ],
)
def test_matcher_keeps_the_typed_gene_and_variant(matcher: Matcher, typed: str, sentence: str) -> None:
    assert not matcher.matched(typed, "variant", sentence)


def test_gene_typed_with_a_category_stays_the_gene(lexicon: Lexicon) -> None:
    """The issue's case: "CDKN2A deletion" was offered another gene's deletion."""
    found = Normaliser(lexicon).normalise("CDKN2A deletion", kind="variant")
    assert [(c.concept_id, c.how) for c in found] == [("Deletion", "variant")]  # not HSPH1's "T17 DELETION"


@pytest.mark.parametrize(
    ("typed", "concept"),
    [("BCR-ABL1", "BCR::ABL1"), ("BCR/ABL1 fusion", "BCR::ABL1"), ("ALK fusion", "v::ALK"), ("codon 600", "codon 600")],
)
def test_normaliser_reads_typed_fusions_and_codons(lexicon: Lexicon, typed: str, concept: str) -> None:
    best = Normaliser(lexicon).best(typed, kind="variant")
    assert (best.concept_id, best.how) == (concept, "variant")


def test_a_fusion_partner_the_kb_knows_counts_as_a_gene(lexicon: Lexicon) -> None:
    gene_of = gene_lookup(lexicon)
    assert lexicon.lookup("EML4", "gene") == [] and gene_of("EML4") == "EML4"
    assert gene_of("ABL") == "ABL1" and gene_of("A") is None
