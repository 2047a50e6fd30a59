"""Heap settling: keep what the builds made (millions of long-lived objects) out of the collector's full passes.

Each full pass walks every tracked object with the GIL held: with the dictionaries loaded that took 0.5–1 s,
every few seconds while curators click (bench/load.py), and every session waited for it. :func:`settle_heap`
collects, then freezes what exists now; :func:`watch_collector` settles again in the background whenever a full pass
was slow, or a build asked for it (:func:`settle_soon`: a build freezes what it made at once, and the settle that
frees what it replaced comes after the process's first seconds, off a restart's first search).
"""

from __future__ import annotations

import gc
import threading
import time

from curation.runtime.exit import exiting

SLOW_PASS_S = 0.05  # a full collection longer than this: long-lived objects piled up since the last settle
SETTLE_EVERY_S = 30.0  # at most one settle in this time
_slow_pass = threading.Event()  # a settle is due: a full pass was slow, or a build asked (settle_soon)
_replaced = threading.Event()  # a build replaced an earlier one's value: the next settle unfreezes, to free it
_settling = threading.Event()  # the settle's own full pass is slow by design: it does not ask for another
# One settle at a time: two at once (a build's and the settler thread's) are two full passes for nothing, and the
# first to end cleared ``_settling`` while the other's pass still ran, which then asked for yet another settle.
_settle_lock = threading.Lock()
_pass_started = [0.0]


def settle_heap(full: bool = True) -> None:
    """Keep what was just built (dictionaries, indexes, models) out of the garbage collector's full passes.

    Frozen objects are skipped; a pass then walks the page runs' short-lived objects. ``full``: unfreeze first, so
    that this collection frees what an earlier build left behind (a replaced matcher) and nothing stays frozen for
    good; it walks every object with the GIL held (1-3 s on 2 busy cores with the dictionaries loaded, every
    session waiting). Otherwise only what is not frozen yet is collected and frozen.
    """
    with _settle_lock:
        _settling.set()
        try:
            if full:
                gc.unfreeze()
            gc.collect()
            gc.freeze()
        finally:
            _settling.clear()


def settle_soon(replaced: bool = True) -> None:
    """Ask the settler thread of :func:`watch_collector` for a settle (once the process's first seconds are over);
    ``replaced``: a build replaced an earlier value, so the settle is a full one (:func:`settle_heap`)."""
    if replaced:
        _replaced.set()
    _slow_pass.set()


def _time_full_passes(phase: str, info: dict) -> None:
    if info.get("generation") != 2 or _settling.is_set():
        return
    if phase == "start":
        _pass_started[0] = time.perf_counter()
    elif time.perf_counter() - _pass_started[0] > SLOW_PASS_S:
        _slow_pass.set()


def _settler() -> None:
    # Not in the process's first seconds: the start's builds settle what they made themselves, and a settle then
    # (a full collection with the GIL held, 2-5 s while everything loads) held up the first search after a restart.
    time.sleep(SETTLE_EVERY_S)
    while not exiting():
        if _slow_pass.wait(timeout=1.0):
            _slow_pass.clear()
            full = _replaced.is_set()  # a slow pass alone: what piled up is not frozen yet, a partial settle sees it
            _replaced.clear()
            settle_heap(full)
            time.sleep(SETTLE_EVERY_S)


def watch_collector() -> None:
    """Settle the heap again (in a daemon thread, at most every :data:`SETTLE_EVERY_S`) whenever a full
    collection took longer than :data:`SLOW_PASS_S`: what the builds did not cover (indexes a first search
    builds, caches that grow) is frozen too. Idempotent."""
    if _time_full_passes in gc.callbacks:
        return
    gc.callbacks.append(_time_full_passes)
    threading.Thread(target=_settler, name="settle-heap", daemon=True).start()
