"""Pages stay thin: pages/ holds app.py's pages and nothing else (their helpers are pages.parts's), each is short,
and a fragment takes what it reads as arguments (a page's variables are not there when the fragment reruns alone)."""

from __future__ import annotations

import ast
from pathlib import Path

from curation.config import PROJECT_ROOT

PAGES = PROJECT_ROOT / "pages"
APP = PROJECT_ROOT / "app.py"
MAX_LINES = 200


def navigated_scripts(app: Path) -> set[str]:
    """The scripts ``app`` names as pages: each string constant of the form ``pages/<name>.py``."""
    tree = ast.parse(app.read_text(), filename=str(app))
    return {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and node.value.startswith("pages/") and node.value.endswith(".py")}


def not_pages(folder: Path, app: Path) -> list[str]:
    """What ``folder`` holds besides the scripts ``app`` navigates to and the ``parts/`` package of their helpers
    (Streamlit lists every ``.py`` file directly in pages/ as a page, never a subfolder's)."""
    named = navigated_scripts(app)
    return sorted(p.name for p in folder.iterdir()
                  if p.name not in ("__pycache__", "parts") and f"pages/{p.name}" not in named)


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


def test_pages_holds_the_pages_of_app_py_and_nothing_else():
    assert len(navigated_scripts(APP)) >= 6  # the check read app.py's navigation
    assert not_pages(PAGES, APP) == []


def test_the_check_catches_a_helper_module_in_pages(tmp_path):
    (tmp_path / "pages").mkdir()
    for name in ("curate.py", "common.py", "notes.txt"):
        (tmp_path / "pages" / name).write_text("x = 1\n")
    (tmp_path / "app.py").write_text('import streamlit as st\nst.navigation([st.Page("pages/curate.py")]).run()\n')
    assert not_pages(tmp_path / "pages", tmp_path / "app.py") == ["common.py", "notes.txt"]


def test_every_file_of_pages_is_at_most_200_lines():
    sizes = {p.name: len(p.read_text().splitlines()) for p in sorted(PAGES.glob("*.py"))}
    assert len(sizes) >= 6  # the check saw the pages
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
