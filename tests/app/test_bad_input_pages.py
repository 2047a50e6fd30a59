"""The bad-input catalogue, page level: uploads, and hostile text as the app renders it.

Companion of tests/curation/test_bad_input.py. Each case checks the message a person sees (an
``st.error`` or ``st.warning``, never an exception) and that nothing was half-written: the
store's tables are unchanged and no uploaded copy is left on disk.
"""

from __future__ import annotations

import html
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from curation.config import PROJECT_ROOT
from curation.grades import Grade
from curation.records import Document
from curation.schemas import PO
from curation.store.base import transaction
from curation.store.corpus import add_documents
from curation.store.decisions import record_decision
from curation.store.opening import open_store
from curation.workflows import ingestion

APP = str(PROJECT_ROOT / "app.py")
KB_PAGE = "pages/knowledge_base.py"
ANNOTATE_PAGE = "pages/annotate.py"
BRAF = {"Gene": "BRAF", "Variant": "V600E"}
CIVIC = (
    "molecular_profile\ttherapies\tcitation_id\tsource_type\tevidence_id\n"
    "KIT D816V\tImatinib\t1000002\tPubMed\t901\n"
)
HOSTILE = "<script>alert(1)</script> <img src=x onerror=alert(2)> *2/*2 [link](javascript:alert(3)) $x$"


def _snapshot() -> dict[str, list[tuple]]:
    from pages.parts.common import connection

    con = connection()
    tables = [row[0] for row in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()]
    return {t: con.execute(f'SELECT COLUMNS(*)::VARCHAR FROM "{t}" ORDER BY ALL').fetchall() for t in tables}


class _Tags(HTMLParser):
    def __init__(self, fragment: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.feed(fragment)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)


# --- uploads on the Knowledge base page ---------------------------------------------------------


@pytest.fixture
def uploads(tmp_path, monkeypatch) -> Path:
    """Where save_upload puts its private folders during the test (tempfile's folder)."""
    folder = tmp_path / "uploads"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _import_kb(name: str, content: bytes) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(KB_PAGE).run()
    at.file_uploader(key="kb_file").set_value((name, content, "text/tab-separated-values"))
    next(b for b in at.button if b.label == "Import knowledge base").click().run()
    assert not at.exception
    return at


def _errors(at: AppTest) -> list[str]:
    return [html.unescape(e.value) for e in at.error]


def test_a_bad_upload_is_explained_by_its_name_and_leaves_nothing(loaded_db, uploads):
    before = _snapshot()
    at = _import_kb("evidence.tsv", (CIVIC + "BRAF V600E\tVemurafenib\t10").encode())
    (error,) = _errors(at)
    assert error.startswith("Nothing was imported. evidence.tsv, line 3: has 3 fields but the header has 5")
    assert "export the file again" in error and str(uploads) not in error
    assert _snapshot() == before
    assert list(uploads.iterdir()) == []  # the private copy is gone


def test_an_upload_over_the_limit_is_refused_before_it_is_saved(loaded_db, uploads, monkeypatch):
    monkeypatch.setattr(ingestion, "MAX_UPLOAD_MB", 0.0001)  # about 105 bytes
    before = _snapshot()
    at = _import_kb("evidence.tsv", CIVIC.encode() * 4)
    (error,) = _errors(at)
    assert error.startswith("Nothing was imported. evidence.tsv: the file has ")
    assert "more than the app's upload limit of 0.0001 MB" in error
    assert "python -m curation ingest-kb" in error
    assert _snapshot() == before
    assert list(uploads.iterdir()) == []  # not even a folder was made


def test_an_upload_name_cannot_lead_out_of_its_private_folder(loaded_db, uploads, monkeypatch):
    import pages.parts.uploads

    saved: list[Path] = []
    original = pages.parts.uploads.save_upload

    def spy(upload):
        saved.append(original(upload))
        return saved[-1]

    monkeypatch.setattr(pages.parts.uploads, "save_upload", spy)
    at = _import_kb("../../../evil.tsv", CIVIC.encode())
    assert not at.error
    assert any("1 added" in html.unescape(s.value) for s in at.success)
    (path,) = saved
    assert path.name == "evil.tsv" and path.parent.parent == uploads
    assert list(uploads.iterdir()) == []
    assert not list(uploads.parent.parent.glob("**/evil.tsv"))


def test_an_upload_that_cannot_be_saved_is_a_message(loaded_db, uploads, monkeypatch):
    import errno
    from pathlib import Path

    def full(self, data):
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    before = _snapshot()
    monkeypatch.setattr(Path, "write_bytes", full)
    at = _import_kb("evidence.tsv", CIVIC.encode())
    (error,) = _errors(at)
    assert error.startswith("Nothing was imported. Could not save the upload: No space left on device")
    assert _snapshot() == before


def test_an_overlong_upload_name_is_shortened_and_imports(loaded_db, uploads):
    at = _import_kb("e" * 300 + ".tsv", CIVIC.encode())  # longer than a file name may be
    assert not at.error
    assert any("1 added" in html.unescape(s.value) for s in at.success)


# --- hostile text on the Curate and Annotate pages ---------------------------------------------


@pytest.fixture
def hostile_db(loaded_db):
    """The fixture store plus an abstract, a curator name and a relation made of hostile text."""
    con = open_store(loaded_db)
    with transaction(con):
        hostile = Document("1000009", f"BRAF V600E {HOSTILE}", f"BRAF V600E and vemurafenib. {HOSTILE}")
        add_documents(con, [hostile])
    record_decision(con, "<img src=x onerror=alert(4)> *bo*", PO, BRAF, "1000001", Grade.COMPLETE)
    relation = {"Gene": "BRAF [x](http://127.0.0.1:9/)", "Variant": "V600E"}
    record_decision(con, "<i>cy</i>", PO, relation, "1000001", Grade.COMPLETE)
    record_decision(con, "dee", PO, relation, "1000001", Grade.NOT_RELEVANT)
    con.close()
    return loaded_db


def _curate(**state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception
    return at


def test_hostile_titles_abstracts_and_names_are_escaped_on_the_curate_page(hostile_db):
    at = _curate(curator="ana", pick_Gene="BRAF", pick_Variant="V600E")
    shown = [m.value for m in at.markdown if "<style>" not in m.value]
    hostile = [m for m in shown if "PMID 1000009" in m or "alert(1)" in html.unescape(m)]
    assert len(hostile) >= 3  # the title line, a best sentence, the abstract
    for value in shown:
        assert set(_Tags(value).tags) <= {"mark"}, value
        assert "*2/*2" not in value and "[link](" not in value and "$x$" not in value
    assert any(HOSTILE in html.unescape(m) for m in hostile)
    captions = [c.value for c in at.caption if "decided" in c.value]
    assert captions and all("<img" not in c for c in captions)
    assert any("&lt;img src=x onerror=alert&#40;4&#41;&gt; &#42;bo&#42;: Complete evidence" in c for c in captions)


def test_hostile_names_and_relations_are_escaped_on_the_annotate_page(hostile_db):
    at = _curate(curator="ana")
    at.switch_page(ANNOTATE_PAGE).run()
    assert not at.exception
    lines = [m.value for m in at.markdown if "BRAF" in html.unescape(m.value) and "x](" in html.unescape(m.value)]
    assert lines and all("[x](" not in m for m in lines)  # the typed relation is text, not a link
    said = [c.value for c in at.caption if "cy" in c.value]
    assert said and all("<i>" not in c for c in said)
    assert any("&lt;i&gt;cy&lt;/i&gt;: Complete evidence; dee: Not relevant" in c for c in said)


# --- entering a partial relation and judging on the Curate page ----------------------------------


def test_a_10000_character_query_is_a_message_not_a_search(loaded_db):
    at = _curate(curator="ana", pick_Gene="B" * 10_000)
    (error,) = _errors(at)
    assert "Gene: 10,000 characters typed; a name has at most 200. Type the entity's name" in error


def test_an_answer_of_the_wrong_kind_asks_before_it_is_recorded(loaded_db):
    at = _curate(curator="ana", pick_Gene="BRAF", pick_Variant="V600E", answer_1000001="BRAF")
    before = _snapshot()
    at.button(key="complete_1000001").click().run()
    assert not at.exception
    (warning,) = [html.unescape(w.value) for w in at.warning]
    assert "'BRAF' is known as a gene name, not a chemical" in warning and "record it anyway" in warning
    assert _snapshot() == before
    at.button(key="record_anyway").click().run()
    assert not at.exception
    from pages.parts.common import connection

    rows = connection().execute("SELECT curator, pmid, grade, answer FROM decisions").fetchall()
    assert rows == [("ana", "1000001", Grade.COMPLETE, "BRAF")]


# --- upload names -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("../../etc/passwd", "passwd"),
        ("/etc/passwd", "passwd"),
        ("..\\..\\windows\\win.ini", "win.ini"),
        ("C:\\Users\\ana\\evidence.tsv", "evidence.tsv"),
        ("....//....//evidence.tsv", "evidence.tsv"),
        ("%2e%2e%2fetc%2fpasswd", "_2e_2e_2fetc_2fpasswd"),
        ("evidence.tsv\x00.png", "evidence.tsv_.png"),
        (".bashrc", "bashrc"),
        ("évidence 2018;rm -rf ~.tsv", "_vidence_2018_rm_-rf__.tsv"),
        ("..", "upload"),
        ("", "upload"),
        ("e" * 300 + ".tar.gz", "e" * 113 + ".tar.gz"),
    ],
    ids=["dotdot", "absolute", "backslashes", "windows-drive", "dot-runs", "url-encoded", "nul-byte", "hidden",
         "shell-and-unicode", "only-dots", "empty", "overlong"],
)
def test_upload_names_become_plain_file_names_inside_the_private_folder(name, expected, tmp_path, monkeypatch):
    from pages.parts.uploads import safe_upload_name, save_upload

    assert safe_upload_name(name) == expected
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    class Upload:
        def __init__(self, name: str) -> None:
            self.name = name

        def getvalue(self) -> bytes:
            return b"x"

    path = save_upload(Upload(name))
    assert path.parent.parent == tmp_path and path.name == expected and path.read_bytes() == b"x"


def test_a_curator_name_longer_than_a_decision_can_carry_is_refused_with_the_reason(loaded_db):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    (field,) = [t for t in at.sidebar.text_input if t.label == "Curator"]
    field.set_value("x" * 10_000).run()
    assert not at.exception
    assert "curator" not in at.session_state  # not taken, not cut to a partial name
    assert "10,000 characters; at most 100" in at.session_state["curator_problem"]
    fresh = AppTest.from_file(APP, default_timeout=120)  # the sidebar shows why (drawn on a first AppTest run)
    fresh.session_state["curator_problem"] = at.session_state["curator_problem"]
    fresh.run()
    assert any("at most 100: shorten it" in html.unescape(e.value) for e in fresh.error)
