"""When a curator last waited on the server: background work that competes with a grade or a search (the abstracts'
warming holds the GIL; a backup holds the decision journal's lock; the learned parts after a load export the store
and build a version in the server's process) waits for a quiet moment."""

from __future__ import annotations

import time
from collections.abc import Callable

_last = [0.0]  # time.monotonic() of the last grade or search (0: none in this process)


def note_foreground() -> None:
    """Say that a curator waits on work now (a grade is being recorded, a search is running)."""
    _last[0] = time.monotonic()


def idle_s() -> float:
    """Seconds since a curator last waited on work (:func:`note_foreground`)."""
    return time.monotonic() - _last[0]


def wait_for_quiet(delay_s: float, quiet_s: float, longest_s: float, stop: Callable[[], bool],
                   poll_s: float = 0.2) -> bool:
    """Wait ``delay_s``, then until no curator has waited on work for ``quiet_s`` (:func:`idle_s`), but no longer
    than ``longest_s`` after the delay (curators working without a pause do not hold the work back for ever).

    Returns:
        True when the moment came; False when ``stop`` said so first (the process is exiting).
    """
    begin = time.monotonic() + delay_s
    latest = begin + longest_s
    while (now := time.monotonic()) < begin or (idle_s() < quiet_s and now < latest):
        if stop():
            return False
        time.sleep(poll_s)
    return True
