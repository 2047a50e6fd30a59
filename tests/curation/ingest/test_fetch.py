from __future__ import annotations

import io
import socket
import time
import urllib.request
from email.message import Message
from pathlib import Path
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import parse_qs, urlsplit
from urllib.response import addinfourl

import pytest
from Bio import Entrez

from curation.errors import CurationError, InputError, NetworkError
from curation.ingest import fetch
from curation.ingest.problems import Problems
from curation.ingest.pubmed_xml import read_pubmed_xml

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "eutils"
ESEARCH = (FIXTURES / "esearch_akt1_mtor.xml").read_bytes()
EFETCH = (FIXTURES / "efetch_two_articles.xml").read_bytes()
EMAIL = "curator@example.org"
CIVIC_TSV = (
    b"molecular_profile\tdisease\ttherapies\tevidence_type\tcitation_id\tsource_type\tevidence_id\n"
    b"BRAF V600E\tMelanoma\tVemurafenib\tPredictive\t21639808\tPubMed\t1409\n"
)


def answer(body: bytes, url: str, content_type: str = "text/xml; charset=UTF-8") -> addinfourl:
    headers = Message()
    headers["Content-Type"] = content_type
    return addinfourl(io.BytesIO(body), headers, url, 200)


class Recorded:
    """Replays recorded answers by E-utility name; each entry is bytes or an exception to raise."""

    def __init__(self, **answers: Any) -> None:
        self.answers = {name: list(items) if isinstance(items, list) else [items] for name, items in answers.items()}
        self.requests: list[urllib.request.Request] = []
        self.timeouts: list[float] = []

    def __call__(self, request: urllib.request.Request, *, timeout: float) -> addinfourl:
        self.requests.append(request)
        self.timeouts.append(timeout)
        name = urlsplit(request.full_url).path.rsplit("/", 1)[-1].removesuffix(".fcgi")
        queue = self.answers[name]
        item = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(item, BaseException):
            raise item
        return answer(item, request.full_url)

    def params(self, index: int) -> dict[str, str]:
        request = self.requests[index]
        query = request.data.decode() if request.data else urlsplit(request.full_url).query
        return {k: v[0] for k, v in parse_qs(query).items()}


def test_search_pubmed_reads_recorded_esearch() -> None:
    transport = Recorded(esearch=ESEARCH)
    pmids = fetch.search_pubmed("vemurafenib OR (AKT1 AND mTOR)", retmax=2, email=EMAIL, api_key="k3y",
                                transport=transport)
    assert pmids == ["21639808", "15718470"]
    assert transport.params(0) == {
        "db": "pubmed", "term": "vemurafenib OR (AKT1 AND mTOR)", "retmax": "2",
        "email": EMAIL, "api_key": "k3y", "tool": "curation-workbench",
    }
    assert transport.timeouts == [fetch.TIMEOUT_S]
    assert Entrez.urlopen is urllib.request.urlopen  # the swap is undone


def test_search_pubmed_error_element_is_a_clear_error() -> None:
    rejected = ESEARCH.split(b"<eSearchResult>")[0] + b"<eSearchResult><ERROR>Invalid query</ERROR></eSearchResult>"
    with pytest.raises(CurationError, match="PubMed rejected the query 'AND': Invalid query"):
        fetch.search_pubmed("AND", email=EMAIL, transport=Recorded(esearch=rejected))


def test_search_pubmed_checks_arguments_before_any_request() -> None:
    transport = Recorded(esearch=ESEARCH)
    with pytest.raises(CurationError, match="CURATION_NCBI_EMAIL"):
        fetch.search_pubmed("akt1", email="", transport=transport)
    with pytest.raises(CurationError, match="retmax"):
        fetch.search_pubmed("akt1", retmax=0, email=EMAIL, transport=transport)
    assert transport.requests == []


def test_fetch_pubmed_caches_and_second_call_does_not_fetch(tmp_path: Path) -> None:
    transport = Recorded(efetch=EFETCH)
    files = fetch.fetch_pubmed(["21639808", "15718470"], tmp_path, EMAIL, transport=transport)
    assert len(files) == 1 and files[0].parent == tmp_path
    assert files[0].read_bytes() == EFETCH
    assert transport.params(0)["id"] == "21639808,15718470"
    assert transport.params(0)["retmode"] == "xml"
    documents = list(read_pubmed_xml(files[0], Problems(files[0])))
    assert [d.pmid for d in documents] == ["21639808", "15718470"]

    again = fetch.fetch_pubmed(["15718470", "21639808"], tmp_path, EMAIL, transport=transport)
    assert again == files
    assert len(transport.requests) == 1


def test_fetch_pubmed_fetches_only_what_is_missing(tmp_path: Path) -> None:
    transport = Recorded(efetch=EFETCH)
    first = fetch.fetch_pubmed(["21639808"], tmp_path, EMAIL, transport=transport)
    both = fetch.fetch_pubmed(["21639808", "15718470", "15718470"], tmp_path, EMAIL, transport=transport)
    assert len(transport.requests) == 2
    assert transport.params(1)["id"] == "15718470"
    assert both[0] == first[0] and len(both) == 2


def test_fetch_pubmed_batches_of_200(tmp_path: Path) -> None:
    transport = Recorded(efetch=EFETCH)
    pmids = [str(1000 + i) for i in range(450)]
    files = fetch.fetch_pubmed(pmids, tmp_path, EMAIL, api_key="k3y", transport=transport)
    assert len(files) == 3 and len(set(files)) == 3
    sizes = [len(transport.params(i)["id"].split(",")) for i in range(3)]
    assert sizes == [200, 200, 50]
    # Entrez posts from 200 ids on, as NCBI asks.
    assert [r.get_method() for r in transport.requests] == ["POST", "POST", "GET"]
    assert fetch.fetch_pubmed(pmids[::-1], tmp_path, EMAIL, transport=transport) == files[::-1]
    assert len(transport.requests) == 3


def test_fetch_pubmed_nothing_missing_needs_no_email_or_network(tmp_path: Path) -> None:
    assert fetch.fetch_pubmed([], tmp_path, "", transport=Recorded()) == []


def test_fetch_pubmed_rejects_bad_pmids(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        fetch.fetch_pubmed(["123", "PMC99"], tmp_path, EMAIL, transport=Recorded(efetch=EFETCH))
    assert caught.value.line == 2 and "'PMC99' is not a PubMed id" in caught.value.problem


@pytest.mark.parametrize(
    ("failure", "reason"),
    [
        (URLError(socket.gaierror(-3, "Temporary failure in name resolution")), "Temporary failure in name resolution"),
        (URLError(ConnectionRefusedError(111, "Connection refused")), "Connection refused"),
        (URLError(TimeoutError("timed out")), "timed out after 20 s"),
        (TimeoutError("timed out"), "timed out after 20 s"),  # socket.timeout is TimeoutError
    ],
)
def test_no_network_fails_fast_with_one_line(tmp_path: Path, failure: BaseException, reason: str) -> None:
    transport = Recorded(efetch=failure, esearch=failure)
    started = time.monotonic()
    with pytest.raises(NetworkError) as caught:
        fetch.fetch_pubmed(["21639808"], tmp_path, EMAIL, transport=transport)
    with pytest.raises(NetworkError):
        fetch.search_pubmed("akt1", email=EMAIL, transport=transport)
    assert time.monotonic() - started < 3.0
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("cannot reach eutils.ncbi.nlm.nih.gov: ")
    assert reason in message
    assert message.endswith("; check the network or ingest files with ingest-corpus")
    assert len(transport.requests) == 2  # no retries of a connection that cannot be made
    assert list(tmp_path.iterdir()) == []  # nothing half-cached
    assert Entrez.urlopen is urllib.request.urlopen


def test_server_errors_are_retried_by_entrez(tmp_path: Path) -> None:
    busy = HTTPError("https://eutils.ncbi.nlm.nih.gov/entrez/eutils/efetch.fcgi", 503, "Service Unavailable",
                     Message(), io.BytesIO(b""))
    transport = Recorded(efetch=[busy, EFETCH])
    files = fetch.fetch_pubmed(["21639808"], tmp_path, EMAIL, transport=transport)
    assert len(transport.requests) == 2 and files[0].read_bytes() == EFETCH


def test_bad_request_is_not_retried(tmp_path: Path) -> None:
    bad = HTTPError("https://eutils.ncbi.nlm.nih.gov/entrez/eutils/efetch.fcgi", 400, "Bad Request",
                    Message(), io.BytesIO(b""))
    transport = Recorded(efetch=bad)
    with pytest.raises(NetworkError, match=r"answered HTTP 400 Bad Request"):
        fetch.fetch_pubmed(["21639808"], tmp_path, EMAIL, transport=transport)
    assert len(transport.requests) == 1


def test_an_answer_that_is_not_pubmed_xml_is_not_cached(tmp_path: Path) -> None:
    limited = b'{"error":"API rate limit exceeded","api-key":"1.2.3.4","count":"11","limit":"10"}'
    transport = Recorded(efetch=limited)
    with pytest.raises(NetworkError, match="did not answer efetch with PubMed XML") as caught:
        fetch.fetch_pubmed(["21639808"], tmp_path, EMAIL, transport=transport)
    assert "API rate limit exceeded" in str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_fetch_civic_writes_the_file_atomically(tmp_path: Path) -> None:
    transport = Recorded(**{"nightly-ClinicalEvidenceSummaries.tsv": CIVIC_TSV})
    path = fetch.fetch_civic(tmp_path / "civic", transport=transport)
    assert path == tmp_path / "civic" / "nightly-ClinicalEvidenceSummaries.tsv"
    assert path.read_bytes() == CIVIC_TSV
    assert [p.name for p in path.parent.iterdir()] == [path.name]
    assert transport.requests[0].full_url == fetch.CIVIC_URL


def test_fetch_civic_keeps_the_previous_download_on_a_bad_answer(tmp_path: Path) -> None:
    previous = tmp_path / "nightly-ClinicalEvidenceSummaries.tsv"
    previous.write_bytes(CIVIC_TSV)
    html = Recorded(**{"nightly-ClinicalEvidenceSummaries.tsv": b"<!DOCTYPE html><html>Maintenance</html>"})
    with pytest.raises(NetworkError, match="did not return the CIViC TSV"):
        fetch.fetch_civic(tmp_path, transport=html)
    offline = Recorded(**{"nightly-ClinicalEvidenceSummaries.tsv": URLError(socket.gaierror(-2, "Name unknown"))})
    with pytest.raises(NetworkError, match=r"^cannot reach civicdb.org: Name unknown; check the network"):
        fetch.fetch_civic(tmp_path, transport=offline)
    assert previous.read_bytes() == CIVIC_TSV
    assert [p.name for p in tmp_path.iterdir()] == [previous.name]


def test_default_transport_fails_fast_on_a_closed_port(tmp_path: Path) -> None:
    # A real socket: bind a free local port, close it, and connect to it (refused at once).
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(NetworkError, match=r"^cannot reach 127\.0\.0\.1: .*refused"):
        fetch.fetch_civic(tmp_path, url=f"http://127.0.0.1:{port}/nightly.tsv")
    assert time.monotonic() - started < 5.0
