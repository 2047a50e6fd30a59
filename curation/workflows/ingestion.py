"""Running a loader into the store: parse everything first, then write in one transaction.

Strict mode stops at the first bad row before anything is written. Lenient mode skips bad
rows and says which and why. Either way a file is committed whole or not at all, and
ingesting the same file again changes nothing.

A corpus ingested with an ``annotator`` then has its new (stale) documents annotated into the
concept index (:func:`curation.workflows.entities.annotate_new`), in transactions of their own
after the documents': a failure there leaves the documents ingested and the report names them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

import duckdb

from curation import store
from curation.entities.annotation import Annotator
from curation.errors import InputError
from curation.ingest.civic import read_civic
from curation.ingest.jsonl import read_jsonl
from curation.ingest.kb_tsv import read_kb_tsv
from curation.ingest.problems import Problems
from curation.ingest.pubtator import read_pubtator
from curation.records import Document, IngestReport, KBRecord
from curation.schemas import resolve_schema
from curation.workflows.entities import annotate_new

KB_FORMATS = ("civic", "uniprot", "tsv", "civic-suggestions")
CORPUS_FORMATS = ("pubtator", "pubmed-xml", "jsonl")
# Largest file the app imports, in MB: the same number as ``server.maxUploadSize`` in
# .streamlit/config.toml, which Streamlit enforces in the browser and on the server (a test
# keeps the two equal). The CLI has no limit: it reads files in place.
MAX_UPLOAD_MB = 200

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
        return read_kb_tsv(path, resolve_schema(schema, store.list_schemas(con)), problems)
    raise InputError(str(path), None, None, f"unknown knowledge-base format '{kind}'; use one of {KB_FORMATS}")


def _read_corpus(kind: str, path: Path, problems: Problems):
    if kind == "pubtator":
        return read_pubtator(path, problems)
    if kind == "pubmed-xml":
        from curation.ingest.pubmed_xml import read_pubmed_xml

        return read_pubmed_xml(path, problems)
    if kind == "jsonl":
        return read_jsonl(path, problems)
    raise InputError(str(path), None, None, f"unknown corpus format '{kind}'; use one of {CORPUS_FORMATS}")


def check_upload_size(name: str, size: int) -> None:
    """Refuse an uploaded file over :data:`MAX_UPLOAD_MB` before anything is written.

    Raises:
        InputError: naming the file, its size and the limit, and what to do instead.
    """
    limit = MAX_UPLOAD_MB * 1024 * 1024
    if size > limit:
        raise InputError(
            name, None, None,
            f"the file has {size / 1024 / 1024:,.1f} MB, more than the app's upload limit of {MAX_UPLOAD_MB} MB. "
            "Import it from a terminal instead (python -m curation ingest-kb / ingest-corpus read files in place, "
            "with no size limit), or split it into smaller files",
        )


def _check_path(path: Path) -> None:
    if not path.exists():
        raise InputError(str(path), None, None, "file not found")
    if path.is_dir():
        raise InputError(str(path), None, None, "is a folder; give a file")


def ingest_kb(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    path: str | Path,
    schema: str | None = None,
    lenient: bool = False,
    progress: Progress | None = None,
) -> IngestReport:
    """Ingest a knowledge-base file (civic, uniprot, or tsv with ``schema``)."""
    path = Path(path)
    _check_path(path)
    problems = Problems(path, lenient)
    records: list[KBRecord] = list(_counted(_read_kb(kind, path, schema, problems, con), progress))
    with store.transaction(con):
        added, updated, unchanged = store.add_kb_records(con, records, origin=str(path))
        store.record_ingest(con, f"kb:{kind}", str(path), added + updated, unchanged, len(problems.skipped))
    with_pmid = sum(1 for r in records if r.pmid)
    schemas = {s.name: s for s in store.list_schemas(con)}
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


def ingest_corpus(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    path: str | Path,
    lenient: bool = False,
    progress: Progress | None = None,
    annotator: Annotator | Callable[[], Annotator] | None = None,
) -> IngestReport:
    """Ingest a corpus file (pubtator, pubmed-xml, jsonl); documents merge by PMID.

    Args:
        annotator: annotates the file's new documents once they are written, or a function that
            returns it, called only then (so a matcher built from the store sees the new names).
            None: documents are left unannotated (``python -m curation reannotate`` fills them in).
    """
    path = Path(path)
    _check_path(path)
    problems = Problems(path, lenient)
    documents: list[Document] = list(_counted(_read_corpus(kind, path, problems), progress))
    with store.transaction(con):
        added, unchanged = store.add_documents(con, documents)
        store.record_ingest(con, f"corpus:{kind}", str(path), added, unchanged, len(problems.skipped))
    details = [("gold mentions read", sum(len(d.mentions) for d in documents))]
    notes: tuple[str, ...] = ()
    if annotator is not None and documents:
        try:
            chosen = annotator if isinstance(annotator, Annotator) else annotator()
            annotated = annotate_new(con, chosen, [d.pmid for d in documents])
        except Exception as exc:  # noqa: BLE001 - the documents are in; say why they are not annotated
            notes = (f"the documents are ingested but not annotated ({exc}); run `python -m curation reannotate`",)
        else:
            details.append(("documents annotated", annotated.annotated))
            notes = (annotated.summary(),) if annotated.failed else ()
    return IngestReport(
        path=str(path),
        kind=kind,
        added=added,
        unchanged=unchanged,
        skipped=tuple(problems.skipped),
        details=tuple(details),
        notes=notes,
    )
