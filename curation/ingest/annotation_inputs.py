"""Any corpus to annotate, read: plain text, JSON lines or PubTator files → documents with checked, unique ids.

Inputs (``python -m curation annotate``):

* ``text``: plain text; documents are separated by one or more blank lines (a file without blank
  lines is one document). A document's id is ``<file stem>_<n>`` (n from 1); line breaks and tabs
  inside it become spaces (one character each, so offsets also count into the original block).
* ``jsonl``: one object per line, ``{"pmid", "title", "abstract"}`` or ``{"id", "text"}``.
* ``pubtator``: PubTator files (titles and abstracts; their own mentions and relations are not copied, nor
  checked against the text; a malformed document is skipped and named, the others are read).

Bad input stops the read with the file and line (a PubTator file stops it only when no document of it can be read).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from curation.errors import InputError
from curation.ingest.problems import Problems
from curation.ingest.pubtator import read_pubtator
from curation.records import Document, one_line

INPUT_FORMATS = ("text", "jsonl", "pubtator")
_BAD_ID = re.compile(r"[\s|]")
_BLANK = re.compile(r"\n[ \t\r]*\n")


def guess_format(path: Path) -> str:
    """The input format a file's name suggests (``.jsonl`` / ``.json``, ``pubtator``, else text)."""
    name = path.name.lower()
    if name.endswith((".jsonl", ".json")):
        return "jsonl"
    if "pubtator" in name:
        return "pubtator"
    return "text"


def _check_id(doc_id: str, path: Path, line: int | None, seen: dict[str, str]) -> None:
    if not doc_id or _BAD_ID.search(doc_id):
        raise InputError(str(path), line, "id", f"'{doc_id}' cannot be a document id (it must be non-empty, without "
                                                "spaces, tabs or '|')")
    if doc_id in seen:
        raise InputError(str(path), line, "id", f"document id '{doc_id}' already used ({seen[doc_id]}); ids must "
                                                "be unique across the inputs")
    seen[doc_id] = f"{path}" + (f", line {line}" if line else "")


def read_text(path: Path, seen: dict[str, str]) -> list[Document]:
    """Blank-line separated documents of a plain-text file."""
    try:
        with open(path, encoding="utf-8") as handle:
            content = handle.read()
    except UnicodeDecodeError as exc:
        raise InputError(str(path), None, None, f"not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    documents = []
    for block in (b.strip() for b in _BLANK.split(content.replace("\r\n", "\n"))):
        if block:
            doc_id = f"{path.name.split('.')[0]}_{len(documents) + 1}"
            _check_id(doc_id, path, None, seen)
            documents.append(Document(doc_id, "", one_line(block), source=path.name))
    return documents


def read_jsonl_documents(path: Path, seen: dict[str, str]) -> list[Document]:
    """``{"pmid", "title", "abstract"}`` or ``{"id", "text"}`` objects, one per line."""
    documents = []
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except UnicodeDecodeError as exc:
        raise InputError(str(path), None, None, f"not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(str(path), number, None, f"not valid JSON ({exc.msg} at column {exc.colno}); expected "
                             'one {"pmid", "title", "abstract"} or {"id", "text"} object per line') from None
        if not isinstance(obj, dict):
            raise InputError(str(path), number, None, 'expected a JSON object ({"id", "text"}) per line')
        doc_id = str(obj.get("pmid", obj.get("id", ""))).strip()
        title = obj.get("title", "")
        text = obj.get("abstract", obj.get("text"))
        if not isinstance(text, str) or not isinstance(title, str):
            raise InputError(str(path), number, "text", 'needs a string "abstract" or "text" (and "title", if any, '
                                                        "a string)")
        _check_id(doc_id, path, number, seen)
        documents.append(Document(doc_id, one_line(title.strip()), one_line(text.strip()),
                                  source=path.name))
    return documents


def read_inputs(paths: Sequence[Path], fmt: str | None = None,
                on_skipped: Callable[[str], None] | None = None) -> list[Document]:
    """Every document of the input files, in order.

    Args:
        fmt: one of :data:`INPUT_FORMATS` for every file, or None to guess each from its name.
        on_skipped: called with the message naming each PubTator document left out (file, line, PMID, why).

    Raises:
        InputError: a missing file, bad JSON, a PubTator file with no readable document, a repeated id; names
            file and line.
    """
    seen: dict[str, str] = {}
    documents: list[Document] = []
    for path in map(Path, paths):
        if not path.is_file():
            raise InputError(str(path), None, None, "file not found" if not path.exists() else "is not a file")
        kind = fmt or guess_format(path)
        if kind == "text":
            documents += read_text(path, seen)
        elif kind == "jsonl":
            documents += read_jsonl_documents(path, seen)
        elif kind == "pubtator":
            problems = Problems(path)
            for doc in read_pubtator(path, problems, gold=False):
                _check_id(doc.pmid, path, None, seen)
                documents.append(Document(doc.pmid, doc.title, doc.abstract, source=doc.source))
            for message in problems.skipped if on_skipped is not None else ():
                on_skipped(message)
        else:
            raise InputError(str(path), None, None, f"unknown input format '{kind}'; use one of {INPUT_FORMATS}")
    return documents
