from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from curation.errors import InputError
from curation.ingest.problems import Problems
from curation.ingest.uniprot import parse_catalysts, ptm_type, read_uniprot
from curation.records import KBRecord
from curation.schemas import PTM

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "uniprot"
PLAIN = FIXTURES / "sprot_small.dat"
GZ = FIXTURES / "sprot_small.dat.gz"

AKT1 = (
    ("accession", "P31749"),
    ("entry_name", "AKT1_HUMAN"),
    ("protein_name", "RAC-alpha serine/threonine-protein kinase"),
    ("organism", "Homo sapiens (Human)"),
    ("description", "Phosphoserine; by IKKE, MTOR and TBK1"),
)


def read(path: Path, lenient: bool = False) -> tuple[list[KBRecord], Problems]:
    problems = Problems(path, lenient=lenient)
    return list(read_uniprot(path, problems)), problems


def by_id(records: list[KBRecord]) -> dict[str, KBRecord]:
    return {r.source_id: r for r in records}


def ser473(catalyst: str, pmid: str, evidence: str) -> KBRecord:
    return KBRecord(
        schema="PTM",
        entities=(
            ("Protein", "AKT1"), ("PTM type", "phosphorylation"), ("Residue", "serine 473"), ("Catalyst", catalyst)
        ),
        pmid=pmid,
        source="uniprot",
        source_id=f"P31749:MOD_RES:473:Phosphoserine:{catalyst}:{pmid}",
        attributes=AKT1 + (("evidence", evidence),),
    )


def test_akt1_ser473_is_one_record_per_catalyst_and_pmid() -> None:
    records, problems = read(PLAIN)
    got = [r for r in records if r.source_id.startswith("P31749:MOD_RES:473:")]
    assert got == [
        ser473("IKKE", "15718470", "ECO:0000269, ECO:0007744"),
        ser473("MTOR", "15718470", "ECO:0000269, ECO:0007744"),
        ser473("TBK1", "15718470", "ECO:0000269, ECO:0007744"),
        ser473("IKKE", "21464307", "ECO:0000269"),
        ser473("MTOR", "21464307", "ECO:0000269"),
        ser473("TBK1", "21464307", "ECO:0000269"),
    ]
    assert problems.skipped == []


def test_record_builds_the_ptm_query() -> None:
    record = by_id(read(PLAIN)[0])["P31749:MOD_RES:473:Phosphoserine:MTOR:15718470"]
    assert tuple(name for name, _ in record.entities) == PTM.entity_types
    query = PTM.render_query({k: v for k, v in record.entities if k != PTM.answer})
    assert query == "Catalysts for the phosphorylation of AKT1 at serine 473?"
    assert record.get(PTM.answer) == "MTOR"


def test_whole_fixture_counts_and_unique_ids() -> None:
    records, _ = read(PLAIN)
    ids = [r.source_id for r in records]
    assert len(ids) == len(set(ids)) == 34
    assert {r.attribute("accession") for r in records} == {"P31749", "P68431", "Q00001"}
    # CROSSLNK (ubiquitin at 284), DOMAIN and CHAIN are not MOD_RES and give nothing.
    assert not any(":284:" in i for i in ids)


def test_gzip_by_magic_bytes_gives_the_same_records(tmp_path: Path) -> None:
    plain, _ = read(PLAIN)
    assert read(GZ)[0] == plain
    unsuffixed = tmp_path / "sprot_download"
    shutil.copy(GZ, unsuffixed)
    assert read(unsuffixed)[0] == plain


def test_residue_comes_from_the_sequence() -> None:
    records = by_id(read(PLAIN)[0])
    assert records["P31749:MOD_RES:308:Phosphothreonine:PDPK1:9512493"].get("Residue") == "threonine 308"
    assert records["P31749:MOD_RES:14:N6-acetyllysine::21775285"].get("Residue") == "lysine 14"
    # Citrulline is an arginine: the term does not say so, the sequence does.
    citrulline = records["P68431:MOD_RES:3:Citrulline::16567635"]
    assert (citrulline.get("PTM type"), citrulline.get("Residue")) == ("citrullination", "arginine 3")


def test_gene_name_first_gene_without_evidence_else_entry_name() -> None:
    records = by_id(read(PLAIN)[0])
    histone = records["P68431:MOD_RES:4:Phosphothreonine:HASPIN:15681610"]
    assert histone.get("Protein") == "H3C1"
    assert histone.attribute("protein_name") == "Histone H3.1"
    no_gene = records["Q00001:MOD_RES:15:Phosphotyrosine:CSK:33333333"]
    assert no_gene.get("Protein") == "KAPX_TESTA"
    assert no_gene.attribute("organism") == "Testus exemplaris"


def test_autocatalysis_is_the_protein_itself_and_host_kinase_is_named_plainly() -> None:
    records = read(PLAIN)[0]
    site = [(r.get("Catalyst"), r.pmid) for r in records if r.source_id.startswith("Q00001:MOD_RES:10:")]
    assert site == [
        ("PKA", "11111111"), ("PKC", "11111111"), ("KAPX_TESTA", "11111111"),
        ("PKA", "22222222"), ("PKC", "22222222"), ("KAPX_TESTA", "22222222"),
    ]
    assert by_id(records)["Q00001:MOD_RES:15:Phosphotyrosine:CSK:33333333"].get("Catalyst") == "CSK"


def test_features_without_pubmed_or_catalyst_are_kept_as_negatives() -> None:
    records = by_id(read(PLAIN)[0])
    by_similarity = records["P31749:MOD_RES:448:Phosphothreonine::"]
    assert by_similarity.pmid is None
    assert by_similarity.get("Catalyst") == ""
    assert by_similarity.attribute("evidence") == "ECO:0000250|UniProtKB:P31750"
    unknown_position = records["Q00001:MOD_RES:?:Phosphoserine::"]
    assert unknown_position.get("Residue") == ""
    assert unknown_position.pmid is None


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("Phosphoserine", "phosphorylation"),
        ("Phosphotyrosine", "phosphorylation"),
        ("Pros-phosphohistidine", "phosphorylation"),
        ("4-aspartylphosphate", "phosphorylation"),
        ("O-(pantetheine 4'-phosphoryl)serine", "phosphopantetheinylation"),
        ("N6-acetyllysine", "acetylation"),
        ("N-acetylmethionine", "acetylation"),
        ("Omega-N-methylarginine", "methylation"),
        ("Symmetric dimethylarginine", "methylation"),
        ("N6,N6,N6-trimethyllysine", "methylation"),
        ("N6-(2-hydroxyisobutyryl)lysine", "2-hydroxyisobutyrylation"),
        ("N6-succinyllysine", "succinylation"),
        ("4-hydroxyproline", "hydroxylation"),
        ("Sulfotyrosine", "sulfation"),
        ("Methionine sulfoxide", "oxidation"),
        ("S-nitrosocysteine", "S-nitrosylation"),
        ("ADP-ribosylserine", "ADP-ribosylation"),
        ("(Microbial infection) O-acetylthreonine", "acetylation"),
        ("Allysine", "allysine"),
        ("Pyrrolidone carboxylic acid", "pyrrolidone carboxylic acid"),
    ],
)
def test_ptm_type_table(term: str, expected: str) -> None:
    assert ptm_type(term) == expected


@pytest.mark.parametrize(
    ("note", "expected"),
    [
        ("Phosphoserine; by CDK1 and CDK2", ["CDK1", "CDK2"]),
        ("Phosphoserine; by PKA, PKC and autocatalysis", ["PKA", "PKC", "SELF"]),
        ("Phosphoserine; by ATM or ATR; in vitro", ["ATM", "ATR"]),
        ("Phosphothreonine; by PKC/PRKCD; alternate", ["PKC/PRKCD"]),
        ("Phosphoserine; alternate", []),
        ("Phosphoserine", []),
    ],
)
def test_parse_catalysts(note: str, expected: list[str]) -> None:
    assert parse_catalysts(note, "SELF") == expected


def _broken_copy(tmp_path: Path, old: str, new: str) -> tuple[Path, int]:
    text = PLAIN.read_text()
    assert old in text
    broken = tmp_path / "broken.dat"
    broken.write_text(text.replace(old, new, 1))
    line = text[: text.index(old)].count("\n") + 1
    return broken, line


def test_malformed_entry_strict_names_file_line_and_line_type(tmp_path: Path) -> None:
    broken, line = _broken_copy(tmp_path, '/note="Citrulline; alternate"', "/note=Citrulline; alternate")
    with pytest.raises(InputError) as caught:
        read(broken)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(broken), line, "FT")
    assert "entry H31_HUMAN" in error.problem and "Missing starting quote" in error.problem


def test_malformed_entry_lenient_skips_only_that_entry(tmp_path: Path) -> None:
    broken, line = _broken_copy(tmp_path, '/note="Citrulline; alternate"', "/note=Citrulline; alternate")
    records, problems = read(broken, lenient=True)
    assert {r.attribute("accession") for r in records} == {"P31749", "Q00001"}
    assert len(records) == 13 + 8
    assert len(problems.skipped) == 1 and f"line {line}, field 'FT'" in problems.skipped[0]


def test_truncated_file(tmp_path: Path) -> None:
    text = PLAIN.read_text()
    truncated = tmp_path / "truncated.dat"
    truncated.write_text(text[: text.index("FT   MOD_RES         15")])
    with pytest.raises(InputError, match="ends inside entry KAPX_TESTA.*incomplete"):
        read(truncated)
    records, problems = read(truncated, lenient=True)
    assert {r.attribute("accession") for r in records} == {"P31749", "P68431"}
    assert len(problems.skipped) == 1


def test_truncated_gzip_fails_whole_file(tmp_path: Path) -> None:
    data = GZ.read_bytes()
    cut = tmp_path / "cut.dat.gz"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="broken gzip stream"):
        read(cut, lenient=True)


def test_not_a_flat_file_fails_at_line_1(tmp_path: Path) -> None:
    fasta = tmp_path / "uniprot.fasta"
    fasta.write_text(">sp|P31749|AKT1_HUMAN RAC-alpha serine/threonine-protein kinase\nMSDVAIVKEG\n")
    with pytest.raises(InputError) as caught:
        read(fasta, lenient=True)
    assert caught.value.line == 1 and "not a UniProtKB flat file" in caught.value.problem


def test_binary_file_fails(tmp_path: Path) -> None:
    binary = tmp_path / "image.dat"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    with pytest.raises(InputError, match="not UTF-8"):
        read(binary)


def test_position_past_sequence_end_is_reported(tmp_path: Path) -> None:
    broken, _ = _broken_copy(tmp_path, "FT   MOD_RES         15\n", "FT   MOD_RES         150\n")
    with pytest.raises(InputError, match="150 is past the end of the 44-residue sequence"):
        read(broken)
    records, problems = read(broken, lenient=True)
    assert len(records) == 33 and len(problems.skipped) == 1


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        read(tmp_path / "nope.dat")


def test_gzip_fixture_is_a_real_gzip_of_the_plain_fixture() -> None:
    assert gzip.decompress(GZ.read_bytes()) == PLAIN.read_bytes()
