"""When a curator last waited on the server: background work that competes with a grade (the abstracts' warming
holds the GIL; a backup holds the decision journal's lock) waits for a quiet moment."""

from __future__ import annotations

import time

_last = [0.0]  # time.monotonic() of the last grade (0: none in this process)


def note_foreground() -> None:
    """Say that a curator waits on work now (a grade is being recorded)."""
    _last[0] = time.monotonic()


def idle_s() -> float:
    """Seconds since a curator last waited on work (:func:`note_foreground`)."""
    return time.monotonic() - _last[0]
