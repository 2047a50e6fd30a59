"""Corpus ingest in batches: bounded memory, resumable after a kill, folders of files (PubMed baseline)."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

import curation.ingest.pubmed_xml as pubmed_xml
from curation.cli import main
from curation.errors import InputError
from curation.ingest import loading
from curation.ingest.loading import corpus_files
from curation.store.base import content_counts, ingest_times
from curation.store.corpus import add_documents
from curation.store.opening import open_store
from curation.workflows.ingestion import ingest_corpus, ingest_corpus_files

PROLOG = '<?xml version="1.0" ?>\n<PubmedArticleSet>\n'


def article(pmid: int, abstract: str | None = None) -> str:
    text = f"Abstract of article {pmid}." if abstract is None else abstract
    return (
        f"<PubmedArticle><MedlineCitation><PMID Version=\"1\">{pmid}</PMID><Article>"
        f"<ArticleTitle>Title {pmid}.</ArticleTitle><Abstract><AbstractText>{text}</AbstractText></Abstract>"
        "</Article></MedlineCitation></PubmedArticle>\n"
    )


def write_xml(path: Path, pmids: range, bad: int | None = None) -> Path:
    """A PubmedArticleSet of ``pmids``; the article ``bad`` has an empty abstract (a bad row)."""
    body = PROLOG + "".join(article(p, "" if p == bad else None) for p in pmids) + "</PubmedArticleSet>\n"
    if path.name.endswith(".gz"):
        path.write_bytes(gzip.compress(body.encode()))
    else:
        path.write_text(body, encoding="utf-8")
    return path


def count(con) -> int:
    return content_counts(con)[0]


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setattr(loading, "BATCH_DOCUMENTS", 2)


class Killed(Exception):
    """Stands for a kill: raised from inside the ingest, after some batches were committed."""


def kill_on_write(monkeypatch, at: int) -> list[int]:
    """Make the ``at``-th call of add_documents (from 1) raise :class:`Killed`; returns each call's batch size."""
    real = add_documents
    sizes: list[int] = []

    def add(con, batch):
        sizes.append(len(batch))
        if len(sizes) == at:
            raise Killed
        return real(con, batch)

    monkeypatch.setattr(loading, "add_documents", add)
    return sizes


def test_a_corpus_file_is_written_in_batches_while_it_is_read(con, tmp_path, small_batches, monkeypatch):
    path = write_xml(tmp_path / "p.xml", range(101, 106))
    real_reader, real_add = pubmed_xml.read_pubmed_xml, add_documents
    read: list[str] = []
    unwritten_at_each_write: list[int] = []

    def reader(path, problems):
        for document in real_reader(path, problems):
            read.append(document.pmid)
            yield document

    def add(con, batch):
        unwritten_at_each_write.append(len(read) - count(con))
        return real_add(con, batch)

    monkeypatch.setattr(pubmed_xml, "read_pubmed_xml", reader)
    monkeypatch.setattr(loading, "add_documents", add)
    report = ingest_corpus(con, "pubmed-xml", path, lenient=True)
    assert report.added == 5 and count(con) == 5
    # Each write happened with at most one batch read and not yet written: the file was never held whole.
    assert unwritten_at_each_write == [2, 2, 1]


def test_a_killed_lenient_ingest_keeps_its_batches_and_a_rerun_adds_the_rest_once(con, tmp_path, small_batches,
                                                                                  monkeypatch):
    path = write_xml(tmp_path / "p.xml", range(101, 106))
    kill_on_write(monkeypatch, at=2)
    with pytest.raises(Killed):
        ingest_corpus(con, "pubmed-xml", path, lenient=True)
    assert count(con) == 2  # the first batch was committed
    assert ingest_times(con, "corpus:pubmed-xml") == {}  # not logged as ingested whole
    monkeypatch.undo()
    monkeypatch.setattr(loading, "BATCH_DOCUMENTS", 2)
    report = ingest_corpus(con, "pubmed-xml", path, lenient=True)
    assert (report.added, report.unchanged, count(con)) == (3, 2, 5)
    assert str(path.resolve()) in ingest_times(con, "corpus:pubmed-xml")


def test_strict_mode_writes_nothing_of_a_file_with_a_bad_row_past_the_first_batch(con, tmp_path, small_batches):
    path = write_xml(tmp_path / "p.xml", range(101, 106), bad=105)
    with pytest.raises(InputError, match="PMID 105: empty abstract"):
        ingest_corpus(con, "pubmed-xml", path)
    assert count(con) == 0
    assert ingest_times(con, "corpus:pubmed-xml") == {}
    report = ingest_corpus(con, "pubmed-xml", path, lenient=True)
    assert (report.added, len(report.skipped), count(con)) == (4, 1, 4)


def test_a_folder_is_read_file_by_file_and_a_rerun_skips_the_finished_files(con, tmp_path, small_batches,
                                                                            monkeypatch):
    folder = tmp_path / "baseline"
    folder.mkdir()
    first = write_xml(folder / "pubmed25n0001.xml.gz", range(101, 104))
    write_xml(folder / "pubmed25n0002.xml.gz", range(201, 206))
    write_xml(folder / "pubmed25n0003.xml", range(301, 303))
    (folder / "pubmed25n0001.xml.gz.md5").write_text("not a corpus file\n")
    assert [p.name for p in corpus_files("pubmed-xml", [folder])] == [
        "pubmed25n0001.xml.gz", "pubmed25n0002.xml.gz", "pubmed25n0003.xml"]
    # Killed in the second file's second batch: the first file is in and logged, 2 of the second's are in.
    kill_on_write(monkeypatch, at=4)
    with pytest.raises(Killed):
        ingest_corpus_files(con, "pubmed-xml", [folder], lenient=True)
    assert count(con) == 3 + 2
    monkeypatch.undo()
    monkeypatch.setattr(loading, "BATCH_DOCUMENTS", 2)
    seen: list[tuple[str, bool]] = []
    run = ingest_corpus_files(con, "pubmed-xml", [folder], lenient=True,
                              on_file=lambda path, position, total, done: seen.append((path.name, done)))
    assert seen == [("pubmed25n0001.xml.gz", True), ("pubmed25n0002.xml.gz", False), ("pubmed25n0003.xml", False)]
    assert [(r.added, r.unchanged) for r in run.reports] == [(3, 2), (2, 0)]
    assert count(con) == 3 + 5 + 2
    # A third run reads nothing; a file modified since its ingest is read again, and --again reads them all.
    assert [r.path for r in ingest_corpus_files(con, "pubmed-xml", [folder], lenient=True).reports] == []
    later = first.stat().st_mtime + 3600
    os.utime(first, (later, later))
    rerun = ingest_corpus_files(con, "pubmed-xml", [folder], lenient=True)
    assert [(Path(r.path).name, r.added, r.unchanged) for r in rerun.reports] == [("pubmed25n0001.xml.gz", 0, 3)]
    assert len(ingest_corpus_files(con, "pubmed-xml", [folder], lenient=True, again=True).reports) == 3
    assert count(con) == 10


def test_a_folder_without_files_of_the_format_is_named(con, tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(InputError, match=r"holds no pubmed-xml file \(names ending in \.xml, \.xml\.gz\)"):
        ingest_corpus_files(con, "pubmed-xml", [tmp_path])
    with pytest.raises(InputError, match="missing.xml: file not found"):
        ingest_corpus_files(con, "pubmed-xml", [tmp_path / "missing.xml"])


def test_the_cli_ingests_a_folder_and_skips_it_on_a_second_run(tmp_path, capsys):
    folder = tmp_path / "baseline"
    folder.mkdir()
    write_xml(folder / "a.xml", range(101, 104), bad=103)
    write_xml(folder / "b.xml.gz", range(201, 203))
    db = tmp_path / "s.duckdb"
    assert main(["ingest-corpus", "pubmed-xml", str(folder), "--lenient", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert f"pubmed-xml {folder / 'a.xml'}: 2 added" in out and "1 skipped" in out
    assert "2 files: 2 read, 0 skipped as already ingested" in out
    assert main(["ingest-corpus", "pubmed-xml", str(folder), "--lenient", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert f"pubmed-xml {folder / 'b.xml.gz'}: already ingested whole and not modified since; skipped" in out
    assert "2 files: 0 read, 2 skipped as already ingested whole and unchanged since; 0 added" in out
    assert main(["ingest-corpus", "pubmed-xml", str(folder), "--lenient", "--again", "--db", str(db)]) == 0
    assert "2 files: 2 read, 0 skipped as already ingested whole and unchanged since; 0 added, 4 already present" \
        in capsys.readouterr().out
    con = open_store(db)
    try:
        assert count(con) == 4
    finally:
        con.close()
    # Strict mode stops at the bad row and says where; the file's good rows are not written.
    assert main(["ingest-corpus", "pubmed-xml", str(folder / "a.xml"), "--db", str(tmp_path / "t.duckdb")]) == 2
    assert "a.xml, line 5, field 'Abstract': PMID 103: empty abstract" in capsys.readouterr().err
