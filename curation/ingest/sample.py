"""The sample: the files a data directory holds in this project's layout, or the small sample fetched online.

The sample is whatever the data directory (``CURATION_DATA_DIR``) holds in the layout this project's real data has
(CIViC exports, BioRED / BC5CDR PubTator files, HoC JSON lines, the DrugBank vocabulary); without one it is
fetched: CIViC's nightly evidence export and up to a few hundred of the PubMed abstracts it cites (NCBI
E-utilities). With neither, :class:`NoSampleError` says what to do. Loading the files is the facade's
(:mod:`curation.workflows.quickstart`), which adds the installed packages' vocabularies.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from curation.config import Settings
from curation.errors import CurationError

__all__ = ["NO_SAMPLE_HELP", "SAMPLE_LAYOUT", "SAMPLE_PUBMED", "NoSampleError", "SampleFile", "fetch_sample",
           "find_sample", "sample_files"]

# Where each kind of file sits in a data directory, in loading order: KBs first (their records name
# the abstracts), then corpora, then dictionaries. (kind, format, glob pattern)
SAMPLE_LAYOUT: tuple[tuple[str, str, str], ...] = (
    ("kb", "civic", "civic/*.tsv"),
    ("corpus", "pubtator", "biored/*.PubTator"),
    ("corpus", "pubtator", "bc5cdr/*.PubTator.txt"),
    ("corpus", "jsonl", "hoc/*.jsonl"),
    ("dict", "drugbank", "dicts/drugbank*.csv"),
    # Gene names under the NCBI Gene ids of GNormPlus and NLM-Gene Train (their dev split left out)
    ("dict", "corpus-genes", "ner_corpora/gnormplus/*.PubTator"),
    ("dict", "corpus-genes", "ner_corpora/nlmgene/*.PubTator"),
)
SAMPLE_PUBMED = 300  # abstracts fetched for the online sample (those CIViC cites, newest first)

NO_SAMPLE_HELP = (
    "No sample to load: the data directory {data_dir} does not exist or holds none of the expected files, "
    "and the sample could not be fetched online ({reason}). Either point CURATION_DATA_DIR at a folder laid "
    "out like this project's data (civic/*.tsv, biored/*.PubTator, bc5cdr/*.PubTator.txt, hoc/*.jsonl, "
    "dicts/drugbank*.csv) and try again, or import your own files on the Knowledge base page "
    "(python -m curation ingest-kb / ingest-corpus from a terminal while the app is stopped)."
)


class NoSampleError(CurationError):
    """Neither a data directory nor the network gives a sample."""


@dataclass(frozen=True)
class SampleFile:
    """One file of the sample: what it is, in which format, where."""

    kind: str  # "kb", "corpus" or "dict"
    fmt: str
    path: Path | None  # None: an installed package's vocabulary, read from the package
    source: str = ""  # for a package's vocabulary: the package and its version

    @property
    def label(self) -> str:
        if self.path is None:
            return f"{self.fmt} ({self.source or 'installed package'})"
        return f"{self.path.parent.name}/{self.path.name}"


def find_sample(data_dir: Path) -> list[SampleFile]:
    """The sample's files in ``data_dir``, in loading order (empty when there is no such folder)."""
    if not data_dir.is_dir():
        return []
    return [SampleFile(kind, fmt, path) for kind, fmt, pattern in SAMPLE_LAYOUT
            for path in sorted(data_dir.glob(pattern)) if path.is_file()]


def sample_files(settings: Settings, transport=None) -> tuple[list[SampleFile], str]:
    """The files a new load reads (the data directory's, else fetched now) and where they come from.

    Raises:
        NoSampleError: no data directory with sample files, and the online sample could not be had.
    """
    files = find_sample(settings.data_dir)
    if files:
        return files, f"the data directory {settings.data_dir}"
    try:
        files = fetch_sample(settings, transport=transport)
    except CurationError as exc:  # NetworkError, or NCBI needing an e-mail address
        raise NoSampleError(NO_SAMPLE_HELP.format(data_dir=settings.data_dir, reason=exc)) from None
    return files, f"CIViC's nightly export and PubMed (fetched now; kept in {settings.cache_dir})"


def fetch_sample(settings: Settings, transport=None, limit: int = SAMPLE_PUBMED) -> list[SampleFile]:
    """Download CIViC's evidence export and up to ``limit`` abstracts it cites; returns the files to load.

    The abstracts are those the export cites, newest PMIDs first.

    Raises:
        NetworkError: CIViC or NCBI cannot be reached.
        CurationError: NCBI needs an e-mail address (CURATION_NCBI_EMAIL) and none is set.
    """
    from curation.ingest import fetch
    from curation.ingest.civic import read_civic
    from curation.ingest.problems import Problems

    civic = fetch.fetch_civic(settings.cache_dir / "civic", transport=transport)
    cited = {r.pmid for r in read_civic(civic, Problems(civic, lenient=True)) if r.pmid}
    pmids = sorted(cited, key=int, reverse=True)[:limit]
    files = fetch.fetch_pubmed(pmids, settings.cache_dir / "pubmed", email=settings.ncbi_email,
                               api_key=settings.ncbi_api_key, transport=transport)
    return [SampleFile("kb", "civic", civic)] + [SampleFile("corpus", "pubmed-xml", path) for path in files]
