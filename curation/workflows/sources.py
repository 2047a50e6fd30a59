"""The outside sources a command brings into the store (``fetch-pubmed``, ``fetch-kb``, ``ingest-dict``): what to
fetch, the downloads, and synonym dictionaries; the files are read into the store by :mod:`.ingestion`.

The fetchers are :mod:`curation.ingest.fetch`'s (imported when a command runs: Biopython loads with them).
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from curation import access
from curation.access import Action, Who
from curation.config import Settings
from curation.entities.dictionaries import DICTIONARY_FORMATS, FILE_FORMATS, MINED_FORMATS, ingest_dictionary
from curation.store.corpus import get_documents
from curation.store.kb import list_kb_records

__all__ = ["DICTIONARY_FORMATS", "FILE_FORMATS", "MINED_FORMATS", "add_dictionary", "cited_pmids", "fetch_civic",
           "fetch_pubmed", "missing_pmids", "search_pubmed"]


def cited_pmids(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The PMIDs the KB's records cite, sorted, each once."""
    return sorted({r.pmid for r in list_kb_records(con) if r.pmid})


def search_pubmed(settings: Settings, query: str, retmax: int) -> list[str]:
    """The PMIDs of a PubMed search (needs internet)."""
    from curation.ingest import fetch

    return fetch.search_pubmed(query, retmax=retmax, email=settings.ncbi_email, api_key=settings.ncbi_api_key)


def missing_pmids(con: duckdb.DuckDBPyConnection, pmids: list[str]) -> list[str]:
    """``pmids`` the store holds no abstract of, in their order."""
    have = {d.pmid for d in get_documents(con, pmids)}
    return [p for p in pmids if p not in have]


def fetch_pubmed(settings: Settings, pmids: list[str]) -> list[Path]:
    """PubMed XML files of ``pmids``, fetched into the cache (needs internet)."""
    from curation.ingest import fetch

    return fetch.fetch_pubmed(pmids, settings.cache_dir / "pubmed", email=settings.ncbi_email,
                              api_key=settings.ncbi_api_key)


def fetch_civic(settings: Settings) -> Path:
    """The CIViC clinical evidence export, downloaded into the cache (needs internet)."""
    from curation.ingest import fetch

    return fetch.fetch_civic(settings.cache_dir / "civic")


def add_dictionary(con: duckdb.DuckDBPyConnection, who: Who, fmt: str, path: Path | None) -> tuple[int, int]:
    """Add a synonym dictionary (a file, or an installed vocabulary when ``path`` is None): (names read, new).

    Raises:
        AccessDenied: ``who`` may not import into the store.
    """
    access.require(con, who, Action.IMPORT)
    return ingest_dictionary(con, fmt, path)
