"""bench/load.py end to end on the test fixtures: concurrent AppTest sessions while a real job trains."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "load.py"


@pytest.mark.slow
def test_load_bench_small_run(tmp_path):
    out = tmp_path / "load.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--small", "--sessions", "3", "--decisions", "6", "--out", str(out)],
        capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (run,) = json.loads(out.read_text())["runs"]
    assert run["sessions"] == 3 and run["acknowledged"] == 18 and run["stored"] == 18 and run["errors"] == 0
    assert run["retrain_running"] is True
    assert 0 < run["latency_ms"]["p50"] <= run["latency_ms"]["p95"]
