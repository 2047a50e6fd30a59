"""What the app keeps alive: a value built in the background, and the matcher built that way."""

from __future__ import annotations

import threading

import pytest

from curation.workflows import serving
from curation.workflows.ingestion import ingest_corpus, ingest_kb


def test_a_background_value_is_waited_for_and_its_error_raised_where_it_is_used():
    go = threading.Event()
    later = []
    value = serving.Background(lambda: go.wait(10) and 42, "test", then=later.append)
    assert not value.ready()
    go.set()
    assert value.result() == 42 and value.ready() and not value.failed()
    value._thread.join(10)
    assert later == [42]  # ``then`` ran with the value, after it was handed out

    def broken():
        raise ValueError("no dictionaries")

    failed = serving.Background(broken, "test", then=later.append)
    with pytest.raises(ValueError, match="no dictionaries"):
        failed.result()
    assert failed.failed() and later == [42]  # nothing to improve when the build failed


def test_the_background_matcher_finds_what_the_built_one_finds(con, fixtures, tmp_path):
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    texts = [row[0] for row in con.execute("SELECT title || ' ' || abstract FROM documents").fetchall()]
    built = serving.build_matcher(con)
    background = serving.start_matcher(con.cursor, tmp_path / "lexicon")
    matcher = background.result()
    background._thread.join(30)  # the abstracts analysed ahead
    assert matcher.lexicon.sizes() == built.lexicon.sizes()
    for text in texts:
        assert matcher.find_all(text) == built.find_all(text)
    assert list((tmp_path / "lexicon").glob("excluded-*.json"))
