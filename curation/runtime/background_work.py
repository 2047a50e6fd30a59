"""Work of the whole process run in one daemon thread, whatever session started it: the sample's load.

A page's script run stops when its browser tab closes (Streamlit ends the session), so a load run in a button's
callback stopped half way with no one told. Run here instead, it goes on without any session; a second start
while it runs returns the running one, so two sessions never load at once. The process's exit asks it to stop
(:func:`~curation.runtime.exit.exiting`, which the work polls between its steps) and waits for it; what it did
not finish is the next start's to finish.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from curation.runtime.exit import wait_at_exit
from curation.runtime.heap import settle_heap


@dataclass(frozen=True)
class WorkState:
    """Where the work stands, for a person.

    Attributes:
        name: what the work is ("Loading the sample").
        step: what it does now ("biored/Train.PubTator: 12,000 rows read").
        done, total: the current step's progress (0 of 0 when it has none).
        finished: it ended (``summary`` says how, ``error`` why it stopped early).
        started, ended: when it started and ended (seconds since the epoch; ``ended`` 0 while it runs).
    """

    name: str
    step: str = ""
    done: int = 0
    total: int = 0
    finished: bool = False
    summary: str = ""
    error: str = ""
    started: float = 0.0
    ended: float = 0.0


class BackgroundWork:
    """One piece of work in a daemon thread, its state readable from any thread.

    ``run`` gets a ``report(step, done, total)`` function to say where it stands and returns a summary. ``settle``:
    settle the heap when it ends (a load's builds; not a backup, which makes nothing long-lived and would put a
    full collection in the way of the page runs around it).
    """

    def __init__(self, name: str, run: Callable[[Callable[[str, int, int], None]], str], settle: bool = True) -> None:
        self._lock = threading.Lock()
        self._settle = settle
        self._state = WorkState(name, started=time.time())
        self._thread = threading.Thread(target=self._run, args=(run,), name=name, daemon=True)
        wait_at_exit(self._thread)
        self._thread.start()

    def _report(self, step: str, done: int = 0, total: int = 0) -> None:
        with self._lock:
            self._state = replace(self._state, step=step, done=done, total=total)

    def _run(self, run: Callable[[Callable[[str, int, int], None]], str]) -> None:
        summary, error = "", ""
        try:
            summary = run(self._report)
            if self._settle:
                settle_heap()
        except Exception as exc:  # noqa: BLE001 - said in the state; what is left stays for the next start
            error = " ".join(str(exc).split())[:1000] or type(exc).__name__
            print(f"{self._thread.name} stopped: {type(exc).__name__}: {exc}", file=sys.stderr)
        with self._lock:
            self._state = replace(self._state, finished=True, summary=summary, error=error, ended=time.time())

    def state(self) -> WorkState:
        with self._lock:
            return self._state

    def running(self) -> bool:
        return not self.state().finished

    def join(self, timeout: float | None = None) -> WorkState:
        """Wait for the work to end (tests, the command line); returns its state."""
        self._thread.join(timeout)
        return self.state()


_WORK: dict[str, BackgroundWork] = {}
_LOCK = threading.Lock()


def start_work(key: str, name: str, run: Callable[[Callable[[str, int, int], None]], str],
               settle: bool = True) -> BackgroundWork:
    """Start ``run`` in the background as ``name``, unless the work of ``key`` runs already (then that one);
    ``settle`` as :class:`BackgroundWork`'s."""
    with _LOCK:
        current = _WORK.get(key)
        if current is not None and current.running():
            return current
        _WORK[key] = BackgroundWork(name, run, settle)
        return _WORK[key]


def current_work(key: str) -> BackgroundWork | None:
    """The work of ``key`` this process ran last (running or finished), None when none."""
    with _LOCK:
        return _WORK.get(key)
