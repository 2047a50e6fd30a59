"""The process's exit waits for background work: threads stop between steps and are joined before finalisation.

A daemon thread still inside DuckDB's or torch's C++ code when the interpreter finalises is ended by a forced
unwind that aborts the process ("FATAL: exception not rethrown"): :func:`wait_at_exit` registers a thread that
the exit asks to stop (:func:`exiting` turns true) and waits for, up to :data:`EXIT_WAIT_S`.
"""

from __future__ import annotations

import atexit
import threading
import weakref

EXIT_WAIT_S = 60.0  # how long the process's exit waits for a background build to finish

_EXITING = threading.Event()
_RUNNING: weakref.WeakSet[threading.Thread] = weakref.WeakSet()
_REGISTERED = threading.Event()  # the exit hook is installed once, by the first thread that needs it
_LOCK = threading.Lock()


def _finish_at_exit() -> None:
    _EXITING.set()
    for thread in list(_RUNNING):
        thread.join(EXIT_WAIT_S)


def wait_at_exit(thread: threading.Thread) -> None:
    """Have the process's exit ask ``thread`` to stop (see :func:`exiting`) and wait for it."""
    with _LOCK:
        if not _REGISTERED.is_set():
            atexit.register(_finish_at_exit)
            _REGISTERED.set()
        _RUNNING.add(thread)


def exiting() -> bool:
    """The process is exiting: background work stops at its next step."""
    return _EXITING.is_set()
