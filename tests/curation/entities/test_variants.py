"""Variant notation: one key per variant, the free-text finder, categories and prose forms."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.config import Settings
from curation.entities.variant_categories import category_regex, variant_category
from curation.entities.variants import find_variants, normalise_variant, variant_keys, variant_matches
from curation.ingest.problems import Problems


@pytest.mark.parametrize(
    "text", ["V600E", "Val600Glu", "p.V600E", "p.Val600Glu", "Val 600 Glu", "V 600 E", "p.(Val600Glu)", "BRAF V600E"]
)
def test_protein_notations_share_one_key(text: str) -> None:
    assert normalise_variant(text) == "V600E"


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("R161*", "R161*"),
        ("R161X", "R161*"),
        ("Arg161Ter", "R161*"),
        ("E873stop", "E873*"),
        ("L531fs*30", "L531fs"),
        ("L531FS*30", "L531fs"),
        ("p.Leu531ProfsTer30", "L531fs"),
        ("p.Ser412ValfsX12", "S412fs"),
        ("E746_A750del", "E746_A750del"),
        ("p.Glu746_Ala750del", "E746_A750del"),
        ("I843DEL", "I843del"),
        ("A763_Y764insFQEA", "A763_Y764insFQEA"),
        ("Y772_A775DUP", "Y772_A775dup"),
        ("G776delinsVC", "G776delinsVC"),
        ("D842_H845DELDIMH", "D842_H845del"),
        ("c.1799T>A", "c.1799T>A"),
        ("c.1799 T>A", "c.1799T>A"),
        ("677C>T", "c.677C>T"),
        ("c.2406C-->A", "c.2406C>A"),
        ("c.549delC", "c.549del"),
        ("IVS8 -2A>G", "IVS8-2A>G"),
        ("rs121913529", "rs121913529"),
        ("RS121913529", "rs121913529"),
        ("V600", "V600"),
        ("Delta32", "\u039432"),
    ],
)
def test_notation_keys(text: str, key: str) -> None:
    assert normalise_variant(text) == key


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("Amplification", "Amplification"),
        ("AMPLIFICATION", "Amplification"),
        ("Fusion", "Fusion"),
        ("BCR::ABL1 Fusion", "BCR::ABL1"),
        ("v::ALK Fusion", "v::ALK"),
        ("EML4::ALK e6::e20", "EML4::ALK"),
        ("Exon 19 Deletion", "Exon 19 Deletion"),
        ("EGFR EXON 19 DELETION", "Exon 19 Deletion"),
        ("ex19del", "Exon 19 Deletion"),  # the shorthand curators type
        ("EGFR ex19del", "Exon 19 Deletion"),
        ("exon19del", "Exon 19 Deletion"),
        ("del19", "Exon 19 Deletion"),
        ("ex20ins", "Exon 20 Insertion"),
        ("MET ex14skip", "Exon 14 Skipping"),
        ("Loss-of-function", "Loss-of-function"),
        ("ITD", "ITD"),
        ("Wildtype", "Wildtype"),
        ("BRAF Mutation", "Mutation"),
    ],
)
def test_civic_categories(text: str, key: str) -> None:
    assert normalise_variant(text) == key


def test_exon_shorthand_is_not_a_protein_deletion() -> None:
    assert normalise_variant("E746_A750del") == "E746_A750del"
    assert normalise_variant("delta") is None and normalise_variant("index") is None


def test_a_variant_name_can_stand_for_several_keys() -> None:
    assert variant_keys("R167W (c.499C>T)") == ["R167W", "c.499C>T"]
    assert variant_keys("Q157P/R") == ["Q157P", "Q157R"]
    assert variant_keys("G12/G13") == ["G12", "G13"]
    assert variant_keys("R161* c.481C>T") == ["R161*", "c.481C>T"]  # CIViC loader drops the parentheses
    assert variant_keys("Splice Site c.340+1G>A") == ["c.340+1G>A"]


@pytest.mark.parametrize("text", ["Type II", "CD4", "IL6", "hello", "p53", ""])
def test_names_that_are_not_variants(text: str) -> None:
    assert normalise_variant(text) is None


def test_finder_offsets_and_keys() -> None:
    text = "BRAF V600E (p.Val600Glu) and c.1799T>A, rs121913529, L858R-positive; E2F, CD4, IL6, Type II."
    found = find_variants(text)
    assert [v.key for v in found] == ["V600E", "V600E", "c.1799T>A", "rs121913529", "L858R"]
    for mention in found:
        assert text[mention.start : mention.end] == mention.text
    assert found[1].text == "p.Val600Glu"  # the parenthesis around it is not part of it


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("a tryptophan to arginine substitution at amino acid 10 was", "W10R"),
        ("arginine 150 proline", "R150P"),
        ("Ile(146)-->Leu", "I146L"),
        ("Glu 272 to stop", "E272*"),
        ("a C to T transition at nucleotide 3916", "c.3916C>T"),
        ("the G-395A polymorphism", "c.-395G>A"),
        ("FOXP3-924 A/G genotype", "c.-924A>G"),
        ("a 32-bp deletion", "32bp deletion"),
        ("(CCTTT)14 repeats", "(CCTTT)14"),
        ("KrasG12D mice", "G12D"),
    ],
)
def test_prose_and_legacy_forms(text: str, key: str) -> None:
    assert key in [v.key for v in find_variants(text)]


def test_prose_can_be_switched_off() -> None:
    assert find_variants("a C to T transition at nucleotide 3916", prose=False) == []


def test_longest_mention_wins() -> None:
    found = find_variants("a tryptophan to arginine substitution at amino acid 10 was")
    assert [v.text for v in found] == ["tryptophan to arginine substitution at amino acid 10"]


@pytest.mark.parametrize(
    ("query", "found", "expected"),
    [
        ("V600E", "V600E", True),
        ("V600", "V600E", True),
        ("V600", "V600fs", True),
        ("V600", "V6000E", False),
        ("V600E", "V600K", False),
        ("v::ALK", "EML4::ALK", True),
        ("EML4::ALK", "NPM1::ALK", False),
    ],
)
def test_variant_matches(query: str, found: str, expected: bool) -> None:
    assert variant_matches(query, found) is expected


def test_category_regexes_read_text() -> None:
    exon = category_regex("Exon 19 Deletion")
    assert exon is not None
    assert exon.search("EGFR exon 19 deletions respond")
    assert exon.search("deletions in exon 19 of EGFR")
    assert not exon.search("exon 20 insertions")
    amp = category_regex("Amplification")
    assert amp is not None and amp.search("MET-amplified tumours")
    assert variant_category("DNA binding domain mutation", loose=True) == "DNA Binding Domain Mutation"
    assert variant_category("DNA binding domain mutation") is None


def test_civic_protein_and_dna_pairs_keep_both_keys() -> None:
    assert variant_keys("A149S c.445G>T") == ["A149S", "c.445G>T"]
    assert variant_keys("A149fs c.445del") == ["A149fs", "c.445del"]


# --- real data ------------------------------------------------------------------------------


def _data() -> Path:
    data = Settings().data_dir
    if not (data / "biored" / "Dev.PubTator").exists() or not (data / "civic").exists():
        pytest.skip(f"real data not found under {data}")
    return data


def test_civic_variants_normalise() -> None:
    """Every CIViC variant in HGVS-like protein notation gets a key, and the key round-trips."""
    from curation.ingest.civic import read_civic

    path = _data() / "civic" / "civic_evidence_2026-05.tsv"
    variants = {dict(r.entities)["Variant"] for r in read_civic(path, Problems(path))}
    assert len(variants) > 500
    missing = sorted(v for v in variants if not variant_keys(v))
    assert len(missing) / len(variants) < 0.03, missing[:20]
    for variant in variants:
        for key in variant_keys(variant):
            if "::" not in key and " " not in key:
                assert normalise_variant(key) == key, (variant, key)


def test_biored_dev_variant_spans() -> None:
    """The rules alone find most BioRED Dev SequenceVariant mentions, with exact spans."""
    from curation.ingest.pubtator import read_pubtator

    path = _data() / "biored" / "Dev.PubTator"
    gold = found = correct = 0
    for doc in read_pubtator(path, Problems(path)):
        spans = {(v.start, v.end) for v in find_variants(doc.text)}
        truth = {(m.start, m.end) for m in doc.mentions if m.type == "SequenceVariant"}
        gold += len(truth)
        found += len(spans)
        correct += len(spans & truth)
    assert correct / gold >= 0.85
    assert correct / found >= 0.9
