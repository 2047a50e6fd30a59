"""Loading the sample: from a data directory or online; idempotent; partial loads, bad files, no source."""

from __future__ import annotations

import dataclasses
import io
import os
import shutil
import signal
import subprocess
import sys
import time
from email.message import Message
from pathlib import Path
from urllib.error import URLError
from urllib.parse import urlsplit
from urllib.response import addinfourl

import pytest

from curation.config import Settings
from curation.ingest.sample import NoSampleError, find_sample
from curation.store.base import stats
from curation.store.opening import open_store
from curation.workflows.quickstart import load_sample

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture
def sample_dir(tmp_path) -> Path:
    """A data directory laid out like the real one, made of the small hand-written fixtures."""
    folder = tmp_path / "data"
    for source, target in [
        ("civic/current.tsv", "civic/civic_evidence_small.tsv"),
        ("pubtator/small.PubTator", "biored/Train.PubTator"),
        ("bench/bc5cdr/CDR_Small.PubTator.txt", "bc5cdr/CDR_Small.PubTator.txt"),
        ("bench/hoc/tiny_hoc.jsonl", "hoc/hoc_abstracts.jsonl"),
    ]:
        (folder / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURES / source, folder / target)
    (folder / "dicts").mkdir()
    (folder / "dicts" / "drugbank_vocabulary.csv").write_text(
        "Column1;Column2\nDrugBank ID;Accession Numbers;Common name;CAS;UNII;Synonyms;Standard InChI Key\n"
        "DB08881;;Vemurafenib;918504-65-1;207SMY3FQT;PLX4032 | Zelboraf;\n"
    )
    return folder


def _settings(tmp_path: Path, data_dir: Path, vocabularies: tuple[str, ...] = ()) -> Settings:
    # No installed vocabulary by default: these tests are about the files (test_vocabularies loads them).
    return dataclasses.replace(Settings(), data_dir=data_dir, cache_dir=tmp_path / "cache",
                               ncbi_email="curator@example.org", vocabularies=vocabularies)


def _contents(con) -> dict[str, int]:
    counts = stats(con)
    return {name: counts[name] for name in ("kb_records", "documents", "mentions", "synonyms")}


def test_find_sample_follows_the_layout_in_loading_order(sample_dir, tmp_path):
    files = find_sample(sample_dir)
    assert [(f.kind, f.fmt, f.label) for f in files] == [
        ("kb", "civic", "civic/civic_evidence_small.tsv"),
        ("corpus", "pubtator", "biored/Train.PubTator"),
        ("corpus", "pubtator", "bc5cdr/CDR_Small.PubTator.txt"),
        ("corpus", "jsonl", "hoc/hoc_abstracts.jsonl"),
        ("dict", "drugbank", "dicts/drugbank_vocabulary.csv"),
    ]
    assert find_sample(tmp_path / "nowhere") == []


def test_the_sample_loads_once_and_a_second_load_adds_nothing(con, sample_dir, tmp_path):
    seen = []
    report = load_sample(con, _settings(tmp_path, sample_dir), on_file=lambda f, i, n: seen.append((f.label, i, n)))
    assert not report.failed and report.added > 0
    assert [s[1:] for s in seen] == [(i, 5) for i in range(1, 6)]
    assert report.summary().startswith(f"Sample loaded from the data directory {sample_dir}")
    loaded = _contents(con)
    assert loaded["kb_records"] > 0 and loaded["documents"] > 0 and loaded["synonyms"] > 0

    again = load_sample(con, _settings(tmp_path, sample_dir))
    assert again.nothing_new and again.added == 0
    assert again.summary().startswith("Nothing new: the sample")
    assert _contents(con) == loaded


def test_a_malformed_file_is_named_the_others_load_and_a_retry_completes(con, sample_dir, tmp_path):
    good = (sample_dir / "hoc" / "hoc_abstracts.jsonl").read_text()
    (sample_dir / "hoc" / "hoc_abstracts.jsonl").write_text('{"pmid": "1", "text": "fine"}\n{not json\n')
    report = load_sample(con, _settings(tmp_path, sample_dir))
    (failed,) = report.failed
    assert failed.file.label == "hoc/hoc_abstracts.jsonl"
    assert "line 2" in failed.error and str(sample_dir) not in failed.error
    assert "hoc/hoc_abstracts.jsonl failed: " in report.summary()
    assert len(report.outcomes) - len(report.failed) == 4  # the other files are in
    partial = _contents(con)

    (sample_dir / "hoc" / "hoc_abstracts.jsonl").write_text(good)
    retry = load_sample(con, _settings(tmp_path, sample_dir))
    assert not retry.failed
    completed = _contents(con)
    assert completed["documents"] > partial["documents"]

    clean = open_store(tmp_path / "clean.duckdb")
    try:
        load_sample(clean, _settings(tmp_path, sample_dir))
        assert _contents(clean) == completed  # no duplicates: the same as one clean load
    finally:
        clean.close()


def test_a_load_killed_half_way_leaves_a_usable_store_and_a_retry_completes(sample_dir, tmp_path):
    db = tmp_path / "killed.duckdb"
    env = {**os.environ, "CURATION_DB": str(db), "CURATION_DATA_DIR": str(sample_dir), "CURATION_VOCABULARIES": "none",
           "CURATION_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "curation", "quickstart"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    deadline = time.time() + 120
    while time.time() < deadline:
        line = proc.stdout.readline()
        lines.append(line)
        if line.startswith("[3/5]"):  # two files are in, the third is being read
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, "".join(lines)

    con = open_store(db)  # the store opens and holds the finished files
    try:
        after_kill = _contents(con)
        assert after_kill["kb_records"] > 0
        report = load_sample(con, _settings(tmp_path, sample_dir))
        assert not report.failed
        completed = _contents(con)
    finally:
        con.close()
    clean = open_store(tmp_path / "clean.duckdb")
    try:
        load_sample(clean, _settings(tmp_path, sample_dir))
        assert _contents(clean) == completed
    finally:
        clean.close()


class _Offline:
    def __call__(self, request, *, timeout):
        raise URLError(OSError(101, "Network is unreachable"))


class _Online:
    """CIViC's export and NCBI's efetch, answered from recorded files."""

    def __init__(self) -> None:
        self.urls: list[str] = []

    def __call__(self, request, *, timeout):
        self.urls.append(request.full_url)
        name = urlsplit(request.full_url).path.rsplit("/", 1)[-1]
        body = (FIXTURES / "civic" / "current.tsv").read_bytes() if name.endswith(".tsv") else \
            (FIXTURES / "eutils" / "efetch_two_articles.xml").read_bytes()
        headers = Message()
        headers["Content-Type"] = "text/tab-separated-values" if name.endswith(".tsv") else "text/xml"
        return addinfourl(io.BytesIO(body), headers, request.full_url, 200)


def test_without_data_or_network_it_says_what_to_do(con, tmp_path):
    with pytest.raises(NoSampleError) as caught:
        load_sample(con, _settings(tmp_path, tmp_path / "no-data"), transport=_Offline())
    message = str(caught.value)
    assert str(tmp_path / "no-data") in message and "CURATION_DATA_DIR" in message
    assert "Knowledge base page" in message
    assert _contents(con)["documents"] == 0


def test_without_a_data_directory_the_sample_is_fetched_and_says_so(con, tmp_path):
    transport = _Online()
    report = load_sample(con, _settings(tmp_path, tmp_path / "no-data"), transport=transport)
    assert not report.failed, report.summary()
    assert "CIViC's nightly export and PubMed" in report.source
    assert any(url.endswith(".tsv") for url in transport.urls) and any("efetch" in url for url in transport.urls)
    assert _contents(con)["kb_records"] > 0 and _contents(con)["documents"] == 2


@pytest.mark.slow
def test_the_real_sample_loads_and_reloads_to_nothing_new(con, data_dir, tmp_path):
    report = load_sample(con, _settings(tmp_path, data_dir))
    assert not report.failed, report.summary()
    assert stats(con)["documents"] == 3476  # BioRED + BC5CDR + HoC, a PMID once
    assert load_sample(con, _settings(tmp_path, data_dir)).nothing_new
