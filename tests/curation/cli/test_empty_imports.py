"""A file with no records is said to have none (exit 2 when it was named alone; a warning inside a folder), and
a multi-file ingest stopped at a bad file says which files before it are in and whether they are annotated."""

from __future__ import annotations

import json

import pytest

from curation.cli import main
from curation.config import PROJECT_ROOT
from curation.schemas import PO
from curation.store.opening import open_store

CIVIC_HEADER = (PROJECT_ROOT / "tests" / "fixtures" / "civic" / "current.tsv").read_text().splitlines()[0] + "\n"
TSV_HEADER = "\t".join([*(PO.column(t) for t in PO.entity_types), PO.column("pmid")]) + "\n"


def _ingests(db) -> int:
    con = open_store(db)
    try:
        return con.execute("SELECT count(*) FROM ingests").fetchall()[0][0]
    finally:
        con.close()


def _doc(pmid: str) -> str:
    return json.dumps({"pmid": pmid, "title": "t", "abstract": "BRAF V600E in melanoma."}) + "\n"


@pytest.mark.parametrize(("command", "fmt", "name", "content", "extra"), [
    ("ingest-kb", "civic", "civic.tsv", CIVIC_HEADER, []),
    ("ingest-kb", "tsv", "kb.tsv", TSV_HEADER, ["--schema", "PO"]),
    ("ingest-corpus", "jsonl", "corpus.jsonl", "", []),
    ("ingest-corpus", "pubtator", "corpus.PubTator", "\n", []),
])
def test_a_file_named_alone_without_records_is_refused(tmp_path, capsys, command, fmt, name, content, extra):
    path = tmp_path / name
    path.write_text(content)
    db = tmp_path / "s.duckdb"
    assert main([command, fmt, str(path), *extra, "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: the file has no records" in err
    assert _ingests(db) == 0  # no ingest logged for it


def test_a_file_without_records_inside_a_folder_is_a_warning(tmp_path, capsys):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.jsonl").write_text(_doc("101"))
    (folder / "b.jsonl").write_text("")
    db = tmp_path / "s.duckdb"
    assert main(["ingest-corpus", "jsonl", str(folder), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert f"warning: {folder / 'b.jsonl'}: the file has no records" in out
    assert _ingests(db) == 1  # a.jsonl only: the empty one is read again next time


def test_a_multi_file_ingest_stopped_at_a_bad_file_says_what_is_in_and_annotates_it(tmp_path, capsys):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.jsonl").write_text(_doc("101"))
    (folder / "b.jsonl").write_text(_doc("102"))
    (folder / "c.jsonl").write_text("{not json\n")
    db = tmp_path / "s.duckdb"
    assert main(["ingest-corpus", "jsonl", str(folder), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "c.jsonl, line 1" in err
    assert "the 2 files before it are ingested (a.jsonl, b.jsonl)" in err and "annotated" in err
    con = open_store(db)
    try:
        assert con.execute("SELECT count(*) FROM documents").fetchall() == [(2,)]
        assert con.execute("SELECT count(*) FROM ingests").fetchall() == [(2,)]
    finally:
        con.close()
