"""`python -m curation bench NAME` runs bench/NAME.py as its own process (the package never imports bench/)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from curation.cli.bench import BENCHMARKS

ROOT = Path(__file__).resolve().parents[3]


def test_every_benchmark_named_by_the_cli_exists():
    assert sorted(p.stem for p in (ROOT / "bench").glob("*.py") if not p.stem.startswith("_")) == sorted(BENCHMARKS)


def test_bench_runs_the_script_as_a_process_with_its_arguments():
    result = subprocess.run([sys.executable, "-m", "curation", "bench", "matching", "--help"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "--min-hits" in result.stdout  # bench/matching.py's own options


def test_the_package_never_imports_bench():
    for path in (ROOT / "curation").rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n == "bench" or n.startswith("bench.") for n in names), path
        assert "spec_from_file_location" not in path.read_text(), path
