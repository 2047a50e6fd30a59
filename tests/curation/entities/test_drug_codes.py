"""Drug code names mined from text: the pairs kept, the ones left out, and the ``ingest-dict`` kind on a store."""

from __future__ import annotations

import pytest

from curation.entities import drug_codes
from curation.entities.dictionaries import DICTIONARY_FORMATS, ingest_dictionary, read_dictionary, vocabulary_kinds
from curation.entities.lexicon import normalise_name
from curation.errors import InputError
from curation.records import Document, Synonym
from curation.store.base import ingest_times
from curation.store.corpus import add_documents, add_synonyms, list_synonyms
from curation.store.opening import open_store

OWNERS = {normalise_name(name): frozenset({concept}) for name, concept in (
    ("vemurafenib", "DB08881"), ("imatinib", "DB00619"), ("tyrosine", "DB00135"), ("palbociclib", "DB09073"))}


def test_a_code_beside_a_drug_name_pairs_either_way_round():
    pairs = drug_codes.code_pairs([
        "Patients received vemurafenib (PLX4032) daily.",
        "STI571 (imatinib, Gleevec) inhibits BCR-ABL.",
        "the CDK4/6 inhibitor palbociclib (PD 0332991; Ibrance)",
    ], OWNERS)
    assert pairs == {("PLX4032", "DB08881"): 1, ("STI571", "DB00619"): 1, ("PD 0332991", "DB09073"): 1}


def test_protein_changes_cytokines_and_unknown_names_are_not_codes():
    pairs = drug_codes.code_pairs([
        "a tyrosine (L866Y) substitution", "PIK3CA (H1047R)", "interleukin-10 (IL-10)",
        "compound X (ABC1234) in mice", "vemurafenib (V600E)",
    ], OWNERS)
    assert pairs == {}


def test_a_code_two_drugs_claim_or_that_names_a_gene_is_left_out():
    pairs = {("PLX4032", "DB08881"): 3, ("AB1234", "DB00619"): 1, ("AB1234", "DB09073"): 1, ("CD340", "DB00619"): 1}
    taken = {normalise_name("CD340"): frozenset({"gene"}), normalise_name("PLX4032"): frozenset({"chemical"})}
    synonyms = drug_codes.code_synonyms(pairs, taken)
    assert synonyms == [Synonym("DB08881", "chemical", "PLX4032", drug_codes.SOURCE)]


def test_the_kind_is_mined_from_the_store_and_takes_no_file(tmp_path):
    assert drug_codes.KIND in DICTIONARY_FORMATS and vocabulary_kinds()[-1] == drug_codes.KIND
    with pytest.raises(InputError, match="mined from the store"):
        read_dictionary(drug_codes.KIND, tmp_path / "codes.txt")
    con = open_store(tmp_path / "s.duckdb")
    try:
        add_synonyms(con, [Synonym("DB08881", "chemical", "vemurafenib", "drugbank", True),
                           Synonym("673", "gene", "BRAF", "hgnc", True)])
        add_documents(con, [Document("1", "BRAF V600E melanoma", "We gave vemurafenib (PLX4032) to 32 patients.")])
        assert ingest_dictionary(con, drug_codes.KIND) == (1, 1)
        assert ingest_dictionary(con, drug_codes.KIND) == (1, 0)  # idempotent
        mined = [s for s in list_synonyms(con, "chemical") if s.source == drug_codes.SOURCE]
        assert [(s.concept_id, s.name) for s in mined] == [("DB08881", "PLX4032")]
        assert ingest_times(con, f"dict:{drug_codes.KIND}")
    finally:
        con.close()


def test_the_civic_evidence_and_corpora_give_real_code_names(data_dir, tmp_path):
    """On the real sample: CIViC's evidence statements pair PLX4032 with vemurafenib."""
    pytest.importorskip("drug_named_entity_recognition")
    from curation.entities.dictionaries import ingest_dictionary as ingest
    from curation.workflows.ingestion import ingest_kb

    con = open_store(tmp_path / "s.duckdb")
    try:
        ingest_kb(con, "civic", data_dir / "civic" / "civic_evidence_2026-05.tsv")
        ingest(con, "drugbank", data_dir / "dicts" / "drugbank_vocabulary.csv")
        ingest(con, "drug-ner")
        ingest(con, drug_codes.KIND)
        codes = {s.name: s.concept_id for s in list_synonyms(con, "chemical") if s.source == drug_codes.SOURCE}
    finally:
        con.close()
    assert codes["PLX4032"] == "DB08881"
    assert len(codes) >= 10, codes
    assert not {"H1047R", "L858R", "V600E"} & set(codes)
