from __future__ import annotations

import pytest

from curation.errors import InputError
from curation.ingest.civic import read_civic, split_profile
from curation.ingest.problems import Problems


def test_split_profile_handles_and_or_not_and_fusions():
    assert split_profile("BRAF V600E") == ([("BRAF", "V600E")], "")
    assert split_profile("BRAF V600E AND BRAF V600M") == ([("BRAF", "V600E"), ("BRAF", "V600M")], "AND")
    components, op = split_profile("BCR::ABL1 Fusion AND ( ABL1 F317L OR ABL1 F317V )")
    assert components == [("ABL1", "BCR::ABL1 Fusion"), ("ABL1", "F317L"), ("ABL1", "F317V")]
    assert op == "AND"
    assert split_profile("MET Amplification AND NOT KRAS Mutation") == ([("MET", "Amplification")], "AND")
    assert split_profile("NOT KIT D816V") == ([("KIT", "D816V")], "NOT")
    assert split_profile("VHL R167Q (c.500G>A)") == ([("VHL", "R167Q c.500G>A")], "")


def test_current_schema_one_record_per_component_and_therapy(fixtures):
    records = list(read_civic(fixtures / "civic" / "current.tsv", Problems("current.tsv")))
    by_id = {r.source_id: r for r in records}
    assert set(by_id) == {
        "EID101:Vemurafenib",
        "EID101:Dabrafenib",
        "EID102:0:Osimertinib",
        "EID102:1:Osimertinib",
        "EID103",
        "EID104:Sotorasib",
    }
    vem = by_id["EID101:Vemurafenib"]
    assert vem.entities == (("Gene", "BRAF"), ("Variant", "V600E"), ("Treatment", "Vemurafenib"))
    assert vem.pmid == "20818844"
    assert vem.attribute("evidence_level") == "A"
    assert vem.attribute("significance") == "Sensitivity/Response"
    assert vem.attribute("disease") == "Melanoma"
    assert vem.attribute("therapies") == "Vemurafenib,Dabrafenib"
    assert by_id["EID102:1:Osimertinib"].get("Variant") == "T790M"
    assert by_id["EID102:1:Osimertinib"].attribute("molecular_profile") == "EGFR L858R AND EGFR T790M"
    fusion = by_id["EID103"]
    assert (fusion.get("Gene"), fusion.get("Variant"), fusion.get("Treatment")) == ("ALK", "EML4::ALK Fusion", "")
    asco = by_id["EID104:Sotorasib"]
    assert asco.pmid is None and asco.attribute("source_type") == "ASCO"


def test_v1_schema(fixtures):
    records = list(read_civic(fixtures / "civic" / "v1.tsv", Problems("v1.tsv")))
    assert [(r.get("Gene"), r.get("Variant"), r.get("Treatment"), r.pmid) for r in records] == [
        ("BRAF", "V600E", "Vemurafenib", "20818844"),
        ("ALK", "EML4-ALK", "Crizotinib", "20979469"),
    ]
    assert records[0].attribute("significance") == "Sensitivity"


def _write(tmp_path, text: str | bytes, name="bad.tsv"):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


HEADER = "molecular_profile\ttherapies\tcitation_id\tsource_type\tevidence_id\n"


@pytest.mark.parametrize(
    ("content", "line", "field", "message"),
    [
        ("molecular_profile,therapies,citation_id\nBRAF V600E,x,1\n", 1, None, "','-separated"),
        ("molecular_profile\ttherapies\tcitation_id\tevidence_id\nBRAF V600E\t\t1\t1\n", 1, "source_type", "missing"),
        (HEADER + "BRAF V600E\tVemurafenib\t123\n", 2, None, "has 3 fields but the header has 5"),
        (HEADER + "BRAF V600E\tVemurafenib\tPMID123\tPubMed\t7\n", 2, "citation_id", "not a PubMed id"),
        (HEADER + "BRAF\tVemurafenib\t123\tPubMed\t7\n", 2, "molecular_profile", "not 'GENE VARIANT'"),
        (
            HEADER.encode() + b"BRAF V600E\tVemurafenib\t123\tPubMed\t7\nKIT D816V\tImatinib\xe9\t12\tPubMed\t8\n",
            3,
            None,
            "not UTF-8",
        ),
        ("", 1, None, "empty"),
    ],
)
def test_bad_rows_name_file_line_and_field(tmp_path, content, line, field, message):
    path = _write(tmp_path, content)
    with pytest.raises(InputError, match=message) as info:
        list(read_civic(path, Problems(path)))
    assert info.value.path == str(path)
    assert info.value.line == line
    assert info.value.field == field


def test_lenient_mode_skips_and_explains(tmp_path):
    path = _write(tmp_path, HEADER + "BRAF V600E\tVemurafenib\tx1\tPubMed\t7\nKIT D816V\tImatinib\t12\tPubMed\t8\n")
    problems = Problems(path, lenient=True)
    records = list(read_civic(path, problems))
    assert [r.get("Gene") for r in records] == ["KIT"]
    assert len(problems.skipped) == 1 and "line 2" in problems.skipped[0] and "citation_id" in problems.skipped[0]


def test_real_civic_exports(data_dir):
    current = list(read_civic(data_dir / "civic" / "civic_evidence_2026-05.tsv", Problems("2026")))
    evidence = {r.source_id.split(":")[0] for r in current}
    assert len(evidence) == 4854
    assert {r.pmid for r in current if r.pmid} and len({r.pmid for r in current if r.pmid}) <= 2217
    assert any(r.attribute("profile_operator") == "AND" for r in current)
    assert all(r.get("Gene") and r.get("Variant") for r in current)
    v1 = list(read_civic(data_dir / "civic" / "civic_evidence_2018-05_v1schema.tsv", Problems("2018")))
    assert len({r.source_id.split(":")[0] for r in v1}) == 2525
