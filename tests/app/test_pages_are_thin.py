"""Pages stay thin: each file of pages/ is short, and a fragment takes what it reads as arguments (a page's
variables are not there when the fragment reruns alone)."""

from __future__ import annotations

import ast
from pathlib import Path

from curation.config import PROJECT_ROOT

PAGES = PROJECT_ROOT / "pages"
MAX_LINES = 200


def _is_fragment(node: ast.FunctionDef) -> bool:
    return any("fragment" in ast.unparse(d) for d in node.decorator_list)


def fragment_globals(path: Path) -> list[str]:
    """``fragment: name`` for each module variable (not a constant, import or function) a fragment reads."""
    tree = ast.parse(path.read_text(), filename=str(path))
    variables = {t.id for node in tree.body if isinstance(node, ast.Assign | ast.AnnAssign)
                 for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                 if isinstance(t, ast.Name) and not t.id.isupper()}
    variables |= {n.id for node in tree.body if isinstance(node, ast.For | ast.With)
                  for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and _is_fragment(node):
            local = {a.arg for a in node.args.args + node.args.kwonlyargs}
            local |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            found += [f"{node.name}: {name}" for name in sorted((read - local) & variables)]
    return found


def test_every_file_of_pages_is_at_most_200_lines():
    sizes = {p.name: len(p.read_text().splitlines()) for p in sorted(PAGES.glob("*.py"))}
    assert len(sizes) > 10  # the check saw the pages
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


def test_fragments_read_no_page_globals():
    problems = {p.name: found for p in sorted(PAGES.glob("*.py")) if (found := fragment_globals(p))}
    assert problems == {}


def test_the_check_catches_a_fragment_reading_a_page_global(tmp_path):
    page = tmp_path / "page.py"
    page.write_text(
        "import streamlit as st\nLIMIT = 3\ncon = object()\n"
        "@st.fragment\ndef card(row):\n    st.write(con, row, LIMIT)\n"
    )
    assert fragment_globals(page) == ["card: con"]
