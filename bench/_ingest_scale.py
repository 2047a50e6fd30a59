"""Corpus-scale ingestion and encoding: PubMed baseline XML records/s, resumability, abstracts/s.

Usage::

    python -m bench.scale --sections ingest [--ingest-records 30000] [--encode-docs 500]

(the ``ingest`` section of ``bench/results/scale.json``)

Ingestion. A gzip PubMed XML file in the baseline's format (``<PubmedArticleSet>`` of
``<PubmedArticle>``: MedlineCitation with journal, title, abstract, publication type; PubmedData
with history and article ids) is built from the real abstracts of the data directory (BioRED,
BC5CDR, HoC, read with the benchmark's own loader), repeated under new PMIDs to ``records``
records, every one with an abstract. Real baseline records also carry MeSH headings, grants and
reference lists, so they are larger: ``xml_mb_per_s`` is the figure that carries over. Each phase
runs in a fresh Python process (its peak resident memory is its own), into a fresh store, without
annotation, through the code the CLI runs:

* ``read_whole_file``: the file parsed into one list, as the ingest did before it streamed;
* ``ingest_lenient``: ``ingest_corpus(lenient=True)``, one transaction per ``BATCH_DOCUMENTS``;
* ``reingest_merge``: the same file again (every record merges by PMID; none added);
* ``rerun_skips``: ``ingest_corpus_files`` on it (logged as ingested whole: skipped, not read);
* ``ingest_strict``: ``ingest_corpus(lenient=False)``, the whole file in one transaction;
* ``kill_and_resume``: ``ingest_corpus_files`` killed with SIGKILL half-way through, then run
  again; the documents after the resume must equal ``records``.

Encoding. ``encode_docs`` real abstracts with the offline all-MiniLM-L6-v2
(``index.encoder.load_encoder``) on the CPU: in this process (torch's own threads), and with
two CPU worker processes (sentence-transformers' multi-process pool through
``index.encoder.encoding_pool``; its start-up is timed apart). With CUDA present the GPU is timed
too, and every CUDA device as one worker each when there are several.
"""

from __future__ import annotations

import gzip
import json
import os
import platform
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parent.parent

FIRST_PMID = 90_000_001  # far above PubMed's ids, so the built records never pass for real ones


# --- the PubMed-format file ------------------------------------------------------------------


def corpus_abstracts(data_dir: Path) -> list:
    """The data directory's distinct abstracts (BioRED, BC5CDR, HoC), as the benchmark reads them."""
    from curation.learning.benchmark import load_corpus

    documents, _ = load_corpus(data_dir)
    return [d for d in documents if d.abstract.strip()]


def _record(pmid: int, document, year: int) -> str:
    title = escape(document.title or "Untitled.")
    abstract = escape(" ".join(document.abstract.split()))
    return (
        '<PubmedArticle>\n<MedlineCitation Status="MEDLINE" Owner="NLM">\n'
        f'<PMID Version="1">{pmid}</PMID>\n'
        f"<DateCompleted><Year>{year}</Year><Month>01</Month><Day>15</Day></DateCompleted>\n"
        '<Article PubModel="Print">\n<Journal>\n<ISSN IssnType="Print">0000-0000</ISSN>\n'
        f'<JournalIssue CitedMedium="Print"><Volume>{pmid % 90}</Volume><Issue>{pmid % 12 + 1}</Issue>'
        f"<PubDate><Year>{year}</Year><Month>Jan</Month></PubDate></JournalIssue>\n"
        "<Title>Journal of benchmark medicine</Title>\n<ISOAbbreviation>J Bench Med</ISOAbbreviation>\n</Journal>\n"
        f"<ArticleTitle>{title}</ArticleTitle>\n"
        f"<Pagination><MedlinePgn>{pmid % 900 + 1}-{pmid % 900 + 9}</MedlinePgn></Pagination>\n"
        f"<Abstract>\n<AbstractText>{abstract}</AbstractText>\n</Abstract>\n"
        '<AuthorList CompleteYN="Y">\n'
        '<Author ValidYN="Y"><LastName>Doe</LastName><ForeName>Jane</ForeName><Initials>J</Initials></Author>\n'
        '<Author ValidYN="Y"><LastName>Roe</LastName><ForeName>Rick</ForeName><Initials>R</Initials></Author>\n'
        "</AuthorList>\n<Language>eng</Language>\n"
        '<PublicationTypeList>\n<PublicationType UI="D016428">Journal Article</PublicationType>\n'
        "</PublicationTypeList>\n</Article>\n"
        "<MedlineJournalInfo><Country>England</Country><MedlineTA>J Bench Med</MedlineTA></MedlineJournalInfo>\n"
        "</MedlineCitation>\n<PubmedData>\n<History>\n"
        f'<PubMedPubDate PubStatus="pubmed"><Year>{year}</Year><Month>1</Month><Day>1</Day></PubMedPubDate>\n'
        "</History>\n<PublicationStatus>ppublish</PublicationStatus>\n<ArticleIdList>\n"
        f'<ArticleId IdType="pubmed">{pmid}</ArticleId>\n</ArticleIdList>\n</PubmedData>\n</PubmedArticle>\n'
    )


def write_baseline_file(path: Path, abstracts: list, records: int) -> dict[str, float]:
    """Write ``records`` articles (the abstracts in turn, new PMIDs) as a gzip baseline file; its sizes."""
    raw = 0
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=6) as out:
        head = ('<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January '
                '2025//EN" "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n<PubmedArticleSet>\n')
        out.write(head)
        raw += len(head.encode())
        for number in range(records):
            text = _record(FIRST_PMID + number, abstracts[number % len(abstracts)], 1990 + number % 35)
            out.write(text)
            raw += len(text.encode())
        out.write("</PubmedArticleSet>\n")
    return {"xml_mb": round(raw / 1e6, 2), "gzip_mb": round(path.stat().st_size / 1e6, 2),
            "bytes_per_record": round(raw / records)}


# --- one phase in a fresh process -------------------------------------------------------------


def _memory_mb(field: str) -> float:
    """VmRSS (resident now) or VmHWM (peak resident) of this process, in MB (Linux).

    Not ``getrusage``'s ru_maxrss: Linux carries it over ``exec`` from the forked parent, so a child
    started by a large parent reports the parent's peak.
    """
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    return 0.0


def run_phase(phase: str, db: str, xml: str) -> None:
    """Run one phase here and print its figures as one JSON line (called in a child process)."""
    from curation.ingest.problems import Problems
    from curation.ingest.pubmed_xml import read_pubmed_xml
    from curation.store.base import content_counts
    from curation.store.opening import open_store
    from curation.workflows.ingestion import ingest_corpus, ingest_corpus_files

    before = _memory_mb("VmRSS")
    print("started", flush=True)
    started = time.perf_counter()
    out: dict[str, object] = {}
    if phase == "read_whole_file":
        out["documents"] = len(list(read_pubmed_xml(Path(xml), Problems(xml, lenient=True))))
    else:
        con = open_store(db)
        if phase == "files":
            run = ingest_corpus_files(con, "pubmed-xml", [xml], lenient=True)
            out.update(files_read=len(run.reports), files_skipped=len(run.done), added=run.added,
                       unchanged=sum(r.unchanged for r in run.reports))
        else:
            report = ingest_corpus(con, "pubmed-xml", xml, lenient=phase != "strict")
            out.update(added=report.added, unchanged=report.unchanged, skipped=len(report.skipped))
        out["documents_in_store"] = content_counts(con)[0]
        con.close()
    out["seconds"] = round(time.perf_counter() - started, 3)
    out["rss_before_mb"] = round(before, 1)
    out["peak_rss_mb"] = round(_memory_mb("VmHWM"), 1)
    print(json.dumps(out), flush=True)


def _child(phase: str, db: Path, xml: Path) -> subprocess.Popen:
    code = f"from bench._ingest_scale import run_phase; run_phase({phase!r}, {str(db)!r}, {str(xml)!r})"
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def phase(name: str, db: Path, xml: Path) -> dict:
    child = _child(name, db, xml)
    output, _ = child.communicate(timeout=3600)
    if child.returncode != 0:
        raise RuntimeError(f"phase {name} failed with status {child.returncode}: {output[-2000:]}")
    return json.loads(output.strip().splitlines()[-1])


def kill_and_resume(db: Path, xml: Path, kill_after_s: float, records: int) -> dict:
    """Start the folder ingest, SIGKILL it ``kill_after_s`` after it began reading, then run it again."""
    from curation.store.base import content_counts, ingest_times
    from curation.store.opening import open_store

    child = _child("files", db, xml)
    assert child.stdout is not None
    child.stdout.readline()  # "started": imports done, the store about to open
    time.sleep(kill_after_s)
    child.send_signal(signal.SIGKILL)
    child.wait()
    con = open_store(db)
    after_kill = content_counts(con)[0]
    logged = bool(ingest_times(con, "corpus:pubmed-xml"))
    con.close()
    resumed = phase("files", db, xml)
    return {
        "killed_after_s": round(kill_after_s, 2),
        "documents_after_kill": after_kill,
        "file_logged_as_done_after_kill": logged,
        "resume": resumed,
        "documents_after_resume": resumed["documents_in_store"],
        "documents_expected": records,
        "no_loss_no_duplicate": resumed["documents_in_store"] == records,
    }


def measure_ingestion(data_dir: Path, work: Path, records: int) -> dict:
    from curation.ingest.loading import BATCH_DOCUMENTS

    work.mkdir(parents=True, exist_ok=True)
    abstracts = corpus_abstracts(data_dir)
    xml = work / "pubmed26n9001.xml.gz"
    started = time.perf_counter()
    sizes = write_baseline_file(xml, abstracts, records)
    built_s = time.perf_counter() - started
    out: dict[str, object] = {
        "file": {"records": records, "distinct_abstracts": len(abstracts), "build_seconds": round(built_s, 2),
                 **sizes},
        "batch_documents": BATCH_DOCUMENTS,
    }
    phases: dict[str, dict] = {"read_whole_file": phase("read_whole_file", work / "unused.duckdb", xml)}
    lenient_db, strict_db = work / "lenient.duckdb", work / "strict.duckdb"
    phases["ingest_lenient"] = phase("lenient", lenient_db, xml)
    phases["reingest_merge"] = phase("lenient", lenient_db, xml)
    phases["rerun_skips"] = phase("files", lenient_db, xml)
    phases["ingest_strict"] = phase("strict", strict_db, xml)
    for name, figures in phases.items():
        if name == "rerun_skips":
            continue  # reads nothing: its seconds are the whole figure
        figures["records_per_s"] = round(records / figures["seconds"], 1) if figures["seconds"] else None
        figures["xml_mb_per_s"] = round(sizes["xml_mb"] / figures["seconds"], 2) if figures["seconds"] else None
    out["phases"] = phases
    out["kill_and_resume"] = kill_and_resume(work / "killed.duckdb", xml,
                                             phases["ingest_lenient"]["seconds"] / 2, records)
    return out


# --- encoding ---------------------------------------------------------------------------------


def measure_encoding(data_dir: Path, encode_docs: int, batch_size: int = 32) -> dict:
    import torch

    from index.encoder import EncoderConfig, encode_documents, encoding_pool, load_encoder, model_name

    documents = corpus_abstracts(data_dir)[:encode_docs]
    model = load_encoder(EncoderConfig(device="cpu"))
    encode_documents(model, documents[:16], batch_size=batch_size)  # warm-up: first-call allocations
    runs: dict[str, dict] = {}

    def timed(name: str, **kwargs) -> None:
        started = time.perf_counter()
        vectors = encode_documents(model, documents, batch_size=batch_size, **kwargs)
        seconds = time.perf_counter() - started
        runs[name] = {"seconds": round(seconds, 2), "abstracts_per_s": round(len(documents) / seconds, 1),
                      "shape": list(vectors.shape)}

    timed("cpu_1_process", processes=1)
    runs["cpu_1_process"]["torch_threads"] = torch.get_num_threads()
    started = time.perf_counter()
    with encoding_pool(model, 2) as pool:
        runs_start = time.perf_counter() - started
        timed("cpu_2_processes", pool=pool)
    runs["cpu_2_processes"].update(pool_start_seconds=round(runs_start, 2),
                                   threads_per_process=max(1, (os.cpu_count() or 1) // 2),
                                   abstracts_per_s_with_start=round(
                                       len(documents) / (runs_start + runs["cpu_2_processes"]["seconds"]), 1))
    cuda = torch.cuda.is_available()
    out: dict[str, object] = {"model": model_name(model), "documents": len(documents), "batch_size": batch_size,
                              "cuda": cuda, "runs": runs}
    if cuda:
        model.to("cuda")
        encode_documents(model, documents[:16], batch_size=batch_size)
        timed("cuda_1_process", processes=1)
        out["cuda_devices"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        if torch.cuda.device_count() > 1:
            timed("cuda_all_devices")  # one worker per device (index.encoder.pool_devices), pool start included
    return out


def measure_ingest_and_encoding(data_dir: Path, work: Path, records: int, encode_docs: int) -> dict:
    """Ingestion of a ``records``-record PubMed baseline file built in ``work``, and encoding of ``encode_docs``
    real abstracts; a JSON-ready dict of what was measured (see the module docstring)."""
    import sentence_transformers
    import torch

    started = datetime.now(UTC)
    load_start = list(os.getloadavg())
    ingestion = measure_ingestion(Path(data_dir), Path(work), records)
    encoding = measure_encoding(Path(data_dir), encode_docs)
    return {
        "date": started.isoformat(timespec="seconds"),
        "params": {"records": records, "encode_docs": encode_docs, "cpu_count": os.cpu_count(),
                   "load_average_start": [round(x, 2) for x in load_start],
                   "load_average_end": [round(x, 2) for x in os.getloadavg()],
                   "versions": {"python": platform.python_version(), "torch": torch.__version__,
                                "sentence_transformers": sentence_transformers.__version__,
                                "platform": platform.platform()}},
        "ingestion": ingestion,
        "encoding": encoding,
    }
