"""Importing a file: the role checked, the loader's records written (:mod:`curation.ingest.loading`), a corpus's
new documents annotated.

A corpus ingested with an ``annotator`` then has its new (stale) documents annotated into the
concept index (:func:`curation.relations.concept_index.annotate_new`), in transactions of their own
after the documents': a failure there leaves the documents ingested and the report names them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import duckdb

from curation import access
from curation.access import Action, Who
from curation.entities.annotation import Annotator
from curation.entities.served_annotator import REANNOTATE_HINT
from curation.errors import EmptyFileError, InputError
from curation.ingest.loading import BATCH_DOCUMENTS as BATCH_DOCUMENTS  # for the command line's help
from curation.ingest.loading import CORPUS_FORMATS as CORPUS_FORMATS  # the formats the page and CLI offer
from curation.ingest.loading import KB_FORMATS as KB_FORMATS
from curation.ingest.loading import CorpusRun, Progress, load_corpus, load_corpus_files, load_kb
from curation.records import IngestReport
from curation.relations.concept_index import annotate_new

# Largest file the app imports, in MB: the same number as ``server.maxUploadSize`` in
# .streamlit/config.toml, which Streamlit enforces in the browser and on the server (a test
# keeps the two equal). The CLI has no limit: it reads files in place.
MAX_UPLOAD_MB = 200


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


def ingest_kb(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    path: str | Path,
    schema: str | None = None,
    lenient: bool = False,
    progress: Progress | None = None, *, who: Who = "",
) -> IngestReport:
    """Ingest a knowledge-base file (civic, uniprot, or tsv with ``schema``): :func:`curation.ingest.loading.load_kb`
    after the role is checked."""
    access.require(con, who, Action.IMPORT)
    return load_kb(con, kind, path, schema, lenient, progress)


def ingest_corpus(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    path: str | Path,
    lenient: bool = False,
    progress: Progress | None = None,
    annotator: Annotator | Callable[[], Annotator] | None = None, *, who: Who = "",
) -> IngestReport:
    """Ingest a corpus file (pubtator, pubmed-xml, jsonl), streaming it in batches; documents merge by PMID.

    Args:
        lenient, progress: as :func:`curation.ingest.loading.load_corpus` (which also says what it raises).
        annotator: annotates the file's new documents once they are all written, or a function that
            returns it, called only then (so a matcher built from the store sees the new names).
            None: documents are left unannotated (``python -m curation reannotate`` fills them in).

    Raises:
        InputError, EmptyFileError: as :func:`curation.ingest.loading.load_corpus`.
    """
    access.require(con, who, Action.IMPORT)
    loaded = load_corpus(con, kind, path, lenient, progress, keep_pmids=annotator is not None)
    report = loaded.report
    if annotator is None or not loaded.pmids:
        return report
    try:
        chosen = annotator if isinstance(annotator, Annotator) else annotator()
        annotated = annotate_new(con, chosen, list(loaded.pmids))
    except Exception as exc:  # noqa: BLE001 - the documents are in; say why they are not annotated
        return replace(report, notes=(f"the documents are ingested but not annotated ({exc}); {REANNOTATE_HINT}",))
    return replace(report, details=(*report.details, ("documents annotated", annotated.annotated)),
                   notes=(annotated.summary(),) if annotated.failed else ())


def ingest_corpus_files(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    paths: Sequence[str | Path],
    lenient: bool = False,
    again: bool = False,
    progress: Progress | None = None,
    on_file: Callable[[Path, int, int, bool], None] | None = None,
    on_report: Callable[[IngestReport], None] | None = None,
    annotator: Annotator | Callable[[], Annotator] | None = None, *, who: Who = "",
    on_empty: Callable[[EmptyFileError], None] | None = None,
) -> CorpusRun:
    """Ingest corpus files and folders file by file, resumably (:func:`curation.ingest.loading.load_corpus_files`),
    each file read by :func:`ingest_corpus` (``lenient``, ``progress`` and ``annotator`` passed on)."""
    access.require(con, who, Action.IMPORT)

    def read_file(path: Path) -> IngestReport:
        return ingest_corpus(con, kind, path, lenient=lenient, progress=progress, annotator=annotator, who=who)

    return load_corpus_files(con, kind, paths, read_file, again=again, on_file=on_file, on_report=on_report,
                             on_empty=on_empty)
