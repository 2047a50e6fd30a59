"""JSON-lines corpora: one ``{"pmid", "title", "abstract"}`` object per line.

HoC-style lines with only ``{"pmid", "text"}`` are accepted: the text becomes the abstract and the
title stays empty. Such text comes tokenised, with spaces around punctuation ("BRAF ( V600E ) ,");
it is put back as written (:func:`detokenise`): those corpora carry no mention offsets to keep.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path

from curation.ingest.limits import document_problem
from curation.ingest.problems import Problems
from curation.ingest.tabular import open_text_lines, valid_pmid
from curation.records import Document

_SPACE_BEFORE = re.compile(r"\s+([,.;:!?%)\]}])")  # "word ," -> "word,"; "( x )" -> "( x)"
_SPACE_AFTER = re.compile(r"([(\[{])\s+")  # "( x" -> "(x"
_CLITIC = re.compile(r"\s+('s|'re|'ve|'ll|'d|n't)\b", re.IGNORECASE)  # "cell 's" -> "cell's"


def detokenise(text: str) -> str:
    """Undo a tokeniser's spaces around punctuation ("receptor ( GHS-R ) . GHS-R is" → "receptor (GHS-R). GHS-R
    is") and the HTML entities it left ("P &lt ; 0.05" → "P < 0.05")."""
    text = _SPACE_BEFORE.sub(r"\1", text)
    text = _SPACE_AFTER.sub(r"\1", text)
    return html.unescape(_CLITIC.sub(r"\1", text))


def read_jsonl(path: Path, problems: Problems) -> Iterator[Document]:
    """Read documents from a JSON-lines file; a PMID seen twice is reported."""
    path = Path(path)
    source = path.name.split(".")[0]
    seen: dict[str, int] = {}
    for number, line in open_text_lines(path, problems):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.report(
                number, None,
                f"not valid JSON ({exc.msg} at column {exc.colno}); expected one "
                '{"pmid", "title", "abstract"} object per line: is this the right format?',
            )
            continue
        if not isinstance(obj, dict):
            problems.report(number, None, "expected a JSON object per line")
            continue
        pmid = str(obj.get("pmid", "")).strip()
        if not valid_pmid(pmid):
            problems.report(number, "pmid", f"'{pmid}' is not a PubMed id (1 to 9 digits)" if pmid else "is missing")
            continue
        if pmid in seen:
            problems.report(number, "pmid", f"PMID {pmid} already appeared on line {seen[pmid]}; keep one of the two")
            continue
        abstract = obj.get("abstract", obj.get("text", ""))
        title = obj.get("title", "")
        if not isinstance(abstract, str) or not isinstance(title, str):
            problems.report(number, "abstract", "title and abstract must be strings")
            continue
        if "abstract" not in obj:  # HoC-style tokenised text
            abstract = detokenise(abstract)
        if problem := document_problem(pmid, title, abstract):
            problems.report(number, *problem)
            continue
        seen[pmid] = number
        yield Document(pmid=pmid, title=title.strip(), abstract=abstract.strip(), source=source)
