"""Getting real data on a connected machine: PubMed through NCBI E-utilities, the CIViC nightly export.

PubMed goes through Biopython's :mod:`Bio.Entrez`, which builds the requests (POST from
200 ids on), keeps to NCBI's rate limit (3 requests/s, 10 with an API key) and retries what
NCBI answers with HTTP 429 or 5xx. Two things Entrez lacks are added here:

* **A transport that can be swapped** (``transport=``, called like
  ``urllib.request.urlopen(request, timeout=...)``), so tests replay recorded E-utilities
  answers. Entrez has no parameter for it, so its module-level ``urlopen`` is replaced for
  the duration of one call, under a lock, and restored.
* **Failing fast without a network.** Every request has a socket timeout, and a connection
  that cannot be made (DNS, refused, unreachable, timed out) raises :class:`NetworkError`
  at once with a one-line message instead of going through Entrez's retries.

Fetched efetch batches are kept in the cache folder (``efetch-<hash>.xml`` with a
``.pmids`` list beside it, written last, so a half-written batch is never taken as cached).
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import shutil
import threading
import urllib.request
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol
from urllib.error import HTTPError, URLError
from urllib.parse import urlsplit

from Bio import Entrez

from curation.errors import CurationError, InputError, NetworkError
from curation.files import atomic_writer, write_atomic
from curation.ingest.tabular import valid_pmid

EUTILS_HOST = "eutils.ncbi.nlm.nih.gov"
CIVIC_URL = "https://civicdb.org/downloads/nightly/nightly-ClinicalEvidenceSummaries.tsv"
CIVIC_FILE = "nightly-ClinicalEvidenceSummaries.tsv"
TOOL = "curation-workbench"
BATCH_SIZE = 200  # NCBI's advice for one efetch; Entrez switches to POST at 200 ids
MAX_RETMAX = 10_000  # esearch returns at most this many ids per call
TIMEOUT_S = 20.0  # per socket operation
MAX_TRIES = 3  # Entrez's tries for HTTP 429 / 5xx answers (it retries those at once)

_PUBMED_HINT = "check the network or ingest files with ingest-corpus"
_CIVIC_HINT = f"check the network, or download {CIVIC_FILE} elsewhere and ingest it with ingest-kb civic"
_ARTICLE_SET = re.compile(rb"<PubmedArticleSet[\s>/]")
_ENTREZ_LOCK = threading.Lock()


class Transport(Protocol):
    """Opens a request like ``urllib.request.urlopen``; the answer has ``read``, ``close`` and ``headers``."""

    def __call__(self, request: urllib.request.Request, *, timeout: float) -> Any: ...


def default_transport(request: urllib.request.Request, *, timeout: float) -> Any:
    return urllib.request.urlopen(request, timeout=timeout)


class _Unreachable(Exception):
    """Raised through Entrez (which retries only URLError) so that no retry happens."""


def fetch_pubmed(
    pmids: Iterable[str],
    cache_dir: Path,
    email: str,
    api_key: str = "",
    *,
    transport: Transport | None = None,
    batch_size: int = BATCH_SIZE,
) -> list[Path]:
    """Fetch PubMed XML for ``pmids`` into ``cache_dir``, in efetch batches; cached PMIDs are not fetched again.

    Returns:
        The XML files holding the requested PMIDs (cached ones first, then the new batches),
        ready for :func:`curation.ingest.pubmed_xml.read_pubmed_xml`. A PMID that NCBI does not
        return counts as fetched; delete the cache files to ask again.

    Raises:
        InputError: a PMID is not digits.
        NetworkError: NCBI cannot be reached or does not answer with PubMed XML (one line).
        CurationError: no contact email (NCBI asks for one with every request).
    """
    wanted = _valid_pmids(pmids)
    cache_dir = Path(cache_dir)
    cached = _cached_pmids(cache_dir)
    files = list(dict.fromkeys(cached[p] for p in wanted if p in cached))
    missing = [p for p in wanted if p not in cached]
    if not missing:
        return files
    _require_email(email)
    cache_dir.mkdir(parents=True, exist_ok=True)
    for start in range(0, len(missing), batch_size):
        batch = missing[start : start + batch_size]
        data = _entrez_read(
            transport, Entrez.efetch, db="pubmed", id=",".join(batch), retmode="xml",
            email=email, api_key=api_key or None, tool=TOOL,
        )
        if not _ARTICLE_SET.search(data[:4096]):
            raise NetworkError(
                f"{EUTILS_HOST} did not answer efetch with PubMed XML (it began {_snippet(data)}); try again later"
            )
        files.append(_store_batch(cache_dir, batch, data))
    return files


def search_pubmed(
    query: str,
    retmax: int = 100,
    *,
    email: str,
    api_key: str = "",
    transport: Transport | None = None,
) -> list[str]:
    """PMIDs matching a PubMed query (esearch), best match order as NCBI gives it.

    Raises:
        NetworkError: NCBI cannot be reached (one line).
        CurationError: no email, ``retmax`` out of range, or NCBI rejects the query.
    """
    if not query.strip():
        raise CurationError("the PubMed query is empty; give search terms, e.g. 'AKT1 AND phosphorylation'")
    if not 1 <= retmax <= MAX_RETMAX:
        raise CurationError(f"retmax must be between 1 and {MAX_RETMAX}, got {retmax}")
    _require_email(email)
    data = _entrez_read(
        transport, Entrez.esearch, db="pubmed", term=query, retmax=retmax,
        email=email, api_key=api_key or None, tool=TOOL,
    )
    try:
        record = Entrez.read(_BytesSource(data))
    except RuntimeError as exc:  # Entrez raises the <ERROR> element's text
        raise CurationError(f"PubMed rejected the query '{query}': {_one_line(exc)}") from None
    except ValueError as exc:  # NotXMLError, CorruptedXMLError, ValidationError
        raise NetworkError(
            f"{EUTILS_HOST} did not answer esearch with its XML ({_one_line(exc)}); try again later"
        ) from None
    return [str(pmid) for pmid in record["IdList"]]


def fetch_civic(dest_dir: Path, *, transport: Transport | None = None, url: str = CIVIC_URL) -> Path:
    """Download the CIViC clinical evidence export to ``dest_dir`` (a temporary file, renamed when complete).

    Raises:
        NetworkError: the site cannot be reached or does not return the TSV (one line); a
        previous download in ``dest_dir`` is left as it was.
    """
    open_request = transport or default_transport
    host = urlsplit(url).hostname or url
    dest_dir = Path(dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    target = dest_dir / CIVIC_FILE
    with atomic_writer(target, "wb") as out:  # replaces target only if the download is whole and a TSV
        try:
            response = open_request(urllib.request.Request(url, headers={"User-Agent": TOOL}), timeout=TIMEOUT_S)
            try:
                shutil.copyfileobj(response, out)
            finally:
                response.close()
        except HTTPError as exc:
            raise NetworkError(f"{host} answered HTTP {exc.code} {_one_line(exc.reason)}; {_CIVIC_HINT}") from None
        except (URLError, OSError) as exc:
            raise NetworkError(f"cannot reach {host}: {_reason(exc)}; {_CIVIC_HINT}") from None
        out.flush()
        with open(out.name, "rb") as handle:
            first = handle.readline(4096)
        if b"\t" not in first or b"evidence_id" not in first:
            raise NetworkError(
                f"{host} did not return the CIViC TSV (it began {_snippet(first)}); try again later"
            )
    return target


def _entrez_read(transport: Transport | None, call: Any, **params: Any) -> bytes:
    """Run one Entrez call through ``transport`` and return the whole answer, or raise NetworkError."""
    try:
        with _entrez_transport(transport or default_transport):
            handle = call(**params)
        try:
            data = handle.read()
        finally:
            handle.close()
    except _Unreachable as exc:
        raise NetworkError(f"cannot reach {EUTILS_HOST}: {_reason(exc.__cause__)}; {_PUBMED_HINT}") from None
    except HTTPError as exc:
        raise NetworkError(
            f"{EUTILS_HOST} answered HTTP {exc.code} {_one_line(exc.reason)}; "
            f"{'try again later' if exc.code >= 500 or exc.code == 429 else _PUBMED_HINT}"
        ) from None
    except (URLError, OSError) as exc:  # read timeouts and resets while receiving the answer
        raise NetworkError(f"cannot reach {EUTILS_HOST}: {_reason(exc)}; {_PUBMED_HINT}") from None
    return data.encode("utf-8") if isinstance(data, str) else data


@contextlib.contextmanager
def _entrez_transport(transport: Transport) -> Iterator[None]:
    def guarded(request: urllib.request.Request) -> Any:
        try:
            return transport(request, timeout=TIMEOUT_S)
        except HTTPError:
            raise  # Entrez retries 429 and 5xx
        except (URLError, OSError) as exc:
            raise _Unreachable() from exc

    with _ENTREZ_LOCK:
        saved = Entrez.urlopen, Entrez.max_tries
        Entrez.urlopen, Entrez.max_tries = guarded, MAX_TRIES
        try:
            yield
        finally:
            Entrez.urlopen, Entrez.max_tries = saved


class _BytesSource:
    """A binary handle over bytes for Entrez.read (it checks ``read(0)`` for bytes)."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._offset = 0

    def read(self, size: int = -1) -> bytes:
        end = len(self._data) if size < 0 else self._offset + size
        chunk = self._data[self._offset : end]
        self._offset += len(chunk)
        return chunk


def _valid_pmids(pmids: Iterable[str]) -> list[str]:
    wanted: list[str] = []
    for index, pmid in enumerate(pmids, start=1):
        pmid = str(pmid).strip()
        if not valid_pmid(pmid):
            raise InputError("PMID list", index, None, f"'{pmid}' is not a PubMed id (1 to 9 digits)")
        wanted.append(pmid)
    return list(dict.fromkeys(wanted))


def _require_email(email: str) -> None:
    if not email or "@" not in email:
        raise CurationError(
            "NCBI asks every E-utilities request to carry a contact email; set CURATION_NCBI_EMAIL"
        )


def _cached_pmids(cache_dir: Path) -> dict[str, Path]:
    cached: dict[str, Path] = {}
    if not cache_dir.is_dir():
        return cached
    for listing in sorted(cache_dir.glob("efetch-*.pmids")):
        xml = listing.with_suffix(".xml")
        if not xml.is_file():
            continue
        for pmid in listing.read_text(encoding="utf-8").split():
            cached.setdefault(pmid, xml)
    return cached


def _store_batch(cache_dir: Path, batch: Sequence[str], data: bytes) -> Path:
    digest = hashlib.sha1(",".join(batch).encode("ascii")).hexdigest()[:16]
    xml = cache_dir / f"efetch-{digest}.xml"
    write_atomic(xml, data)
    write_atomic(xml.with_suffix(".pmids"), ("\n".join(batch) + "\n").encode("ascii"))
    return xml


def _reason(exc: BaseException | None) -> str:
    """Why a connection failed, in a few words ("Temporary failure in name resolution")."""
    if isinstance(exc, URLError) and not isinstance(exc, HTTPError):
        if not isinstance(exc.reason, BaseException):
            return _one_line(exc.reason)
        exc = exc.reason
    if isinstance(exc, TimeoutError):
        return f"timed out after {TIMEOUT_S:g} s"
    if isinstance(exc, OSError) and exc.strerror:
        return _one_line(exc.strerror)
    return _one_line(exc) if exc is not None else "unknown error"


def _one_line(value: object) -> str:
    text = " ".join(str(value).split())
    return text or type(value).__name__


def _snippet(data: bytes) -> str:
    return repr(" ".join(data[:80].decode("utf-8", errors="replace").split()))
