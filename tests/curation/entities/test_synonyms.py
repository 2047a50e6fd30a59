"""Synonym builders (DrugBank, HGNC, KB records, corpus mentions, built-ins) and the Lexicon."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.config import Settings
from curation.entities.synonyms import (
    Lexicon,
    drugbank_synonyms,
    element_synonyms,
    hgnc_synonyms,
    junk_reason,
    kb_synonyms,
    mention_synonyms,
    normalise_name,
    ptm_synonyms,
)
from curation.errors import InputError
from curation.records import KBRecord, Mention, Synonym
from curation.schemas import PO, PTM

DRUGBANK = """Column1;Column2;Column3;Column4;Column5;Column6;Column7
DrugBank ID;Accession Numbers;Common name;CAS;UNII;Synonyms;Standard InChI Key
DB08881;DB08881;Vemurafenib;918504-65-1;207SMY3FQT;PLX4032 | RG7204 | Vemurafenib;X
DB09145;DB09145;Water;7732-18-5;059QF0KO0R;Aqua | H2O | Water;X
DB00619;DB00619;Imatinib;152459-95-5;BKJ8M8G5HI;STI-571 | Imatinib;X
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- Lexicon --------------------------------------------------------------------------------


def test_lookup_ignores_case_dashes_and_spacing() -> None:
    lexicon = Lexicon([Synonym("IL6", "gene", "Interleukin-6", "hgnc"), Synonym("IL6", "gene", "IL6", "hgnc", True)])
    assert lexicon.lookup("interleukin\u20136", "gene") == [("gene", "IL6")]
    assert lexicon.lookup("  INTERLEUKIN-6 ") == [("gene", "IL6")]
    assert lexicon.lookup("interleukin 6", "gene") == []
    assert lexicon.canonical("gene", "IL6") == "IL6"
    assert normalise_name("  Interleukin\u20136 ") == "interleukin-6"


def test_expand_reaches_every_name_of_the_concepts_one_hop() -> None:
    lexicon = Lexicon(
        [
            Synonym("DB08881", "chemical", "Vemurafenib", "drugbank", True),
            Synonym("DB08881", "chemical", "PLX4032", "drugbank"),
            Synonym("vemurafenib", "chemical", "Vemurafenib", "civic", True),
            Synonym("vemurafenib", "chemical", "Zelboraf", "civic"),
            Synonym("OTHER", "chemical", "Zelboraf", "x"),
            Synonym("OTHER", "chemical", "Unrelated", "x"),
        ]
    )
    names = lexicon.expand("plx4032", "chemical")
    assert names[0] == "plx4032"
    assert set(names) == {"plx4032", "Vemurafenib", "PLX4032"}
    assert set(lexicon.expand("Vemurafenib", "chemical")) == {"Vemurafenib", "PLX4032", "Zelboraf"}
    assert "Unrelated" not in lexicon.expand("Vemurafenib", "chemical")  # no transitive closure
    assert lexicon.expand("PLX4032", "gene") == ("PLX4032",)


@pytest.mark.parametrize(
    ("name", "kind", "reason"),
    [
        ("X", "chemical", "too short"),
        ("1234", "chemical", "no letters"),
        ("Water", "chemical", "common English word"),
        ("Gold", "chemical", "common English word"),
        ("the", "gene", "stop word"),
        ("ab", "gene", "two lower-case letters"),
        ("Vemurafenib", "chemical", None),
        ("Pb", "chemical", None),
        ("5-FU", "chemical", None),
    ],
)
def test_junk_names(name: str, kind: str, reason: str | None) -> None:
    assert junk_reason(name, kind) == reason


def test_junk_and_excluded_names_are_dropped_and_counted() -> None:
    lexicon = Lexicon(
        [
            Synonym("DB09145", "chemical", "Water"),
            Synonym("DB1", "chemical", "SNP"),
            Synonym("DB1", "chemical", "Nitroprusside"),
            Synonym("G", "gene", "SNP"),
        ],
        exclude={"chemical": ["snp"]},
    )
    assert lexicon.lookup("Water") == []
    assert lexicon.lookup("SNP") == [("gene", "G")]  # excluded for chemicals only
    assert lexicon.dropped == {"common English word": 1, "excluded": 1}
    assert lexicon.sizes() == {"chemical": {"concepts": 1, "names": 1}, "gene": {"concepts": 1, "names": 1}}


def test_weight_counts_records_per_kind() -> None:
    lexicon = Lexicon([Synonym("D1", "chemical", "insulin")] * 3 + [Synonym("3630", "gene", "insulin")])
    assert lexicon.weight("Insulin", "chemical") == 3
    assert lexicon.lookup("insulin") == [("chemical", "D1"), ("gene", "3630")]  # most used kind first
    assert len(lexicon) == 2


# --- builders -------------------------------------------------------------------------------


def test_drugbank_synonyms(tmp_path: Path) -> None:
    synonyms = drugbank_synonyms(_write(tmp_path, "db.csv", DRUGBANK))
    vemurafenib = [s for s in synonyms if s.concept_id == "DB08881"]
    assert [(s.name, s.canonical) for s in vemurafenib] == [
        ("Vemurafenib", True),
        ("PLX4032", False),
        ("RG7204", False),
    ]
    assert {s.entity_type for s in synonyms} == {"chemical"}
    lexicon = Lexicon(synonyms)
    assert lexicon.lookup("sti-571") == [("chemical", "DB00619")]
    assert lexicon.lookup("water") == []  # dropped as a common word; "H2O" stays
    assert lexicon.lookup("H2O") == [("chemical", "DB09145")]


def test_drugbank_bad_id_names_file_line_and_field(tmp_path: Path) -> None:
    path = _write(tmp_path, "db.csv", DRUGBANK.replace("DB00619;DB00619", "XX619;DB00619"))
    with pytest.raises(InputError) as error:
        drugbank_synonyms(path)
    assert (error.value.line, error.value.field) == (5, "DrugBank ID")
    assert "XX619" in str(error.value) and str(path) in str(error.value)


def test_drugbank_without_header_or_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no DrugBank header"):
        drugbank_synonyms(_write(tmp_path, "db.csv", "a;b;c\nd;e;f\ng;h;i\n"))
    with pytest.raises(InputError, match="column missing"):
        drugbank_synonyms(_write(tmp_path, "db2.csv", "x\nDrugBank ID;Common name\n"))
    with pytest.raises(InputError, match="file not found"):
        drugbank_synonyms(tmp_path / "missing.csv")


def test_hgnc_synonyms(tmp_path: Path) -> None:
    text = (
        "hgnc_id\tsymbol\tname\talias_symbol\tprev_symbol\n"
        'HGNC:1097\tBRAF\tB-Raf proto-oncogene, serine/threonine kinase\t"BRAF1|B-RAF1"\tBRAF1\n'
        "HGNC:6407\tKRAS\tKRAS proto-oncogene, GTPase\t\tKRAS2\n"
    )
    lexicon = Lexicon(hgnc_synonyms(_write(tmp_path, "hgnc.tsv", text)))
    assert lexicon.canonical("gene", "BRAF") == "BRAF"
    assert set(lexicon.names("gene", "BRAF")) == {
        "BRAF",
        "B-Raf proto-oncogene, serine/threonine kinase",
        "BRAF1",
        "B-RAF1",
    }
    assert lexicon.lookup("kras2") == [("gene", "KRAS")]


def test_hgnc_missing_column(tmp_path: Path) -> None:
    with pytest.raises(InputError) as error:
        hgnc_synonyms(_write(tmp_path, "hgnc.tsv", "id\tname\nHGNC:1\tx\n"))
    assert (error.value.line, error.value.field) == (1, "hgnc_id")


def test_kb_synonyms_use_schema_kinds_and_variant_keys() -> None:
    records = [
        KBRecord("PO", (("Gene", "EGFR"), ("Variant", "EGFR T790M"), ("Treatment", "Osimertinib")), "1", "civic", "1"),
        KBRecord(
            "PO", (("Gene", "ALK"), ("Variant", "EML4::ALK Fusion"), ("Treatment", "Crizotinib")), "2", "civic", "2"
        ),
        KBRecord("PO", (("Gene", "BRAF"), ("Variant", "V600E"), ("Treatment", "Dabrafenib,Trametinib")), "3", "x", "3"),
        KBRecord("PTM", (("Protein", "AKT1"),), "4", "uniprot", "4"),
    ]
    lexicon = Lexicon(kb_synonyms(records, PO))
    assert lexicon.lookup("T790M", "variant") == [("variant", "T790M")]
    assert lexicon.lookup("EGFR T790M", "variant") == [("variant", "T790M")]
    assert lexicon.lookup("EML4::ALK Fusion", "variant") == [("variant", "EML4::ALK")]
    assert lexicon.lookup("trametinib") == [("chemical", "Trametinib")]
    assert lexicon.lookup("ALK") == [("gene", "ALK")]
    assert lexicon.lookup("AKT1") == []  # other schemas' records are skipped


def test_kb_synonyms_normalise_residues_and_ptm_types() -> None:
    record = KBRecord(
        "PTM",
        (("Protein", "AKT1"), ("PTM type", "Phosphoserine"), ("Residue", "Ser-473"), ("Catalyst", "MTOR")),
        "1",
        "uniprot",
        "P31749:S473",
    )
    lexicon = Lexicon(kb_synonyms([record], PTM))
    assert lexicon.lookup("Ser-473") == [("residue", "S473")]
    assert lexicon.lookup("Phosphoserine") == [("ptm", "phosphorylation")]
    assert {k for k, _ in lexicon.lookup("MTOR")} == {"gene"}


def test_mention_synonyms_group_by_concept() -> None:
    mentions = [
        Mention("1", 0, 4, "BRAF", "GeneOrGeneProduct", "673"),
        Mention("1", 10, 14, "BRAF", "GeneOrGeneProduct", "673"),
        Mention("2", 0, 5, "B-raf", "GeneOrGeneProduct", "673"),
        Mention("2", 9, 20, "p.Val600Glu", "SequenceVariant", "rs113488022"),
        Mention("3", 0, 9, "cisplatin", "ChemicalEntity", "D002945"),
        Mention("3", 0, 9, "HNF1/HNF4", "GeneOrGeneProduct", "6927,3172"),
        Mention("3", 0, 5, "thing", "ChemicalEntity", "-"),
        Mention("3", 0, 5, "mouse", "OrganismTaxon", "10090"),
    ]
    synonyms = mention_synonyms(mentions)
    lexicon = Lexicon(synonyms)
    assert set(lexicon.names("gene", "673")) == {"BRAF", "B-raf"}
    assert lexicon.canonical("gene", "673") == "BRAF"  # the most frequent text
    assert lexicon.weight("BRAF", "gene") == 2
    assert lexicon.lookup("p.Val600Glu") == [("variant", "V600E")]
    assert lexicon.lookup("HNF1/HNF4") == [] and lexicon.lookup("thing") == [] and lexicon.lookup("mouse") == []
    assert lexicon.kinds == ("chemical", "gene", "variant")


def test_builtin_ptm_types_and_elements() -> None:
    lexicon = Lexicon(ptm_synonyms() + element_synonyms())
    assert lexicon.lookup("phosphorylated") == [("ptm", "phosphorylation")]
    assert lexicon.lookup("Pb") == [("chemical", "element:Pb")]
    assert lexicon.lookup("zinc") == lexicon.lookup("Zn")
    assert lexicon.lookup("As") == []  # the word "As" is not arsenic


# --- real data ------------------------------------------------------------------------------


def test_real_drugbank_vocabulary() -> None:
    path = Settings().data_dir / "dicts" / "drugbank_vocabulary.csv"
    if not path.exists():
        pytest.skip(f"DrugBank vocabulary not found at {path}")
    synonyms = drugbank_synonyms(path)
    lexicon = Lexicon(synonyms)
    assert lexicon.sizes()["chemical"]["concepts"] > 14_000
    assert "Aspirin" in lexicon.expand("acetylsalicylic acid", "chemical")
    assert "Vemurafenibum" in lexicon.expand("vemurafenib", "chemical")
    assert lexicon.lookup("Water") == [] and lexicon.lookup("Imatinib") == [("chemical", "DB00619")]
    assert sum(lexicon.dropped.values()) < 0.01 * len(synonyms)
