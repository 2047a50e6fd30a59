"""Whether a process is still running, by pid (the backup's and the retraining worker's liveness checks)."""

from __future__ import annotations

import os
from pathlib import Path


def pid_alive(pid: int | None, command_contains: bytes = b"") -> bool:
    """Whether process ``pid`` runs (not exited, not a zombie).

    Args:
        pid: the process id (None or ≤ 0: not alive).
        command_contains: when given, a process whose command line lacks it is a recycled pid,
            not the one meant (checked where ``/proc`` exists).
    """
    if not pid or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: it exists
    stat = Path(f"/proc/{pid}/stat")
    if not stat.exists():
        return True  # no /proc: the signal check is all there is
    try:
        if stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return False
        return not command_contains or command_contains in Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, IndexError):
        return False
