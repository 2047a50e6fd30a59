"""A value built once in a daemon thread, so that a page can be drawn before it is ready."""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from curation.runtime.exit import exiting, wait_at_exit
from curation.runtime.heap import settle_soon

T = TypeVar("T")
_BUILT: set[str] = set()  # the names of the values built in this process (a second build of one replaces it)
_BUILT_LOCK = threading.Lock()


class Background(Generic[T]):
    """A value built once in a daemon thread, so that a page can be drawn before it is ready.

    ``build`` runs at once in its own thread; :meth:`result` waits for it (and raises what it raised).
    ``then``, when given, runs in the same thread with the built value after :meth:`result` is released
    (work that improves the value without being needed to use it, such as warming a cache); it should
    return early once :func:`~curation.runtime.exit.exiting` is true. The process's exit waits for the thread
    (up to :data:`~curation.runtime.exit.EXIT_WAIT_S`). What the build made is frozen out of the collector's full
    passes before :meth:`result` is released (``gc.freeze``: no pass, no pause), and a settle that frees what it
    replaced is asked for after ``then`` (:func:`~curation.runtime.heap.settle_soon`): a full collection here (1-3 s
    with the GIL held on 2 busy cores) held up the first search after a restart, which waits for the value.
    """

    def __init__(self, build: Callable[[], T], name: str, then: Callable[[T], None] | None = None) -> None:
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(build, then), name=name, daemon=True)
        wait_at_exit(self._thread)
        self._thread.start()

    def _run(self, build: Callable[[], T], then: Callable[[T], None] | None) -> None:
        try:
            self._value = build()
            gc.freeze()  # what was built: out of the full passes now, without one (moves lists, walks nothing)
        except BaseException as exc:  # handed to whoever waits for the value
            self._error = exc
        finally:
            self._done.set()
        if then is not None and self._error is None and not exiting():
            try:
                then(self._value)  # type: ignore[arg-type]
            except Exception as exc:  # an optimisation that failed: the value is still good
                print(f"{self._thread.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        if not exiting():
            with _BUILT_LOCK:  # a first build replaced nothing: no full settle (a 1-3 s pause of every session)
                replaced = self._thread.name in _BUILT
                _BUILT.add(self._thread.name)
            settle_soon(replaced=replaced)

    def ready(self) -> bool:
        """Built (or failed): :meth:`result` returns at once."""
        return self._done.is_set()

    def failed(self) -> bool:
        """The build raised (:meth:`result` raises it)."""
        return self._done.is_set() and self._error is not None

    def result(self) -> T:
        """The value, waiting for the build when it is still running."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]
