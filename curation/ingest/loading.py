"""A loader's records into the store: a knowledge-base file whole, a corpus file in batches, a folder file by file.

A knowledge-base file is parsed whole, then written in one transaction. A corpus file is
written :data:`BATCH_DOCUMENTS` documents at a time as its loader yields them: PubMed XML and
JSONL stream, so memory holds one batch (plus the PMIDs seen), never the file; the PubTator
loader gathers its file first (annotations are merged per PMID).

Strict mode (the default) stops at the first bad row and writes nothing of the file: all its
batches go into one transaction, rolled back on the error (a PubTator file's documents stand on their
own: a bad one is skipped and named in either mode, :mod:`curation.ingest.pubtator`). Lenient mode skips
bad rows and says which and why, and commits each batch on its own: a run killed mid-file keeps the batches
written, and ingesting the file again merges by PMID, so nothing is duplicated. Either way the
file is logged in ``ingests`` (its resolved path) only once it has been read to the end:
:func:`load_corpus_files` skips a file logged after its last modification, and re-reads one
that was not finished. Who may import, and annotating what came in, are the caller's
(:mod:`curation.workflows.ingestion`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import TypeVar

import duckdb

from curation.errors import EmptyFileError, InputError
from curation.ingest.civic import read_civic
from curation.ingest.jsonl import read_jsonl
from curation.ingest.kb_tsv import read_kb_tsv
from curation.ingest.problems import Problems
from curation.ingest.pubtator import read_pubtator
from curation.ingest.repair import repaired
from curation.records import Document, IngestReport, KBRecord
from curation.schemas import resolve_schema
from curation.store.base import ingest_times, list_schemas, record_ingest, transaction
from curation.store.corpus import add_documents
from curation.store.kb import add_kb_records

KB_FORMATS = ("civic", "uniprot", "tsv", "civic-suggestions")
CORPUS_FORMATS = ("pubtator", "pubmed-xml", "jsonl")
# Documents written per transaction while a corpus file streams in: what memory holds at once and, in
# lenient mode, the most a killed run has to read again. 2,000 abstracts are a few MB of Python objects.
BATCH_DOCUMENTS = 2_000
# The files a folder given to load_corpus_files stands for, by format (case-insensitive name endings).
CORPUS_SUFFIXES = {
    "pubtator": (".pubtator", ".pubtator.txt", ".pubtator.gz", ".txt", ".txt.gz"),
    "pubmed-xml": (".xml", ".xml.gz"),
    "jsonl": (".jsonl", ".jsonl.gz"),
}

Progress = Callable[[int], None]
T = TypeVar("T")


def _counted(items: Iterable[T], progress: Progress | None) -> Iterator[T]:
    for count, item in enumerate(items, start=1):
        if progress is not None and count % 200 == 0:
            progress(count)
        yield item


def _read_kb(kind: str, path: Path, schema: str | None, problems: Problems, con: duckdb.DuckDBPyConnection):
    if kind == "civic":
        return read_civic(path, problems)
    if kind == "uniprot":
        from curation.ingest.uniprot import read_uniprot

        return read_uniprot(path, problems)
    if kind == "civic-suggestions":
        from curation.ingest.civic_suggestions import read_civic_suggestions

        return read_civic_suggestions(path, problems)
    if kind == "tsv":
        if not schema:
            raise InputError(str(path), None, None, "a generic TSV needs --schema NAME (PO, PTM or a TOML schema)")
        return read_kb_tsv(path, resolve_schema(schema, list_schemas(con)), problems)
    raise InputError(str(path), None, None, f"unknown knowledge-base format '{kind}'; use one of {KB_FORMATS}")


def _read_corpus(kind: str, path: Path, problems: Problems):
    # Every corpus's text is repaired (mojibake: HoC's "TGFÎ²1"), gold offsets moved with it, before it is stored.
    if kind == "pubtator":
        return repaired(read_pubtator(path, problems))
    if kind == "pubmed-xml":
        from curation.ingest.pubmed_xml import read_pubmed_xml

        return repaired(read_pubmed_xml(path, problems))
    if kind == "jsonl":
        return repaired(read_jsonl(path, problems))
    raise InputError(str(path), None, None, f"unknown corpus format '{kind}'; use one of {CORPUS_FORMATS}")


def _check_path(path: Path) -> None:
    if not path.exists():
        raise InputError(str(path), None, None, "file not found")
    if path.is_dir():
        raise InputError(str(path), None, None, "is a folder; give a file")


def load_kb(
    con: duckdb.DuckDBPyConnection, kind: str, path: str | Path, schema: str | None = None, lenient: bool = False,
    progress: Progress | None = None,
) -> IngestReport:
    """Write a knowledge-base file (civic, uniprot, civic-suggestions, or tsv with ``schema``) in one transaction."""
    path = Path(path)
    _check_path(path)
    problems = Problems(path, lenient)
    records: list[KBRecord] = list(_counted(_read_kb(kind, path, schema, problems, con), progress))
    if not records and not problems.skipped:
        raise EmptyFileError(str(path))
    with transaction(con):
        added, updated, unchanged = add_kb_records(con, records, origin=str(path))
        record_ingest(con, f"kb:{kind}", str(path), added + updated, unchanged, len(problems.skipped))
    with_pmid = sum(1 for r in records if r.pmid)
    schemas = {s.name: s for s in list_schemas(con)}
    answered = sum(1 for r in records if r.get(schemas[r.schema].answer))
    return IngestReport(
        path=str(path),
        kind=kind,
        added=added,
        unchanged=unchanged,
        skipped=tuple(problems.skipped),
        details=(
            ("updated", updated),
            ("records with a PubMed id", with_pmid),
            ("records with an answer", answered),
        ),
    )


@dataclass(frozen=True)
class LoadedCorpus:
    """A corpus file written: its report, and the PMIDs it held (when asked for: the documents to annotate)."""

    report: IngestReport
    pmids: tuple[str, ...] = ()


def load_corpus(
    con: duckdb.DuckDBPyConnection, kind: str, path: str | Path, lenient: bool = False,
    progress: Progress | None = None, keep_pmids: bool = False,
) -> LoadedCorpus:
    """Write a corpus file (pubtator, pubmed-xml, jsonl), streaming it in batches; documents merge by PMID.

    Args:
        lenient: skip bad rows, and commit every :data:`BATCH_DOCUMENTS` documents (a killed run
            keeps what was committed). Strict: the whole file in one transaction, nothing written
            on a bad row (a PubTator file's bad document is skipped and named in the report either way).
        progress: called with the number of documents read so far, every 200.
        keep_pmids: keep the PMIDs written (in file order) in :attr:`LoadedCorpus.pmids`.

    Raises:
        InputError: a bad row in strict mode, or a file that cannot be read at all (either mode; in
            lenient mode the batches before the error stay written, and the file is not logged as
            ingested, so the next run reads it again).
        EmptyFileError: the file holds no document (nothing is logged as ingested).
    """
    path = Path(path)
    _check_path(path)
    problems = Problems(path, lenient)
    documents = _counted(_read_corpus(kind, path, problems), progress)
    written = _Written(keep_pmids=keep_pmids)
    if lenient:
        for batch in _batches(documents, BATCH_DOCUMENTS):
            with transaction(con):
                written.add(con, batch)
        written.check_any(path, problems)
        with transaction(con):
            record_ingest(con, f"corpus:{kind}", str(path.resolve()), written.added, written.unchanged,
                          len(problems.skipped))
    else:
        with transaction(con):
            for batch in _batches(documents, BATCH_DOCUMENTS):
                written.add(con, batch)
            written.check_any(path, problems)
            record_ingest(con, f"corpus:{kind}", str(path.resolve()), written.added, written.unchanged,
                          len(problems.skipped))
    report = IngestReport(
        path=str(path),
        kind=kind,
        added=written.added,
        unchanged=written.unchanged,
        skipped=tuple(problems.skipped),
        details=(("gold mentions read", written.mentions),),
        warnings=tuple(problems.warnings),
    )
    return LoadedCorpus(report, tuple(written.pmids))


def _batches(items: Iterable[T], size: int) -> Iterator[list[T]]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


class _Written:
    """Running counts of a streamed ingest (and its PMIDs, when they are to be annotated)."""

    def __init__(self, keep_pmids: bool) -> None:
        self.added = self.unchanged = self.mentions = 0
        self.pmids: list[str] = []
        self._keep_pmids = keep_pmids

    def add(self, con: duckdb.DuckDBPyConnection, batch: Sequence[Document]) -> None:
        added, unchanged = add_documents(con, batch)
        self.added += added
        self.unchanged += unchanged
        self.mentions += sum(len(d.mentions) for d in batch)
        if self._keep_pmids:
            self.pmids.extend(d.pmid for d in batch)

    def check_any(self, path: Path, problems: Problems) -> None:
        """Raise :class:`EmptyFileError` when the file held no document at all (none read, none skipped)."""
        if not (self.added or self.unchanged or problems.skipped):
            raise EmptyFileError(str(path))


@dataclass(frozen=True)
class CorpusRun:
    """What :func:`load_corpus_files` did: a report per file read, and the files it skipped as done."""

    reports: tuple[IngestReport, ...]
    done: tuple[Path, ...]  # logged as ingested whole after their last modification: not read again
    empty: tuple[Path, ...] = ()  # files of a folder with no records (a warning each; not logged, read again)

    @property
    def added(self) -> int:
        return sum(r.added for r in self.reports)

    def summary(self) -> str:
        return (f"{len(self.reports) + len(self.done)} files: {len(self.reports)} read, {len(self.done)} skipped as "
                f"already ingested whole and unchanged since; {self.added} added, "
                f"{sum(r.unchanged for r in self.reports)} already present, "
                f"{sum(len(r.skipped) for r in self.reports)} rows skipped")


def corpus_files(kind: str, paths: Sequence[str | Path]) -> list[Path]:
    """The files ``paths`` stand for: each file as given, each folder's files of the format (sorted by name).

    Raises:
        InputError: a path that does not exist, a folder with no file of the format, an unknown format.
    """
    if kind not in CORPUS_SUFFIXES:
        raise InputError(str(paths[0]) if paths else "", None, None,
                         f"unknown corpus format '{kind}'; use one of {CORPUS_FORMATS}")
    files: list[Path] = []
    for given in map(Path, paths):
        if not given.exists():
            raise InputError(str(given), None, None, "file not found")
        if not given.is_dir():
            files.append(given)
            continue
        found = sorted(p for p in given.iterdir() if p.is_file() and not p.name.startswith(".")
                       and p.name.lower().endswith(CORPUS_SUFFIXES[kind]))
        if not found:
            raise InputError(str(given), None, None, f"the folder holds no {kind} file (names ending in "
                             f"{', '.join(CORPUS_SUFFIXES[kind])}); give the files themselves or another folder")
        files.extend(found)
    return list(dict.fromkeys(files))


def load_corpus_files(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    paths: Sequence[str | Path],
    read_file: Callable[[Path], IngestReport],
    again: bool = False,
    on_file: Callable[[Path, int, int, bool], None] | None = None,
    on_report: Callable[[IngestReport], None] | None = None,
    on_empty: Callable[[EmptyFileError], None] | None = None,
) -> CorpusRun:
    """Read corpus files and folders (a PubMed baseline folder, say) file by file, resumably.

    A file logged as ingested whole (``ingests``, by resolved path) at a time later than its
    modification time is skipped, unless ``again``: a re-run of a killed run goes on with the file
    it stopped in, which is read again from its start and merged by PMID (no duplicates). A file
    replaced or edited since its ingest has a newer modification time and is read again.

    Args:
        read_file: ingests one file and returns its report (:func:`load_corpus`, and what the caller does after).
        on_file: called before each file with (path, position from 1, number of files, skipped as done).
        on_report: called with each file's report once the file is in.
        on_empty: called with the error of a file found in a folder that has no records (the import goes
            on); a file named itself with no records stops it (:class:`EmptyFileError`).

    Raises:
        InputError: as :func:`corpus_files`, and as ``read_file`` for the file that failed
            (the files before it stay ingested and logged).
    """
    files = corpus_files(kind, paths)
    named = {Path(p) for p in paths if not Path(p).is_dir()}  # files given themselves, not found in a folder
    logged = ingest_times(con, f"corpus:{kind}")
    reports: list[IngestReport] = []
    done: list[Path] = []
    empty: list[Path] = []
    for position, path in enumerate(files, start=1):
        when = logged.get(str(path.resolve()))
        skip = not again and when is not None and path.stat().st_mtime < when
        if on_file is not None:
            on_file(path, position, len(files), skip)
        if skip:
            done.append(path)
            continue
        try:
            reports.append(read_file(path))
        except EmptyFileError as exc:
            if path in named:
                raise
            empty.append(path)
            if on_empty is not None:
                on_empty(exc)
            continue
        if on_report is not None:
            on_report(reports[-1])
    return CorpusRun(tuple(reports), tuple(done), tuple(empty))
