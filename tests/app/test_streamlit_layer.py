"""Only app.py and pages/ (their parts, pages.parts, included) import streamlit, and nothing in curation/ or index/
imports pages (pyproject.toml's import contracts, checked by ``lint-imports``): a domain module that draws, or uses a
page's helper, breaks them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from curation.config import PROJECT_ROOT


def _lint_imports(root: Path) -> subprocess.CompletedProcess:
    linter = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    return subprocess.run([linter, "--no-cache"], cwd=root, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})


def test_a_domain_module_importing_streamlit_or_a_page_part_breaks_the_contracts(tmp_path):
    for name in ("curation", "index", "pages"):
        shutil.copytree(PROJECT_ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PROJECT_ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "curation" / "errors_shown.py").write_text("import streamlit  # noqa: F401\n")
    (tmp_path / "index" / "drawn.py").write_text("import streamlit  # noqa: F401\n")
    (tmp_path / "curation" / "workflows" / "card.py").write_text("from pages.parts import highlight  # noqa: F401\n")
    result = _lint_imports(tmp_path)
    assert result.returncode != 0
    assert "- curation.errors_shown -> streamlit" in result.stdout
    assert "- index.drawn -> streamlit" in result.stdout
    assert "curation.workflows.card -> pages.parts.highlight" in result.stdout
