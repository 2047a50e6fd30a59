"""check_answer: a curator's answer normalised as a query slot is, and looked for in the abstract."""

from __future__ import annotations

import pytest

from curation.entities.dictionaries import build_lexicon
from curation.entities.matching import Matcher
from curation.retrieval.result_rows import default_linker
from curation.review.answers import check_answer
from curation.schemas import PO
from curation.workflows.ingestion import ingest_corpus, ingest_kb


@pytest.fixture
def setup(con, fixtures):
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    matcher = Matcher(build_lexicon(con))
    return con, matcher, default_linker(con, matcher)


@pytest.mark.parametrize("typed", ["Vemurafenib", "vemurafenib", "  VEMURAFENIB "])
def test_an_answer_the_abstract_names_is_linked_and_mentioned(setup, typed):
    con, matcher, linker = setup
    check = check_answer(con, matcher, linker, PO, "1000001", typed)
    assert check.linked and check.canonical == "Vemurafenib" and check.how == "exact"
    assert "D000077484" in check.concept_ids
    assert check.mentioned and check.forms == ("Vemurafenib",) and check.problem == ""


def test_an_answer_another_abstract_names_is_linked_but_flagged(setup):
    con, matcher, linker = setup
    check = check_answer(con, matcher, linker, PO, "1000002", "vemurafenib")
    assert check.linked and check.canonical == "Vemurafenib"
    assert not check.mentioned and check.forms == ()
    assert check.problem == (
        "The abstract of PMID 1000002 does not mention 'vemurafenib' (Vemurafenib) or any other name of it; "
        "check that it is this abstract's treatment"
    )


def test_a_synonym_the_abstract_writes_counts_as_mentioned(setup):
    con, matcher, linker = setup
    check = check_answer(con, matcher, linker, PO, "1000002", "cisplatin")
    assert check.linked and check.concept_ids == ("D002945",) and check.canonical == "Cisplatin"
    assert check.mentioned and check.forms == ("Cisplatin",)


def test_a_misspelt_answer_is_not_linked_silently_and_names_the_close_ones(setup):
    con, matcher, linker = setup
    check = check_answer(con, matcher, linker, PO, "1000001", "vemurafinib")
    assert check.status == "offered" and check.concept_ids == () and check.canonical == "vemurafinib"
    assert check.suggestions[0] == "Vemurafenib"
    assert not check.mentioned
    assert "does not mention 'vemurafinib'" in check.problem and "Did you mean 'Vemurafenib'" in check.problem


def test_a_passage_or_an_unknown_document_is_a_message_not_an_error(setup):
    con, matcher, linker = setup
    long = check_answer(con, matcher, linker, PO, "1000001", "x" * 1000)
    assert not long.linked and not long.mentioned
    assert long.problem.startswith("Treatment: 1,000 characters typed; a name has at most 200")
    missing = check_answer(con, matcher, linker, PO, "999", "Vemurafenib")
    assert missing.linked and not missing.mentioned
    assert missing.problem == "PMID 999 is not in the store, so the answer cannot be checked"
