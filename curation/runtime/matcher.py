"""The app's text matcher, built ahead: the store's dictionaries, with the corpus's abstracts analysed in advance.

Analysing abstracts ahead (about 2 ms each) keeps spaCy off the search path: the curator path drops from ~130 ms to
~25 ms p95 on this corpus (bench/retrieval.py). What the analysis finds that g(e, d) needs, each abstract's
abbreviations, is kept between processes (:mod:`curation.entities.kept_abbreviations`): a restart analyses only the
abstracts added since, and its first search loads no spaCy. :func:`start_matcher` does it in the background
(:class:`~curation.runtime.background.Background`), so the first page is drawn before the dictionaries are loaded.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import duckdb

from curation.entities.fuzzy_index import DamagedIndex, load_fuzzy
from curation.entities.matcher_cache import keep_abbreviations, load_matcher
from curation.entities.matching import Matcher
from curation.runtime import foreground
from curation.runtime.background import Background
from curation.runtime.exit import exiting
from curation.store.corpus import iter_documents

WARM_DOCUMENTS = 20_000  # abstracts analysed when the matcher is built (all of a corpus this size)
WARM_BATCH = 16  # abstracts analysed at a time in the background (~40 ms): a search waits for one batch at most
FOREGROUND_QUIET_S = 1.0  # the warming waits this long after a search's last analysis before its next batch


def build_matcher(con: duckdb.DuckDBPyConnection, warm_documents: int = WARM_DOCUMENTS,
                  cache_dir: Path | None = None) -> Matcher:
    """The text matcher over the store's dictionaries, with the corpus's abstracts analysed ahead.

    ``cache_dir``: where the matcher is kept between processes (:func:`~curation.entities.matcher_cache.
    load_matcher`): read from there when kept for the store as it is, else built and kept.
    """
    built = load_matcher(con, cache_dir, cache_size=warm_documents)
    texts = _texts(con, warm_documents)
    built.analyse_many(texts)
    keep_abbreviations(built, cache_dir, texts)
    return built


def _texts(con: duckdb.DuckDBPyConnection, limit: int) -> list[str]:
    texts = []
    for doc in iter_documents(con):
        texts.append(doc.text)
        if len(texts) >= limit:
            break
    return texts


def _step_aside(matcher: Matcher, quiet_s: float = FOREGROUND_QUIET_S) -> None:
    """Wait while a search uses the matcher (its last analysis less than ``quiet_s`` ago), or a curator's grade was
    just recorded (:func:`~curation.runtime.foreground.note_foreground`).

    The matcher's lock is not fair: a loop that takes it batch after batch starves a search waiting for it (measured
    after a restart: 6.8 of the first search's 24 s spent waiting there). Between batches the warming waits until
    no search has analysed a text for ``quiet_s``; a search then waits for one batch at most. Grades do not use the
    matcher, but the warming's spaCy batches hold the GIL: with 4 curators grading on a fresh store, their grades
    took 0.4-1.5 s until it ended (bench/load.py).
    """
    while not exiting() and (idle := min(time.monotonic() - matcher.last_foreground, foreground.idle_s())) < quiet_s:
        time.sleep(quiet_s - idle)


def start_matcher(open_cursor: Callable[[], duckdb.DuckDBPyConnection], cache_dir: Path | None = None,
                  warm_documents: int = WARM_DOCUMENTS) -> Background[Matcher]:
    """Build the matcher of :func:`build_matcher` in the background; it is usable before the abstracts are analysed.

    The dictionaries come first (a few seconds when ``cache_dir`` keeps this store's matcher, ~25 s otherwise:
    :func:`~curation.entities.matcher_cache.load_matcher`); then the abstracts whose abbreviations are not kept (all
    of them on a first start, those ingested since on a restart) are analysed ahead in batches of :data:`WARM_BATCH`,
    so a search made meanwhile waits for one batch, and analyses its own results itself; what they define is kept
    for the next start.

    Args:
        open_cursor: a new cursor on the store, called in the background thread (a cursor per thread).
    """

    def build() -> Matcher:
        return load_matcher(open_cursor(), cache_dir, cache_size=warm_documents, freeze=True)

    def warm(matcher: Matcher) -> None:
        for path, sha256 in list(matcher.kept_fuzzy.values()):  # file reads and hashing, mostly without the GIL
            try:
                load_fuzzy(path, sha256)
            except DamagedIndex:
                pass  # said by the normaliser when a name needs it (it fits the index again then)
        texts = _texts(open_cursor(), warm_documents)
        todo = matcher.unkept(texts)  # those whose abbreviations are kept need no analysis
        for start in range(0, len(todo), WARM_BATCH):
            if exiting():
                return
            _step_aside(matcher)
            matcher.analyse_many(todo[start:start + WARM_BATCH])
        keep_abbreviations(matcher, cache_dir, texts)

    return Background(build, "matcher", then=warm)
