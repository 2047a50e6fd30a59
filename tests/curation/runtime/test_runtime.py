"""The served app's process concerns: a value built in the background, the heap settled, the matcher built ahead."""

from __future__ import annotations

import gc
import threading
import time
import weakref

import pytest

from curation.runtime import exit as process_exit
from curation.runtime import heap
from curation.runtime.background import Background
from curation.runtime.matcher import build_matcher, start_matcher
from curation.workflows.ingestion import ingest_corpus, ingest_kb


def test_a_background_value_is_waited_for_and_its_error_raised_where_it_is_used():
    go = threading.Event()
    later = []
    value = Background(lambda: go.wait(10) and 42, "test", then=later.append)
    assert not value.ready()
    go.set()
    assert value.result() == 42 and value.ready() and not value.failed()
    value._thread.join(10)
    assert later == [42]  # ``then`` ran with the value, after it was handed out

    def broken():
        raise ValueError("no dictionaries")

    failed = Background(broken, "test", then=later.append)
    with pytest.raises(ValueError, match="no dictionaries"):
        failed.result()
    assert failed.failed() and later == [42]  # nothing to improve when the build failed


def test_the_exit_asks_background_work_to_stop_and_waits_for_it(monkeypatch):
    # A fresh exit state: the real one must stay unset for the rest of the test run.
    monkeypatch.setattr(process_exit, "_EXITING", threading.Event())
    monkeypatch.setattr(process_exit, "_RUNNING", weakref.WeakSet())
    steps, stopped = [], threading.Event()

    def warm(value):  # an improvement that runs until the process exits, one step at a time
        while not process_exit.exiting():
            steps.append(value)
            time.sleep(0.01)
        stopped.set()

    value = Background(lambda: 7, "test", then=warm)
    assert value.result() == 7
    deadline = time.monotonic() + 10
    while not steps and time.monotonic() < deadline:
        time.sleep(0.01)
    assert steps and value._thread.is_alive()
    process_exit._finish_at_exit()  # what the interpreter's exit runs
    assert stopped.is_set() and not value._thread.is_alive()


class _Node:
    def __init__(self) -> None:
        self.other = self  # a cycle: only the cyclic collector frees it


def test_what_a_background_build_made_is_kept_out_of_full_collections_and_freed_once_replaced():
    gc.unfreeze()
    try:
        built = Background(lambda: [_Node() for _ in range(50_000)], "test")
        nodes = built.result()
        built._thread.join(10)
        assert gc.get_freeze_count() >= len(nodes)  # a full pass no longer walks them
        gone = weakref.ref(nodes[0])
        del nodes, built
        heap.settle_heap()  # the next build's settle frees the replaced value's cycles
        assert gone() is None
    finally:
        gc.unfreeze()


class _SetsWhileSettling(threading.Event):
    """The slow-pass event, noting each ``set`` made while ``inside`` says a settle of the test's own is running."""

    def __init__(self) -> None:
        super().__init__()
        self.inside = False
        self.sets_inside = 0

    def set(self) -> None:
        self.sets_inside += self.inside
        super().set()


def test_a_slow_full_collection_gets_the_heap_settled_in_the_background(monkeypatch):
    monkeypatch.setattr(heap, "SLOW_PASS_S", 0.0)  # every full pass counts as slow
    monkeypatch.setattr(heap, "SETTLE_EVERY_S", 0.1)
    slow_pass = _SetsWhileSettling()
    monkeypatch.setattr(heap, "_slow_pass", slow_pass)
    # What each settle of the settler thread left frozen, read in that thread right after it: the count is
    # not polled from here, where a settle running meanwhile (unfreeze, collect, freeze) reads as 0.
    settled = threading.Condition()
    frozen_after: list[int] = []
    settle = heap.settle_heap

    def noted_settle(full: bool = True) -> None:
        settle(full)
        if threading.current_thread().name == "settle-heap":
            with settled:
                frozen_after.append(gc.get_freeze_count())
                settled.notify_all()

    monkeypatch.setattr(heap, "settle_heap", noted_settle)
    # An app run in this process (a page test) may have installed the watcher already; its settler can be
    # asleep for the unpatched SETTLE_EVERY_S. This test watches with a settler of its own.
    while heap._time_full_passes in gc.callbacks:
        gc.callbacks.remove(heap._time_full_passes)
    gc.unfreeze()
    try:
        heap.watch_collector()
        heap.watch_collector()  # idempotent: one callback
        assert gc.callbacks.count(heap._time_full_passes) == 1
        grown = [_Node() for _ in range(50_000)]  # built outside any Background (as a first search's index)
        gc.collect()  # a full pass
        with settled:  # generous: a loaded machine may take seconds for the settle's full pass
            assert settled.wait_for(lambda: any(n >= len(grown) for n in frozen_after), timeout=120), frozen_after
        slow_pass.inside = True
        try:
            settle()  # a settle's own full pass is slow by design: it does not ask for another
        finally:
            slow_pass.inside = False
        assert slow_pass.sets_inside == 0
    finally:
        gc.callbacks.remove(heap._time_full_passes)  # the rest of the test run is not settled behind its back
        gc.unfreeze()


def test_the_background_matcher_finds_what_the_built_one_finds(con, fixtures, tmp_path):
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    texts = [row[0] for row in con.execute("SELECT title || ' ' || abstract FROM documents").fetchall()]
    built = build_matcher(con)
    background = start_matcher(con.cursor, tmp_path / "lexicon")
    matcher = background.result()
    background._thread.join(30)  # the abstracts analysed ahead
    assert matcher.lexicon.sizes() == built.lexicon.sizes()
    for text in texts:
        assert matcher.find_all(text) == built.find_all(text)
    assert list((tmp_path / "lexicon").glob("excluded-*.json"))


def test_a_first_build_asks_for_a_partial_settle_and_a_second_of_the_same_name_for_a_full_one(monkeypatch):
    asked: list[bool] = []
    monkeypatch.setattr("curation.runtime.background.settle_soon", lambda replaced: asked.append(replaced))
    monkeypatch.setattr("curation.runtime.background._BUILT", set())
    for _ in range(2):
        built = Background(lambda: [1, 2, 3], "test-settle")
        built.result()
        built._thread.join(10)
    assert asked == [False, True]  # nothing replaced at first: no pass over every object, which pauses every session


def test_a_grade_makes_the_abstracts_warming_step_aside():
    from types import SimpleNamespace

    from curation.runtime import matcher as runtime_matcher
    from curation.runtime.foreground import note_foreground

    no_search = SimpleNamespace(last_foreground=0.0)  # no search has used the matcher
    note_foreground()  # what workflows.curate.decide says first
    started = time.monotonic()
    runtime_matcher._step_aside(no_search, quiet_s=0.3)
    assert time.monotonic() - started >= 0.25


def test_background_work_waits_for_its_delay_then_for_a_pause_in_the_curators_work():
    import threading

    from curation.runtime import foreground

    started = time.monotonic()
    assert foreground.wait_for_quiet(0.3, 0.0, 10.0, lambda: False, poll_s=0.01)
    assert time.monotonic() - started >= 0.3  # the delay alone: nobody worked

    busy = threading.Event()

    def curator() -> None:  # a search or grade every 0.05 s for 0.6 s, then a pause
        end = time.monotonic() + 0.6
        while time.monotonic() < end:
            foreground.note_foreground()
            time.sleep(0.05)
        busy.set()

    threading.Thread(target=curator).start()
    time.sleep(0.05)
    assert foreground.wait_for_quiet(0.0, 0.2, 10.0, lambda: False, poll_s=0.01)
    assert busy.is_set() and foreground.idle_s() >= 0.2  # it began in the pause, not while the curator worked

    foreground.note_foreground()
    started = time.monotonic()
    assert foreground.wait_for_quiet(0.0, 60.0, 0.3, lambda: False, poll_s=0.01)  # no pause came: at most longest_s
    assert 0.25 <= time.monotonic() - started < 5

    assert not foreground.wait_for_quiet(60.0, 0.0, 0.0, lambda: True, poll_s=0.01)  # the process exits first
