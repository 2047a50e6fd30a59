"""EDEL's g(e, d) and highlighting: dictionary, notation rules, abbreviations, shapes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from curation.config import Settings
from curation.entities.lexicon import Lexicon
from curation.entities.matching import Matcher
from curation.entities.morphology import find_drug_stems, find_formulas, looks_chemical, looks_gene_product
from curation.entities.name_filter import measure_names, unreliable_names
from curation.entities.name_patterns import case_sensitive, names_regex
from curation.entities.synonyms import element_synonyms, mention_synonyms, ptm_synonyms
from curation.ingest.problems import Problems
from curation.records import Document, Mention, Synonym


@pytest.fixture(scope="module")
def matcher() -> Matcher:
    lexicon = Lexicon(
        [
            Synonym("DB08881", "chemical", "Vemurafenib", "drugbank", True),
            Synonym("DB08881", "chemical", "PLX4032", "drugbank"),
            Synonym("DB00619", "chemical", "Imatinib", "drugbank", True),
            Synonym("DB00544", "chemical", "5-fluorouracil", "drugbank", True),
            Synonym("D012", "chemical", "retinoic acid", "corpus"),
            Synonym("D013", "chemical", "all-trans retinoic acid", "corpus"),
            Synonym("D014", "chemical", "mineralocorticoid", "corpus"),
            Synonym("BRAF", "gene", "BRAF", "civic", True),
            Synonym("ABL1", "gene", "ABL1", "civic", True),
            Synonym("ABL1", "gene", "ABL", "hgnc"),
            Synonym("BCR", "gene", "BCR", "civic", True),
            Synonym("COX2", "gene", "COX-2", "corpus", True),
            Synonym("PD", "gene", "PD", "corpus", True),
            Synonym("D015464", "disease", "chronic myeloid leukemia", "corpus", True),
            *ptm_synonyms(),
        ]
    )
    return Matcher(lexicon)


def test_synonyms_count_and_offsets_are_into_document_text(matcher: Matcher) -> None:
    doc = Document("1", "BRAF inhibitors.", "Patients got PLX4032 daily.")
    spans = matcher.matches("Vemurafenib", "chemical", doc)
    assert [(s.text, s.concept, s.how) for s in spans] == [("PLX4032", "DB08881", "dictionary")]
    assert doc.text[spans[0].start : spans[0].end] == "PLX4032"
    assert spans[0].start == len("BRAF inhibitors. Patients got ")
    assert matcher.matched("vemurafenib", "chemical", doc)  # any case of a long name
    assert not matcher.matched("Imatinib", "chemical", doc)


def test_entities_missing_from_the_lexicon_still_match_their_own_text(matcher: Matcher) -> None:
    assert matcher.matched("Osimertinib", "chemical", "osimertinib was given")
    assert not matcher.matched("Osimertinib", "chemical", "osimertinibum-free")  # whole words only


def test_short_names_match_by_case(matcher: Matcher) -> None:
    assert matcher.matched("BRAF", "gene", "BRAF-mutant melanoma")
    assert not matcher.matched("BRAF", "gene", "a braf mutant")
    assert matcher.matched("ABL1", "gene", "the BCR-ABL fusion")  # ABL is a name of ABL1
    assert matcher.matched("COX-2", "gene", "COX 2 and COX2 levels")  # a dash may be a space or nothing


@pytest.mark.parametrize(
    ("entity", "text", "found"),
    [
        ("V600E", "BRAF p.Val600Glu was found", "p.Val600Glu"),
        ("p.Val600Glu", "BRAF V600E was found", "V600E"),
        ("BRAF V600E", "the Val 600 Glu change", "Val 600 Glu"),
        ("V600", "the V600K mutation", "V600K"),
        ("R161* (c.481C>T)", "a c.481C>T substitution", "c.481C>T"),
        ("Amplification", "MET-amplified tumours", "amplified"),
        ("Exon 19 Deletion", "deletions in exon 19 of EGFR", "deletions in exon 19"),
        ("ex19del", "EGFR exon 19 deletions respond", "exon 19 deletions"),  # typed shorthand, text in words
        ("exon 19 deletion", "EGFR ex19del tumours", "ex19del"),
        ("BCR::ABL1 Fusion", "BCR-ABL positive CML", "BCR-ABL"),
        ("v::ALK Fusion", "EML4-ALK rearranged tumours", "EML4-ALK"),
    ],
)
def test_variant_notation_and_categories(matcher: Matcher, entity: str, text: str, found: str) -> None:
    assert found in [s.text for s in matcher.matches(entity, "variant", text)]


def test_variants_that_differ_do_not_match(matcher: Matcher) -> None:
    assert not matcher.matched("V600E", "variant", "BRAF V600K and V600D")
    assert not matcher.matched("Amplification", "variant", "a point mutation")
    assert not matcher.matched("BCR::ABL1 Fusion", "variant", "ABL1 and BCR were expressed")


def test_residues_and_ptm_types(matcher: Matcher) -> None:
    text = "AKT1 is phosphorylated at Ser-473 (pS473) and Thr308."
    assert [s.text for s in matcher.matches("serine 473", "residue", text)] == ["Ser-473", "pS473"]
    assert not matcher.matched("S474", "residue", text)
    assert [s.text for s in matcher.matches("phosphorylation", "ptm", text)] == ["phosphorylated"]
    assert not matcher.matched("acetylation", "ptm", text)


def test_fusion_genes_and_drug_combinations_need_every_part(matcher: Matcher) -> None:
    assert matcher.matched("BCR::ABL1", "gene", "BCR and ABL1 transcripts")
    assert not matcher.matched("BCR::ABL1", "gene", "ABL1 transcripts")
    assert matcher.matched("Vemurafenib,Imatinib", "chemical", "PLX4032 then imatinib")
    assert not matcher.matched("Vemurafenib + Imatinib", "chemical", "PLX4032 alone")


def test_abbreviation_of_an_entity_counts(matcher: Matcher) -> None:
    text = "Chronic myeloid leukemia (CML) is rare. In CML, imatinib works."
    spans = matcher.matches("chronic myeloid leukemia", "disease", text)
    assert [(s.text, s.how) for s in spans] == [
        ("Chronic myeloid leukemia", "dictionary"),
        ("CML", "abbreviation"),
        ("CML", "abbreviation"),
    ]
    assert [s.start for s in spans[1:]] == [text.index("CML"), text.rindex("CML")]


def test_find_all_spans(matcher: Matcher) -> None:
    doc = Document("7", "5-fluorouracil (5-FU) and BRAF V600E", "5-FU with all-trans retinoic acid; p.Val600Glu.")
    spans = matcher.find_all(doc)
    text = doc.text
    assert all(text[s.start : s.end] == s.text for s in spans)
    got = [(s.text, s.entity_type, s.how) for s in spans]
    assert ("5-fluorouracil", "chemical", "dictionary") in got
    assert got.count(("5-FU", "chemical", "abbreviation")) == 2  # defined once, used twice
    assert ("all-trans retinoic acid", "chemical", "dictionary") in got  # the longest name wins
    assert ("retinoic acid", "chemical", "dictionary") not in got
    assert ("V600E", "variant", "variant") in got and ("p.Val600Glu", "variant", "variant") in got
    assert [s.concept for s in spans if s.entity_type == "variant"] == ["V600E", "V600E"]
    starts = [s.start for s in spans]
    assert starts == sorted(starts)
    assert all(a.end <= b.start for a, b in zip(spans, spans[1:], strict=False))  # no overlaps


def test_find_all_kinds_and_veto(matcher: Matcher) -> None:
    text = "Parkinson's disease (PD) patients. PD progressed; PD-1 was not studied; mineralocorticoid receptor."
    assert [s.entity_type for s in matcher.find_all(text, kinds=["gene"])].count("gene") == 1
    assert matcher.find_all(text, kinds=["chemical"]) == []  # "mineralocorticoid receptor" is a gene
    vetoed = Matcher(matcher.lexicon, veto=False)
    assert [s.text for s in vetoed.find_all(text, kinds=["gene"])].count("PD") == 2


def test_find_all_residues_only_in_ptm_context(matcher: Matcher) -> None:
    assert matcher.find_all("K562 cells grew.", kinds=["residue"]) == []
    spans = matcher.find_all("Y705 is phosphorylated.", kinds=["residue", "ptm"])
    assert [(s.text, s.entity_type) for s in spans] == [("Y705", "residue"), ("phosphorylated", "ptm")]


def test_abbreviations_whose_long_form_is_shaped_like_an_entity(matcher: Matcher) -> None:
    text = "Thioperamide (THP) and the 7-nitroindazole (7-NI) group; THP and 7-NI again. Heart rate (HR) rose."
    spans = matcher.find_all(text, kinds=["chemical"])
    got = [(s.text, s.how) for s in spans]
    assert got.count(("THP", "abbreviation")) == 2 and got.count(("7-NI", "abbreviation")) == 2
    assert ("Thioperamide", "shape") in got and ("7-nitroindazole", "shape") in got
    assert "HR" not in [s.text for s in spans]


def test_shapes() -> None:
    assert looks_chemical("thioperamide") and looks_chemical("otilonium bromide") and looks_chemical("quetiapine")
    assert not looks_chemical("heart rate") and not looks_chemical("phosphodiesterase 4D")
    assert looks_gene_product("phosphodiesterase 4D")
    assert looks_gene_product("neuronal NO synthase") and looks_gene_product("angiotensin II type 1a receptor")
    assert [m.text for m in find_drug_stems("rosuvastatin or quetiapine, not statin")] == ["rosuvastatin", "quetiapine"]
    assert [m.text for m in find_formulas("CaCl(2), NaCl and H2O2; not CD4 or CAT")] == ["CaCl(2)", "NaCl", "H2O2"]
    assert case_sensitive("DOX") and case_sensitive("mTOR") and not case_sensitive("Vemurafenib")
    regex = names_regex(["Interleukin-6", "IL6"])
    assert regex is not None and regex.search("interleukin 6") and not regex.search("il6")


def test_name_filter_drops_names_that_are_usually_wrong() -> None:
    lexicon = Lexicon([Synonym("DB1", "chemical", "SNP"), Synonym("DB2", "chemical", "cisplatin")])
    probe = Matcher(lexicon, abbreviations=False, shapes=False)
    docs = [
        Document(
            "1",
            "",
            "An SNP in cisplatin response; SNP again.",
            mentions=(Mention("1", 10, 19, "cisplatin", "ChemicalEntity", "D"),),
        ),
        Document(
            "2", "", "SNP arrays and cisplatin.", mentions=(Mention("2", 15, 24, "cisplatin", "ChemicalEntity", "D"),)
        ),
    ]
    stats = measure_names(probe, docs, ["chemical"])
    assert stats[("chemical", "snp")] == (3, 0)
    assert stats[("chemical", "cisplatin")].precision == 1.0
    assert unreliable_names(stats) == {"chemical": frozenset({"snp"})}


# --- real data ------------------------------------------------------------------------------


def _biored() -> Path:
    path = Settings().data_dir / "biored"
    if not (path / "Train.PubTator").exists() or not (path / "Dev.PubTator").exists():
        pytest.skip(f"BioRED not found under {path}")
    return path


@pytest.fixture(scope="module")
def biored_run() -> tuple[list[Document], Matcher, list[tuple[str, int, int, str]], float]:
    from curation.ingest.pubtator import read_pubtator

    path = _biored()
    train = list(read_pubtator(path / "Train.PubTator", Problems(path / "Train.PubTator")))
    dev = list(read_pubtator(path / "Dev.PubTator", Problems(path / "Dev.PubTator")))
    lexicon = Lexicon(mention_synonyms(m for d in train for m in d.mentions) + element_synonyms())
    matcher = Matcher(lexicon)
    start = time.perf_counter()
    predicted = [
        (d.pmid, s.start, s.end, s.entity_type) for d in dev for s in matcher.find_all(d, ["variant", "chemical"])
    ]
    seconds = time.perf_counter() - start
    return dev, matcher, predicted, seconds / len(dev)


def test_biored_dev_spans_with_a_train_dictionary(biored_run) -> None:
    dev, _, predicted, _ = biored_run
    kinds = {"SequenceVariant": "variant", "ChemicalEntity": "chemical"}
    gold = {(m.pmid, m.start, m.end, kinds[m.type]) for d in dev for m in d.mentions if m.type in kinds}
    for kind, min_precision, min_recall in (("variant", 0.9, 0.85), ("chemical", 0.6, 0.5)):
        p = {x for x in predicted if x[3] == kind}
        g = {x for x in gold if x[3] == kind}
        assert len(p & g) / len(p) >= min_precision, kind
        assert len(p & g) / len(g) >= min_recall, kind


def test_biored_dev_is_fast_enough(biored_run) -> None:
    *_, seconds_per_abstract = biored_run
    assert seconds_per_abstract < 0.05  # the budget is ~20 ms; this leaves room for a slow machine


def test_g_finds_gold_variants_by_any_notation(biored_run) -> None:
    """g(e, d) = 1 for a gold variant written in another notation (the key, not the text)."""
    from curation.entities.variants import normalise_variant

    dev, matcher, _, _ = biored_run
    tried = hit = 0
    for doc in dev:
        for m in doc.mentions:
            key = normalise_variant(m.text) if m.type == "SequenceVariant" else None
            if key and key != m.text:
                tried += 1
                spans = matcher.matches(key, "variant", doc)
                hit += any(s.start < m.end and m.start < s.end for s in spans)
    assert tried > 20
    assert hit / tried >= 0.95


ONE_TOKEN_PROBES = ("ERBB2", "HER2", "Erbb2", "p53", "A1BG", "Cyp2g", "CYP2T", "Ly6h", "HER-2", "IL-6", "K-Ras",
                    "c-erbB-2", "P185(ERBB2)", "Cannot", "gonna", "dont", "US$", "CD340", "5mg", "Neu oncogene")


def test_names_kept_out_of_the_phrase_matcher_are_the_ones_the_tokenizer_keeps_whole() -> None:
    plain = Matcher(Lexicon(), abbreviations=False)
    kept_out = {name for name in ONE_TOKEN_PROBES if plain._one_token(name)}
    # Never a name the tokenizer splits (it would never match); a few it keeps whole may take the slow path.
    assert all(len(plain.nlp.make_doc(name)) == 1 for name in kept_out)
    assert {"ERBB2", "HER2", "Erbb2", "p53", "A1BG", "CD340", "Ly6h", "HER-2", "IL-6"} <= kept_out
    assert not Matcher(Lexicon(), nlp=plain.nlp, abbreviations=False)._one_token("ERBB2")  # another tokenizer


def test_one_token_names_match_as_the_phrase_matcher_matches_them() -> None:
    names = [Synonym(f"G{n}", "gene", name, "test") for n, name in enumerate(ONE_TOKEN_PROBES)]
    names += [Synonym("D1", "disease", "Leukaemia", "test")]  # long: matched in any case
    text = ("ERBB2 (HER-2, erbb2) and p53 with Cyp2g, cyp2t, A1BG; c-erbB-2 and P185(ERBB2) are not 5mg. "
            "Cannot and gonna stay words; LEUKAEMIA and leukaemia are the disease; Neu oncogene; IL-6.")
    fast = Matcher(Lexicon(names), abbreviations=False, veto=False, shapes=False)
    slow = Matcher(Lexicon(names), nlp=fast.nlp, abbreviations=False, veto=False, shapes=False)  # phrases only
    assert not any(slow._one_token_names.values()) and any(fast._one_token_names.values())
    spans = fast.find_all(text)
    assert spans == slow.find_all(text)
    found = {s.text for s in spans}
    assert {"ERBB2", "HER-2", "p53", "A1BG", "LEUKAEMIA", "leukaemia", "IL-6", "Neu oncogene"} <= found
    assert "cyp2t" not in found and "Cannot" not in found  # names with capitals inside match by case, as before
