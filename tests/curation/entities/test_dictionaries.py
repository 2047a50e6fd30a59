from __future__ import annotations

import subprocess
import sys

import pytest

from curation.config import PROJECT_ROOT
from curation.entities.dictionaries import build_lexicon, ingest_dictionary
from curation.entities.matching import Matcher
from curation.entities.normalise import Normaliser
from curation.errors import InputError
from curation.workflows.ingestion import ingest_corpus, ingest_kb

DRUGBANK = (
    "Column1;Column2;Column3;Column4;Column5;Column6;Column7\n"
    "DrugBank ID;Accession Numbers;Common name;CAS;UNII;Synonyms;Standard InChI Key\n"
    "DB08881;;Vemurafenib;918504-65-1;;PLX4032 | RG7204;\n"
    "DB08912;;Dabrafenib;1195765-45-7;;GSK2118436;\n"
)


@pytest.fixture
def loaded(con, fixtures, tmp_path):
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    path = tmp_path / "drugbank.csv"
    path.write_text(DRUGBANK)
    assert ingest_dictionary(con, "drugbank", path) == (5, 5)
    assert ingest_dictionary(con, "drugbank", path) == (5, 0)  # idempotent
    return con


def test_kb_names_join_dictionary_concepts(loaded):
    lexicon = build_lexicon(loaded)
    # CIViC's "Vemurafenib" and DrugBank's DB08881 are one concept with DrugBank's synonyms.
    assert set(lexicon.lookup("vemurafenib", "chemical")) == {("chemical", "DB08881")}
    assert ("chemical", "DB08881") in lexicon.lookup("PLX4032", "chemical")
    assert lexicon.lookup("BRAF", "gene")


def test_matcher_and_normaliser_from_the_store(loaded):
    lexicon = build_lexicon(loaded)
    matcher = Matcher(lexicon)
    text = "Patients received PLX4032 for BRAF V600E melanoma."
    spans = matcher.matches("Vemurafenib", "chemical", text)
    assert [(s.start, s.end) for s in spans] == [(18, 25)]
    assert matcher.matched("Val600Glu", "variant", text)
    best = Normaliser(lexicon).normalise("vemurafinib", kind="chemical", k=1)
    assert best and best[0].concept_id == "DB08881"


def test_unknown_dictionary_format(con, tmp_path):
    with pytest.raises(InputError, match="unknown dictionary format"):
        ingest_dictionary(con, "umls", tmp_path / "x")


def test_cli_normalise(loaded, tmp_path):
    db = loaded.execute("PRAGMA database_list").fetchall()[0][2]
    loaded.close()
    result = subprocess.run(
        [sys.executable, "-m", "curation", "normalise", "vemurafinib", "--kind", "chemical", "--db", db],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].split()[2] == "Vemurafenib"


def test_the_measured_exclusions_are_kept_by_a_digest_of_their_inputs(loaded, tmp_path, monkeypatch):
    from curation.entities import dictionaries

    cache = tmp_path / "lexicon"
    first = build_lexicon(loaded, cache_dir=cache)
    (kept,) = cache.glob("excluded-*.json")
    assert build_lexicon(loaded).sizes() == first.sizes()  # the same lexicon as without a cache

    measured = []
    monkeypatch.setattr(dictionaries, "excluded_names", lambda *a: measured.append(1) or {})
    again = build_lexicon(loaded, cache_dir=cache)  # a restart: read, not measured
    assert not measured and again.sizes() == first.sizes()

    kept.write_text("{not json")  # damaged: measured again, never an error
    build_lexicon(loaded, cache_dir=cache)
    assert measured == [1]

    ingest_kb(loaded, "civic", PROJECT_ROOT / "tests" / "fixtures" / "civic" / "v1.tsv")  # new inputs: a new file
    build_lexicon(loaded, cache_dir=cache)
    assert measured == [1, 1] and len(list(cache.glob("excluded-*.json"))) == 2
