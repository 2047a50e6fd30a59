"""bench/load.py end to end on the test fixtures: browser sessions on a real server while a real job trains."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench._browser import CHROMIUM

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_load_bench_small_run(tmp_path):
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does it)")
    out = tmp_path / "load.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.load", "--small", "--sessions", "2", "--decisions", "6", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (run,) = json.loads(out.read_text())["runs"]
    assert run["sessions"] == 2 and run["acknowledged"] == 12 and run["stored"] == 12 and run["errors"] == 0
    assert run["retrain_running"] is True and run["retrain_job_after_cancel"] == "cancelled"
    assert 0 < run["latency_ms"]["p50"] <= run["latency_ms"]["p95"]
    # The server's own time per decision, from the app's timing log: part of the click time.
    assert run["server_decisions_logged"] == 12
    assert 0 < run["server_callback_ms"]["p50"] <= run["server_decision_ms"]["p50"] <= run["latency_ms"]["p50"]
    goals = json.loads(out.read_text())["goals"]
    assert goals["lost_or_errors"] == {"value": 0, "target": 0, "op": "<=", "met": True}
    assert "server_decision_ms_p95_4_sessions" not in goals  # no run with 4 sessions here
