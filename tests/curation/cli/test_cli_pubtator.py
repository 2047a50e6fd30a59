"""A PubTator file as NCBI ships it: a mention in another case is kept with a warning, a document whose mention does
not fit its text is skipped and named, the file's other documents are read (ingest-corpus and annotate)."""

from __future__ import annotations

import json

import pytest

from curation.cli import main
from curation.store.base import stats
from curation.store.corpus import list_mentions
from curation.store.opening import open_store

# 101: 'intersex' over "Intersex" (GNormPlus Test's own slip); 102: 'KRAS' over "BRAF" (a real mismatch); 103: fine.
NCBI_LIKE = (
    "101|t|Intersex genes in mice\n101|a|SRY and SOX9 decide the gonad.\n"
    "101\t0\t8\tintersex\tGene\t1\n101\t23\t26\tSRY\tGene\t6736\n\n"
    "102|t|BRAF V600E in melanoma\n102|a|Vemurafenib inhibits BRAF.\n"
    "102\t0\t4\tKRAS\tGene\t3845\n\n"
    "103|t|SOX9 and campomelic dysplasia\n103|a|SOX9 mutations cause it.\n"
    "103\t0\t4\tSOX9\tGene\t6662\n"
)


@pytest.fixture
def ncbi_file(tmp_path):
    path = tmp_path / "GNormPlus_Test.PubTator"
    path.write_text(NCBI_LIKE)
    return path


def test_ingest_corpus_keeps_a_case_slip_skips_the_mismatched_document_and_names_both(tmp_path, ncbi_file, capsys):
    db = tmp_path / "store.duckdb"
    assert main(["ingest-corpus", "pubtator", str(ncbi_file), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "2 added" in out and "1 skipped" in out and "1 warnings" in out
    assert (f"  warning: {ncbi_file}, line 3, field 'text': PMID 101: mention 'intersex' at 0-8 differs from the text "
            "there ('Intersex') only in case or spacing; kept as 'Intersex'") in out
    assert (f"  skipped: {ncbi_file}, line 8, field 'offsets': PMID 102: mention 'KRAS' at 0-4 does not match the "
            "text there ('BRAF')") in out and "PMID 102 skipped (its block starts at line 6)" in out
    con = open_store(db, read_only=True)
    try:
        assert stats(con)["documents"] == 2
        assert sorted((m.pmid, m.start, m.text) for m in list_mentions(con)) == [
            ("101", 0, "Intersex"), ("101", 23, "SRY"), ("103", 0, "SOX9")]
    finally:
        con.close()


def test_ingest_corpus_refuses_only_a_file_with_no_readable_document(tmp_path, capsys):
    path = tmp_path / "bad.PubTator"
    path.write_text("102|t|BRAF V600E in melanoma\n102|a|Vemurafenib inhibits BRAF.\n102\t0\t4\tKRAS\tGene\t3845\n")
    db = tmp_path / "store.duckdb"
    assert main(["ingest-corpus", "pubtator", str(path), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}, line 3, field 'offsets'" in err, err
    assert "no document of the file could be read" in err


def test_annotate_reads_the_text_of_every_document_and_names_a_malformed_one(tmp_path, ncbi_file, capsys):
    # the gold mentions are not annotate's: 102's mismatch costs nothing; a block with no abstract is left out
    db = tmp_path / "store.duckdb"
    assert main(["ingest-corpus", "pubtator", str(ncbi_file), "--db", str(db)]) == 0  # the store's dictionaries
    ncbi_file.write_text(NCBI_LIKE + "\n104|t|A title and no abstract\n")
    out = tmp_path / "out.jsonl"
    capsys.readouterr()
    status = main(["annotate", str(ncbi_file), "--db", str(db), "--output-format", "jsonl", "--out", str(out)])
    assert status == 0
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["101", "102", "103"]
    err = capsys.readouterr().err
    assert (f"warning: skipped {ncbi_file}, line 14, field 'abstract': PMID 104 has no |a| line; PMID 104 skipped"
            in err), err
    assert "intersex" not in err
