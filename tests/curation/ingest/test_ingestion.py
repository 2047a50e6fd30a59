from __future__ import annotations

import json
import subprocess
import sys

import pytest

from curation.config import PROJECT_ROOT
from curation.errors import InputError
from curation.store import base as base_store
from curation.store.kb import list_kb_records
from curation.workflows.ingestion import ingest_corpus, ingest_kb


def test_strict_ingest_writes_nothing_when_a_row_is_bad(con, tmp_path):
    path = tmp_path / "kb.tsv"
    path.write_text(
        "molecular_profile\ttherapies\tcitation_id\tsource_type\tevidence_id\n"
        "BRAF V600E\tVemurafenib\t123\tPubMed\t1\n"
        "KIT D816V\tImatinib\tnot-a-pmid\tPubMed\t2\n"
    )
    with pytest.raises(InputError, match="line 3, field 'citation_id'"):
        ingest_kb(con, "civic", path)
    assert base_store.stats(con)["kb_records"] == 0
    report = ingest_kb(con, "civic", path, lenient=True)
    assert (report.added, len(report.skipped)) == (1, 1)
    assert base_store.stats(con)["kb_records"] == 1


def test_generic_tsv_needs_a_known_schema(con, tmp_path):
    path = tmp_path / "ptm.tsv"
    path.write_text("protein\tptm_type\tresidue\tcatalyst\tpmid\nAKT1\tphosphorylation\tserine 473\tMTOR\t15718470\n"
                    "AKT1\tphosphorylation\tthreonine 308\t\t\n")
    with pytest.raises(InputError, match="needs --schema"):
        ingest_kb(con, "tsv", path)
    report = ingest_kb(con, "tsv", path, schema="PTM")
    assert report.added == 2
    assert ingest_kb(con, "tsv", path, schema="PTM").unchanged == 2
    records = list_kb_records(con, "PTM")
    assert {r.get("Catalyst") for r in records} == {"MTOR", ""}


def test_missing_file_and_unknown_format(con, tmp_path):
    with pytest.raises(InputError, match="file not found"):
        ingest_corpus(con, "jsonl", tmp_path / "nope.jsonl")
    (tmp_path / "x.txt").write_text("x")
    with pytest.raises(InputError, match="unknown corpus format"):
        ingest_corpus(con, "csv", tmp_path / "x.txt")


@pytest.mark.slow
def test_cli_ingests_all_shared_data(data_dir, tmp_path):
    db = tmp_path / "all.duckdb"

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "curation", *args, "--db", str(db)],
            cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600,
        )

    for kb in ("civic_evidence_2018-05_v1schema.tsv", "civic_evidence_2026-05.tsv"):
        assert cli("ingest-kb", "civic", str(data_dir / "civic" / kb)).returncode == 0
    pubtator = sorted(str(p) for p in (data_dir / "biored").glob("*.PubTator")) + sorted(
        str(p) for p in (data_dir / "bc5cdr").glob("*.PubTator.txt")
    )
    result = cli("ingest-corpus", "pubtator", *pubtator)
    assert result.returncode == 0, result.stderr
    assert cli("ingest-corpus", "jsonl", str(data_dir / "hoc" / "hoc_abstracts.jsonl")).returncode == 0
    stats = json.loads(cli("stats", "--json").stdout)
    assert stats["documents"] == 3476
    assert stats["decisions"] == 0
    assert stats["schemas"] == ["PO", "PTM", "Chemical-Disease", "Disease-Treatment", "Gene-Disease"]
    assert stats["kb_records"] > 6625  # the 2026 export's records plus 2018 items no longer in it
    again = cli("ingest-corpus", "pubtator", *pubtator)
    assert "0 added" in again.stdout and json.loads(cli("stats", "--json").stdout)["documents"] == 3476
    bad = cli("ingest-kb", "civic", str(data_dir / "dicts" / "drugbank_vocabulary.csv"))
    assert bad.returncode == 2
    assert "drugbank_vocabulary.csv, line 1: not tab-separated (it looks ';'-separated)" in bad.stderr
    assert "Traceback" not in bad.stderr
