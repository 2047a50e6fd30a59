"""Security defaults that docs/SECURITY.md describes, checked where they are set.

- .streamlit/config.toml binds 127.0.0.1, answers only to localhost host names, keeps XSRF and
  CORS protection on and sets the upload limit the Knowledge base page also enforces;
- no secret is tracked by git, and .streamlit/secrets.toml is ignored;
- the pages (and pages.parts) hand Streamlit raw HTML only from values built by pages.parts.highlight (escaped);
- nothing loads pickles.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from curation.workflows.ingestion import MAX_UPLOAD_MB

ROOT = Path(__file__).resolve().parent.parent

# What a leaked credential looks like. A value written as <placeholder> (docs/SECURITY.md's
# examples) is not one.
SECRET_PATTERNS = {
    "private key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    "AWS access key id": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "GitHub token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    "Slack token": re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b"),
    "Google API key": re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    "assigned secret": re.compile(
        r"(?i)\b(?:api[_-]?key|secret[_-]?key|client[_-]?secret|cookie[_-]?secret|aws_secret_access_key|password"
        r"|passwd|token)\b[\"']?\s*[:=]\s*[\"']([^\"'\s<>]{8,})[\"']"
    ),
}


def find_secrets(text: str) -> list[str]:
    """The kinds of secret found in ``text``."""
    return [kind for kind, pattern in SECRET_PATTERNS.items() if pattern.search(text)]


def _tracked_files() -> list[Path]:
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no tracked files to scan")
    out = subprocess.run([git, "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60).stdout
    return [ROOT / name for name in out.decode().split("\0") if name]


def test_the_app_binds_localhost_with_xsrf_protection_and_an_upload_limit():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    server = config["server"]
    assert server["address"] == "127.0.0.1"
    assert server["enableXsrfProtection"] is True
    # CORS on: XSRF tokens do not guard the WebSocket, the origin check does.
    assert server.get("enableCORS", True) is True
    # A DNS-rebinding page passes the same-origin check; only the Host allow-list refuses it.
    assert server["allowedHosts"] == ["localhost", "127.0.0.1"]
    assert server["maxUploadSize"] == MAX_UPLOAD_MB  # Streamlit's limit and the Knowledge base page's agree
    assert config["browser"]["gatherUsageStats"] is False


def test_the_secret_patterns_catch_what_they_are_for():
    planted = {
        "private key": "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIE",
        "AWS access key id": "key = AKIA" + "ABCDEFGHIJKLMNOP",
        "assigned secret": 'api_key = "' + "0123456789abcdef0123" + '"',
    }
    for kind, text in planted.items():
        assert kind in find_secrets(text), kind
    assert find_secrets('cookie_secret = "' + "s3cr3t-value-1234" + '"') == ["assigned secret"]
    # Placeholders, environment variable names and empty values are not secrets.
    assert find_secrets('client_secret = "<from your identity provider>"') == []
    assert find_secrets("CURATION_NCBI_API_KEY=") == []
    assert find_secrets('api_key = ""') == []


def test_no_secret_is_tracked():
    leaks = []
    for path in _tracked_files():
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # images
        leaks += [f"{path.relative_to(ROOT)}: {kind}" for kind in find_secrets(text)]
    assert leaks == []


def test_streamlit_secrets_are_ignored_and_not_tracked():
    tracked = {str(p.relative_to(ROOT)) for p in _tracked_files()}
    assert ".streamlit/secrets.toml" not in tracked
    ignored = subprocess.run(["git", "check-ignore", "-q", ".streamlit/secrets.toml"], cwd=ROOT, timeout=60)
    assert ignored.returncode == 0, ".gitignore must list .streamlit/secrets.toml"


# Values a page may put into raw HTML besides those named *_html (built by pages.parts.highlight,
# which escapes every character of text): each is a number, a validated PMID or a constant.
RAW_HTML_ALLOWED = {
    "HIGHLIGHT_CSS": "a constant of pages/parts/result_card.py",
    "marker": "'▶ ' or ''",
    "row.rank": "an int",
    "row.pmid": "digits (PMIDs are checked by every loader and by record_decision)",
    "entry.pmid": "digits, as row.pmid",
    "paper.pmid": "digits, as row.pmid (a suggestion's supporting abstract)",
    "paper.rank": "an int",
    "paper.probability": "a float, formatted",
}


def _raw_html_calls(path: Path) -> list[ast.Call]:
    tree = ast.parse(path.read_text(), filename=str(path))
    return [
        node for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and any(k.arg == "unsafe_allow_html" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
                for k in node.keywords)
    ]


def _values(node: ast.expr) -> list[ast.expr]:
    """The expressions whose value ends up in the string ``node`` builds."""
    if isinstance(node, ast.JoinedStr):
        return [v.value for v in node.values if isinstance(v, ast.FormattedValue)]
    if isinstance(node, ast.Constant):
        return []
    return [node]


def _constant_html_problems(path: Path) -> list[str]:
    """``st.html`` may only render a module-level string constant (a fixed script or style: no value of the
    page, no f-string); ``components.html`` is not used at all."""
    text = path.read_text()
    problems = [f"{path.name}: {f} renders HTML unchecked" for f in ("components.html(", "components.v1.html(")
                if f in text]
    tree = ast.parse(text, filename=str(path))
    constants = {t.id for node in tree.body if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                 and isinstance(node.value.value, str) for t in node.targets if isinstance(t, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "st.html":
            arg = node.args[0] if node.args else None
            if not (isinstance(arg, ast.Name) and arg.id in constants):
                problems.append(f"{path.name}:{node.lineno}: st.html renders '{ast.unparse(arg) if arg else ''}', "
                                "not a module-level string constant")
    return problems


def test_pages_put_only_escaped_values_into_raw_html():
    sources = [*sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "pages/parts").glob("*.py")), ROOT / "app.py"]
    seen, problems = 0, []
    for path in sources:
        problems += _constant_html_problems(path)
        for call in _raw_html_calls(path):
            seen += 1
            for value in _values(call.args[0]):
                name = ast.unparse(value)
                if not (name.endswith("_html") or name in RAW_HTML_ALLOWED):
                    problems.append(f"{path.name}:{call.lineno}: '{name}' goes into raw HTML unescaped")
    assert seen >= 5  # the check looked at the pages' raw-HTML calls
    assert problems == []


def test_raw_html_check_catches_an_unescaped_value(tmp_path):
    page = tmp_path / "page.py"
    page.write_text('import streamlit as st\ntitle = "x"\nst.markdown(f"<b>{title}</b>", unsafe_allow_html=True)\n')
    (call,) = _raw_html_calls(page)
    assert [ast.unparse(v) for v in _values(call.args[0])] == ["title"]


def test_nothing_loads_pickles():
    pattern = re.compile(
        r"\bimport pickle\b|\bpickle\.loads?\(|\btorch\.load\(|\bjoblib\.load\(|allow_pickle\s*=\s*True"
    )
    found = [
        f"{path.relative_to(ROOT)}"
        for folder in ("curation", "index", "pages")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if pattern.search(path.read_text())
    ]
    assert found == []


def test_st_html_check_catches_a_value_of_the_page(tmp_path):
    page = tmp_path / "page.py"
    page.write_text('import streamlit as st\nSCRIPT = "<script>1</script>"\nname = "x"\n'
                    'st.html(SCRIPT, unsafe_allow_javascript=True)\nst.html(f"<b>{name}</b>")\n')
    problems = _constant_html_problems(page)
    assert len(problems) == 1 and "page.py:5" in problems[0]
