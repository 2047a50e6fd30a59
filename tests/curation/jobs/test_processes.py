"""pid_alive: running, exited, zombie, and a recycled pid that is not the process meant."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from curation.jobs.processes import pid_alive


def test_running_exited_and_recycled():
    assert pid_alive(os.getpid())
    assert not pid_alive(None) and not pid_alive(0) and not pid_alive(-3)
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "curation.jobs.worker"])
    try:
        deadline = time.time() + 10  # until the forked child has exec'd (before that it shows our command line)
        while not pid_alive(proc.pid, command_contains=b"curation.jobs.worker") and time.time() < deadline:
            time.sleep(0.05)
        assert pid_alive(proc.pid, command_contains=b"curation.jobs.worker")
        assert not pid_alive(proc.pid, command_contains=b"something else")  # a pid reused by another program
    finally:
        proc.kill()
        proc.wait()
    assert not pid_alive(proc.pid)


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="zombies are told apart through /proc")
def test_a_zombie_is_not_alive():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.time() + 10
    while time.time() < deadline:  # exited but not reaped: a zombie
        with open(f"/proc/{proc.pid}/stat") as handle:
            if handle.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
        time.sleep(0.05)
    try:
        assert not pid_alive(proc.pid)
    finally:
        proc.wait()
