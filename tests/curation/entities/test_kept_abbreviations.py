"""Abbreviations kept between processes: g(e, d) from them is g(e, d) from spaCy, without loading spaCy; the file is
named by the code and versions, read only when sound, and follows the corpus."""

from __future__ import annotations

import json

import pytest

from curation.entities import kept_abbreviations
from curation.entities.abbreviations import Abbreviation
from curation.entities.kept_abbreviations import kept_path, read_abbreviations, text_digest, write_abbreviations
from curation.entities.lexicon import Lexicon
from curation.entities.matcher_cache import load_matcher
from curation.entities.matching import Matcher
from curation.entities.synonyms import mention_synonyms, ptm_synonyms
from curation.ingest.problems import Problems
from curation.ingest.pubtator import read_pubtator
from curation.records import Document
from curation.runtime.matcher import build_matcher, start_matcher
from curation.store.corpus import add_documents, iter_documents
from curation.workflows.ingestion import ingest_corpus, ingest_kb

TEXTS = [
    "Imatinib in chronic myeloid leukaemia (CML): CML cells carry BCR-ABL1. 5-fluorouracil (5-FU) was added.",
    "BRAF V600E (Val600Glu) in melanoma; no abbreviation here.",
]


def _kept_matcher(reference: Matcher, texts: list[str]) -> Matcher:
    """A matcher over the reference's lexicon and names, keeping the abbreviations the reference finds in ``texts``."""
    matcher = Matcher(reference.lexicon, names=reference.names)
    matcher.kept_abbreviations = reference.abbreviations_of(texts)
    return matcher


def test_matches_from_kept_abbreviations_are_the_spacy_ones_on_real_abstracts(data_dir):
    train = list(read_pubtator(data_dir / "biored" / "Train.PubTator", Problems("train")))
    lexicon = Lexicon(mention_synonyms([m for d in train for m in d.mentions]) + ptm_synonyms())
    texts = [d.text for d in read_pubtator(data_dir / "biored" / "Dev.PubTator", Problems("dev"))]
    reference = Matcher(lexicon)
    reference.analyse_many(texts)
    found = {(s.text, s.entity_type) for text in texts for s in reference.find_all(text)}
    assert sum(bool(a) for a in reference.abbreviations_of(texts).values()) > 30  # abstracts that define some
    matcher = _kept_matcher(reference, texts)
    for text in texts:
        for name, kind in found:
            assert matcher.matches(name, kind, text) == reference.matches(name, kind, text), (name, kind)
    assert matcher._nlp is None  # spaCy was never loaded
    assert [matcher.find_all(t) for t in texts[:20]] == [reference.find_all(t) for t in texts[:20]]  # spaCy now


def test_a_text_not_kept_is_analysed_with_spacy():
    reference = Matcher(Lexicon(ptm_synonyms()))
    matcher = _kept_matcher(reference, TEXTS[:1])
    assert matcher.unkept(TEXTS) == TEXTS[1:]
    assert matcher.matches("V600E", "variant", TEXTS[1]) == reference.matches("V600E", "variant", TEXTS[1])
    assert matcher._nlp is not None


def test_the_file_reads_back_and_is_used_only_for_this_code_and_these_versions(tmp_path, monkeypatch, capsys):
    kept = {text_digest(TEXTS[0]): (Abbreviation("CML", 14, 38, ((40, 43), (46, 49))),), text_digest(TEXTS[1]): ()}
    path = write_abbreviations(tmp_path, kept)
    assert path == kept_path(tmp_path) and [p.name for p in tmp_path.iterdir()] == [path.name]  # no stray files
    assert read_abbreviations(tmp_path) == kept
    assert read_abbreviations(None) == {} and read_abbreviations(tmp_path / "none") == {}

    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "key": "another"}))  # same name, another key (never written so): not used
    assert read_abbreviations(tmp_path) == {}
    path.write_text(path.read_text()[:40])  # cut short
    assert read_abbreviations(tmp_path) == {}
    assert "are not used" in capsys.readouterr().err

    monkeypatch.setattr(kept_abbreviations, "FORMAT", kept_abbreviations.FORMAT + 1)  # other code: another name
    assert kept_path(tmp_path) != path and read_abbreviations(tmp_path) == {}
    write_abbreviations(tmp_path, kept)
    assert [p.name for p in tmp_path.iterdir()] == [kept_path(tmp_path).name]  # the old key's file removed


@pytest.fixture
def store(con, fixtures):
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    return con


def _texts(con) -> list[str]:
    return [d.text for d in iter_documents(con)]


def test_a_matcher_built_from_the_store_keeps_them_for_the_next_process(store, tmp_path):
    cache = tmp_path / "lexicon"
    load_matcher(store, cache)  # nothing kept: the dictionaries are built, and the abstracts' abbreviations kept
    assert set(read_abbreviations(cache)) == {text_digest(t) for t in _texts(store)}
    matcher = load_matcher(store, cache)  # the next process: read, nothing analysed
    assert matcher.unkept(_texts(store)) == []
    assert [matcher.matches("V600E", "variant", t) for t in _texts(store)]
    assert matcher._nlp is None


def test_the_load_keeps_them_and_a_restart_analyses_only_what_was_added(store, tmp_path):
    cache = tmp_path / "lexicon"
    build_matcher(store, cache_dir=cache)  # a load: every abstract analysed, its abbreviations kept
    assert set(read_abbreviations(cache)) == {text_digest(t) for t in _texts(store)}

    background = start_matcher(store.cursor, cache)  # a restart
    matcher = background.result()
    background._thread.join(30)
    assert matcher.unkept(_texts(store)) == [] and matcher._nlp is None  # nothing analysed with spaCy

    add_documents(store, [Document("999", "Chronic myeloid leukaemia (CML)", "CML cells respond to imatinib.")])
    background = start_matcher(store.cursor, cache)  # a restart after an ingest
    matcher = background.result()
    background._thread.join(30)
    kept = read_abbreviations(cache)
    assert set(kept) == {text_digest(t) for t in _texts(store)}
    added = next(t for t in _texts(store) if t.startswith("Chronic"))
    assert [a.short for a in kept[text_digest(added)]] == ["CML"]
