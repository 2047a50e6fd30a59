"""``python -m curation annotate``: any corpus in, every recognised mention out, as PubTator or JSON lines.

The same :class:`~curation.entities.annotation.Annotator` as the app (the active recogniser and linker
of the store, or one given, over the store's dictionaries). Inputs:

* ``text``: plain text; documents are separated by one or more blank lines (a file without blank
  lines is one document). A document's id is ``<file stem>_<n>`` (n from 1); line breaks and tabs
  inside it become spaces (one character each, so offsets also count into the original block).
* ``jsonl``: one object per line, ``{"pmid", "title", "abstract"}`` or ``{"id", "text"}``.
* ``pubtator``: PubTator files (titles and abstracts; their own mentions and relations are not copied, nor
  checked against the text; a malformed document is skipped and named, the others are annotated).

Outputs (offsets are characters of the title, one space, then the abstract, as PubTator defines them;
of the text alone for a document without a title):

* ``pubtator``: ``id|t|title``, ``id|a|abstract``, then one line per mention,
  ``id<TAB>start<TAB>end<TAB>text<TAB>type<TAB>concept_id<TAB>confidence<TAB>source``: the six
  PubTator columns, then the link's confidence (3 decimals) and what found it (dictionary, rule,
  recogniser); readers that expect six columns ignore the rest. Types are BioRED's names
  (GeneOrGeneProduct, ChemicalEntity, DiseaseOrPhenotypicFeature, SequenceVariant, CellLine); an
  unlinked mention has concept id ``-``.
* ``jsonl``: ``{"id", "text", "annotations": [{start, end, text, type, concept_id, canonical,
  confidence, source}]}`` per document (plus ``title`` and ``abstract`` when it has a title).

Bad input stops the run with the file and line, before anything is written (a PubTator file stops it only
when no document of it can be read); the output file is written whole or not at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from curation.config import Settings
from curation.entities.annotation import Annotation, Annotator
from curation.entities.served_annotator import (
    CurrentAnnotator,
    current_annotator,
    dictionary_matcher,
    load_entity_model,
)
from curation.errors import InputError
from curation.ingest.problems import Problems
from curation.ingest.pubtator import read_pubtator
from curation.records import Document
from curation.store.opening import open_store

INPUT_FORMATS = ("text", "jsonl", "pubtator")
OUTPUT_FORMATS = ("pubtator", "jsonl")
#: kind → PubTator type (BioRED's names); other kinds are written as they are.
PUBTATOR_TYPES = {
    "gene": "GeneOrGeneProduct",
    "chemical": "ChemicalEntity",
    "disease": "DiseaseOrPhenotypicFeature",
    "variant": "SequenceVariant",
    "cellline": "CellLine",
    "species": "OrganismTaxon",
}
_BREAKS = str.maketrans({"\r": " ", "\n": " ", "\t": " "})  # one character for one: offsets are kept
_BAD_ID = re.compile(r"[\s|]")
_BLANK = re.compile(r"\n[ \t\r]*\n")


@dataclass(frozen=True)
class AnnotatedCorpus:
    """Documents and their mentions (same order), and the annotator version that found them."""

    documents: tuple[Document, ...]
    annotations: tuple[tuple[Annotation, ...], ...]
    version: str

    @property
    def mentions(self) -> int:
        return sum(len(found) for found in self.annotations)


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
            documents.append(Document(doc_id, "", block.translate(_BREAKS), source=path.name))
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
        documents.append(Document(doc_id, title.strip().translate(_BREAKS), text.strip().translate(_BREAKS),
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


def annotate_corpus(
    documents: Sequence[Document], annotator: Annotator, batch: int = 64,
    progress: Callable[[int, int], None] | None = None,
) -> AnnotatedCorpus:
    """Every document's mentions, by ``annotator`` (batches of ``batch`` texts)."""
    found: list[tuple[Annotation, ...]] = []
    for first in range(0, len(documents), batch):
        chunk = documents[first : first + batch]
        found += [tuple(spans) for spans in annotator.annotate([d.text for d in chunk])]
        if progress is not None:
            progress(len(found), len(documents))
    return AnnotatedCorpus(tuple(documents), tuple(found), annotator.version)


def to_pubtator(corpus: AnnotatedCorpus) -> str:
    """The corpus as PubTator, mention lines with confidence and source in columns 7 and 8."""
    out = []
    for doc, found in zip(corpus.documents, corpus.annotations, strict=True):
        lines = [f"{doc.pmid}|t|{doc.title}", f"{doc.pmid}|a|{doc.abstract}"]
        for a in found:
            kind = PUBTATOR_TYPES.get(a.type, a.type)
            lines.append("\t".join((doc.pmid, str(a.start), str(a.end), a.text.translate(_BREAKS), kind,
                                    a.concept_id or "-", f"{a.confidence:.3f}", a.source)))
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def to_jsonl(corpus: AnnotatedCorpus) -> str:
    """The corpus as JSON lines, one document per line, offsets into ``text``."""
    lines = []
    for doc, found in zip(corpus.documents, corpus.annotations, strict=True):
        obj: dict[str, object] = {"id": doc.pmid, "text": doc.text}
        if doc.title:
            obj |= {"title": doc.title, "abstract": doc.abstract}
        obj["annotations"] = [{"start": a.start, "end": a.end, "text": a.text, "type": a.type,
                               "concept_id": a.concept_id, "canonical": a.canonical,
                               "confidence": round(a.confidence, 4), "source": a.source} for a in found]
        lines.append(json.dumps(obj, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def render(corpus: AnnotatedCorpus, output_format: str) -> str:
    if output_format == "pubtator":
        return to_pubtator(corpus)
    if output_format == "jsonl":
        return to_jsonl(corpus)
    raise ValueError(f"output format must be one of {OUTPUT_FORMATS}, not {output_format!r}")


def batch_annotator(
    con: duckdb.DuckDBPyConnection | None, settings: Settings, recogniser: Path | None = None,
) -> tuple[CurrentAnnotator, str]:
    """The annotator ``annotate`` uses, and where its dictionaries come from (a line for a person).

    Args:
        con: the store whose dictionaries (and active recogniser) to use; None: the sample of
            ``settings.data_dir`` loaded into a store in memory, as the app loads it, or, without
            one, the notation rules and built-in vocabularies alone.
        recogniser: a recogniser folder to use instead of the store's active one.

    Raises:
        EntityModelError: ``recogniser`` does not load.
    """
    if con is not None:
        where = "the store's dictionaries"
    else:
        from curation.workflows.quickstart import find_sample, load_files

        con = open_store(":memory:")
        files = find_sample(settings.data_dir)
        load_files(con, files)
        where = (f"dictionaries from the data directory {settings.data_dir}" if files else
                 "no store and no data directory: notation rules and built-in vocabularies only")
    matcher = dictionary_matcher(con)
    if recogniser is not None:
        model = load_entity_model("recogniser", recogniser)
        return CurrentAnnotator(Annotator(matcher, recogniser=model)), where
    return current_annotator(con, settings, matcher), where
