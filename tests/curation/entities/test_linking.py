"""The entity linker as the annotator serves it: the apply rule, candidates, the hard cases (its training:
tests/curation/learning/test_linker.py)."""

from __future__ import annotations

import pytest

from curation.config import Settings
from curation.entities.linking import LexiconLinker, Thresholds, numbers_agree
from curation.entities.synonyms import Lexicon, drugbank_synonyms
from tests.curation.learning.tiny_linker import tiny_lexicon


@pytest.fixture(scope="module")
def lexicon() -> Lexicon:
    return tiny_lexicon()


@pytest.mark.parametrize(("text", "kind", "concept"), [
    ("HER2", "gene", "2064"), ("PLX4032", "chemical", "DB08881"), ("Gleevec", "chemical", "DB00619"),
    ("T-DM1", "chemical", "DB05773"), ("t-dm1", "chemical", "DB05773"),
])  # fmt: skip
def test_exact_unambiguous_names_are_applied_at_one(lexicon: Lexicon, text: str, kind: str, concept: str) -> None:
    link = LexiconLinker(lexicon).link(text, kind)
    assert (link.concept_id, link.confidence, link.applied) == (concept, 1.0, True)


def test_an_ambiguous_exact_name_is_offered_not_applied(lexicon: Lexicon) -> None:
    link = LexiconLinker(lexicon).link("dabrafenib", "chemical")
    assert not link.applied
    assert {c for c, _, _ in link.candidates[:2]} == {"DB08912", "DB00001"}


def test_a_typo_is_a_candidate_but_never_applied_uncalibrated(lexicon: Lexicon) -> None:
    link = LexiconLinker(lexicon).link("vemurafinib", "chemical")
    assert link.concept_id == "DB08881" and link.canonical == "Vemurafenib"
    assert 0 < link.confidence < 1 and not link.applied
    assert link.candidates[0][0] == "DB08881"


def test_the_threshold_rule(lexicon: Lexicon) -> None:
    typo = LexiconLinker(lexicon).link("vemurafinib", "chemical").confidence
    loose = LexiconLinker(lexicon, {"chemical": Thresholds(min_score=typo - 0.01)})
    strict = LexiconLinker(lexicon, {"chemical": Thresholds(min_score=typo + 0.01)})
    assert loose.link("vemurafinib", "chemical").applied
    low = strict.link("vemurafinib", "chemical")
    assert not low.applied and low.confidence < strict.thresholds["chemical"].min_score
    # a margin rule: the best must beat the second concept by min_margin
    assert not LexiconLinker(lexicon, {"chemical": Thresholds(0.0, 1.0)}).link("vemurafinib", "chemical").applied
    assert not LexiconLinker(lexicon, {"gene": Thresholds(0.0)}).link("vemurafinib", "chemical").applied  # per kind


def test_a_code_name_is_not_linked_to_another_code_name(lexicon: Lexicon) -> None:
    anything = LexiconLinker(lexicon, {"chemical": Thresholds(min_score=0.0)})
    link = anything.link("PLX4033", "chemical")  # one edit from PLX4032 and from PLX4720's family
    assert not link.applied
    assert anything.link("PLX 4720", "chemical").applied  # same numbers: spacing is not a new drug
    assert numbers_agree("PLX-4032", "PLX4032") and not numbers_agree("PLX4032", "PLX4720")
    assert numbers_agree("T-DM1", "trastuzumab emtansine") and not numbers_agree("IL-6", "IL-8")


DRUGBANK = Settings().data_dir / "dicts" / "drugbank_vocabulary.csv"


@pytest.mark.skipif(not DRUGBANK.is_file(), reason="shared DrugBank vocabulary absent")
def test_real_drugbank_typo_finds_vemurafenib() -> None:
    linker = LexiconLinker(Lexicon(drugbank_synonyms(DRUGBANK)))
    link = linker.link("vemurafinib", "chemical")
    assert link.concept_id == "DB08881" and not link.applied
    assert linker.link("Vemurafenib", "chemical").applied
