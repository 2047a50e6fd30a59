"""The house lint rules (ruff: E, F, W, I, UP, B; pyproject.toml) hold across the tree."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_is_clean():
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    result = subprocess.run([ruff, "check", "."], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:]


def _lint_imports(root: Path) -> subprocess.CompletedProcess:
    linter = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    return subprocess.run([linter, "--no-cache"], cwd=root, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})


def test_import_contract_holds():
    """pages -> curation.workflows -> the rest; index never imports curation; no cycles (pyproject.toml)."""
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout[-4000:]


def test_import_contract_catches_a_violation(tmp_path):
    for name in ("curation", "index", "pages"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    fusion = tmp_path / "index" / "fusion.py"
    fusion.write_text(fusion.read_text() + "\nfrom curation import errors  # noqa: E402,F401\n")
    result = _lint_imports(tmp_path)
    assert result.returncode != 0
    assert "index is not allowed to import curation" in result.stdout
