"""Normalising what a curator types: exact names, notation rules, then char n-gram TF-IDF."""

from __future__ import annotations

import pytest

from curation.config import Settings
from curation.entities.normalise import Candidate, Normaliser
from curation.entities.synonyms import Lexicon, drugbank_synonyms, ptm_synonyms
from curation.records import Synonym


@pytest.fixture(scope="module")
def normaliser() -> Normaliser:
    lexicon = Lexicon(
        [
            Synonym("DB08881", "chemical", "Vemurafenib", "drugbank", True),
            Synonym("DB08881", "chemical", "PLX4032", "drugbank"),
            Synonym("DB08912", "chemical", "Dabrafenib", "drugbank", True),
            Synonym("DB00619", "chemical", "Imatinib", "drugbank", True),
            Synonym("DB00619", "chemical", "Gleevec", "drugbank"),
            Synonym("DB00945", "chemical", "Acetylsalicylic acid", "drugbank", True),
            Synonym("DB00945", "chemical", "Aspirin", "drugbank"),
            Synonym("BRAF", "gene", "BRAF", "civic", True),
            Synonym("BRAF", "gene", "B-Raf proto-oncogene", "hgnc"),
            Synonym("V600E", "variant", "V600E", "civic", True),
            *ptm_synonyms(),
        ]
    )
    return Normaliser(lexicon)


def test_exact_name_first(normaliser: Normaliser) -> None:
    best = normaliser.best("plx4032")
    assert best == Candidate("DB08881", "chemical", "Vemurafenib", "plx4032", 1.0, "exact")


def test_typo_finds_the_drug(normaliser: Normaliser) -> None:
    found = normaliser.normalise("vemurafinib", kind="chemical")
    assert found[0].concept_id == "DB08881"
    assert found[0].how == "fuzzy"
    assert 0.5 < found[0].score < 1.0
    assert [c.score for c in found] == sorted((c.score for c in found), reverse=True)
    assert normaliser.best("Imatinb", kind="chemical").canonical == "Imatinib"
    assert normaliser.best("asprin", kind="chemical").canonical == "Acetylsalicylic acid"


@pytest.mark.parametrize("text", ["Val600Glu", "p.V600E", "V 600 E"])
def test_variant_notation_finds_the_kb_variant(normaliser: Normaliser, text: str) -> None:
    best = normaliser.best(text, kind="variant")
    assert (best.concept_id, best.how, best.score) == ("V600E", "variant", 1.0)


def test_variant_key_without_a_lexicon_entry(normaliser: Normaliser) -> None:
    best = normaliser.best("Gly12Asp", kind="variant")
    assert (best.concept_id, best.canonical, best.how) == ("G12D", "G12D", "variant")


def test_residues_and_ptm_types(normaliser: Normaliser) -> None:
    assert normaliser.best("serine 473", kind="residue").concept_id == "S473"
    assert normaliser.best("Phosphorylated", kind="ptm").concept_id == "phosphorylation"
    assert normaliser.best("ubiquitylated").concept_id == "ubiquitination"


def test_kind_restricts_and_k_limits(normaliser: Normaliser) -> None:
    assert {c.kind for c in normaliser.normalise("BRAF", kind="gene", k=10)} == {"gene"}
    assert len(normaliser.normalise("afenib", kind="chemical", k=2)) <= 2
    each = normaliser.normalise("Dabrafenib", k=5)
    assert len({(c.kind, c.concept_id) for c in each}) == len(each)  # a concept once


def test_fit_ahead_gives_the_same_answers(normaliser: Normaliser) -> None:
    fitted = Normaliser(normaliser.lexicon).fit(["chemical"])
    assert fitted.normalise("vemurafinib", kind="chemical") == normaliser.normalise("vemurafinib", kind="chemical")


def test_nothing_for_empty_or_unlike_text(normaliser: Normaliser) -> None:
    assert normaliser.normalise("   ") == []
    assert normaliser.normalise("qqqqxxxx", kind="chemical") == []
    assert normaliser.normalise("anything", kind="disease") == []  # no such dictionary


def test_real_drugbank_typos() -> None:
    path = Settings().data_dir / "dicts" / "drugbank_vocabulary.csv"
    if not path.exists():
        pytest.skip(f"DrugBank vocabulary not found at {path}")
    normaliser = Normaliser(Lexicon(drugbank_synonyms(path)))
    for typed, expected in [("vemurafinib", "Vemurafenib"), ("imatinb", "Imatinib"), ("osimertinb", "Osimertinib")]:
        assert normaliser.best(typed, kind="chemical").canonical == expected
