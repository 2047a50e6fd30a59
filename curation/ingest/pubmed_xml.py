"""PubMed XML (``<PubmedArticleSet>``): efetch answers and the annual baseline ``pubmedNNnnnn.xml.gz``.

Decisions this loader makes, and why:

* **Streaming over expat directly.** A baseline file holds 30,000 articles; only one
  ``<PubmedArticle>`` is ever built as an element tree, converted, and dropped (what
  ``iterparse`` plus ``elem.clear()`` does). Expat is driven directly rather than through
  ``ElementTree.iterparse`` because ElementTree's C parser has no hook to refuse entity
  declarations and reports no line numbers; defusedxml is not installed.
* **Entity declarations are refused.** PubMed's XML declares none (its DOCTYPE only names
  the external DTD, which is never loaded), so any ``<!ENTITY`` is treated as an entity-
  expansion ("billion laughs") or external-entity attack and the file fails as a whole.
* **Structured abstracts** become one "LABEL: text" paragraph per ``<AbstractText>``, joined
  by newlines; inline markup (``<i>``, ``<sup>``, MathML) is flattened into its text.
* **Articles without an abstract are reported** ("empty abstract") and skipped: there is
  nothing to retrieve. Baseline files have many, so ingest them in lenient mode.
* ``<PubmedBookArticle>`` and ``<DeleteCitation>`` are ignored.
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple
from xml.etree.ElementTree import Element, TreeBuilder
from xml.parsers import expat

from curation.ingest.limits import document_problem
from curation.ingest.problems import Problems
from curation.ingest.tabular import is_gzip, valid_pmid
from curation.records import Document

SOURCE = "pubmed"
ROOT = "PubmedArticleSet"
ARTICLE = "PubmedArticle"
_CHUNK = 1 << 16
_YEAR = re.compile(r"\b(1[89]\d\d|2\d\d\d)\b")


class _EntityDeclared(Exception):
    def __init__(self, name: str, line: int) -> None:
        super().__init__(name)
        self.name = name
        self.line = line


class _WrongRoot(Exception):
    def __init__(self, name: str, line: int) -> None:
        super().__init__(name)
        self.name = name
        self.line = line


class _Article(NamedTuple):
    line: int
    element: Element
    problem: str  # "" or why the article cannot be read (an undefined entity)


class _ArticleCollector:
    """Feeds bytes to expat and collects each complete ``<PubmedArticle>`` as an element."""

    def __init__(self) -> None:
        parser = expat.ParserCreate()
        parser.buffer_text = True
        # Never read the external DTD or parameter entities; refuse every entity declaration.
        parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        parser.EntityDeclHandler = self._entity_declared
        parser.SkippedEntityHandler = self._entity_skipped
        parser.StartElementHandler = self._start
        parser.EndElementHandler = self._end
        parser.CharacterDataHandler = self._data
        self.parser = parser
        self.ready: list[_Article] = []
        self._depth = 0
        self._builder: TreeBuilder | None = None
        self._line = 0
        self._problem = ""

    def feed(self, data: bytes, final: bool = False) -> None:
        self.parser.Parse(data, final)

    def _entity_declared(self, name: str, *_: object) -> None:
        raise _EntityDeclared(name, self.parser.CurrentLineNumber)

    def _entity_skipped(self, name: str, is_parameter: bool) -> None:
        # Only reachable for "&name;" in a document naming an external DTD that is never loaded.
        if self._builder is not None and not self._problem:
            self._problem = (
                f"undefined entity '&{name};' at line {self.parser.CurrentLineNumber} (the DTD is never loaded); "
                "replace it with the character it stands for"
            )

    def _start(self, name: str, attributes: dict[str, str]) -> None:
        self._depth += 1
        if self._depth == 1 and name != ROOT:
            raise _WrongRoot(name, self.parser.CurrentLineNumber)
        if self._depth == 2 and name == ARTICLE:
            self._builder = TreeBuilder()
            self._line = self.parser.CurrentLineNumber
            self._problem = ""
        if self._builder is not None:
            self._builder.start(name, attributes)

    def _end(self, name: str) -> None:
        if self._builder is not None:
            self._builder.end(name)
            if self._depth == 2:
                self.ready.append(_Article(self._line, self._builder.close(), self._problem))
                self._builder = None
        self._depth -= 1

    def _data(self, text: str) -> None:
        if self._builder is not None:
            self._builder.data(text)


def read_pubmed_xml(path: Path, problems: Problems) -> Iterator[Document]:
    """Read a PubmedArticleSet XML file (plain or gzip) into documents, one per article with an abstract."""
    path = Path(path)
    compressed = is_gzip(path, problems)
    collector = _ArticleCollector()
    seen: dict[str, tuple[int, int]] = {}
    handle = gzip.open(path, "rb") if compressed else path.open("rb")
    with handle:
        size, at_end = 0, False
        try:
            while chunk := handle.read(_CHUNK):
                size += len(chunk)
                collector.feed(chunk)
                yield from _drain(collector, problems, seen)
            at_end = True
            collector.feed(b"", final=True)
            yield from _drain(collector, problems, seen)
        except _EntityDeclared as exc:
            raise problems.fail(
                exc.line, "DOCTYPE",
                f"declares the entity '{exc.name}'; entity declarations are refused because they allow "
                "entity-expansion ('billion laughs') and external-entity attacks. PubMed XML declares none: "
                "use the file as NCBI serves it",
            ) from None
        except _WrongRoot as exc:
            raise problems.fail(
                exc.line, exc.name,
                f"the root element is <{exc.name}>, expected <{ROOT}> (PubMed efetch or baseline XML)",
            ) from None
        except expat.ExpatError as exc:
            reason = expat.ErrorString(exc.code)
            if size == 0:
                hint = "the file is empty; expected a PubMed <PubmedArticleSet> file"
            elif exc.lineno == 1 and exc.offset == 0 and reason == "syntax error":
                hint = "this is not XML; expected a PubMed <PubmedArticleSet> file"
            elif at_end:
                hint = "the XML ends early, the file is truncated: download it again"
            elif exc.code == expat.errors.codes[expat.errors.XML_ERROR_INVALID_TOKEN] and (
                bad := _non_utf8(path, compressed, exc.lineno)
            ):
                hint = f"{bad}; PubMed XML is UTF-8: download the file again or re-save it as UTF-8"
            else:
                hint = "the XML is not well-formed; download the file again"
            raise problems.fail(exc.lineno, None, f"column {exc.offset + 1}: {reason}: {hint}") from None
        except (OSError, EOFError, zlib.error) as exc:
            what = "broken gzip stream" if compressed else "cannot read the file"
            raise problems.fail(None, None, f"{what} ({exc}); download the file again") from None


def _non_utf8(path: Path, compressed: bool, line: int) -> str:
    """Where line ``line`` of the file is not UTF-8 ("not UTF-8 text (byte 0x.. at column N)"), else ""."""
    with gzip.open(path, "rb") if compressed else path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if number == line:
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    return f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
                return ""
    return ""


def _drain(
    collector: _ArticleCollector, problems: Problems, seen: dict[str, tuple[int, int]]
) -> Iterator[Document]:
    """The documents of the articles parsed so far; ``seen`` maps PMID → (line, hash of its text)."""
    ready, collector.ready = collector.ready, []
    for article in ready:
        document = _document(article, problems)
        if document is None:
            continue
        text = hash((document.title, document.abstract))
        if document.pmid in seen:
            line, first = seen[document.pmid]
            if first != text:
                problems.report(
                    article.line, "PMID",
                    f"PMID {document.pmid} appears again (line {line}) with a different text; keep one version",
                )
            continue  # the same article twice: once is enough
        seen[document.pmid] = (article.line, text)
        yield document


def _document(article: _Article, problems: Problems) -> Document | None:
    citation = article.element.find("MedlineCitation")
    pmid = (citation.findtext("PMID") or "").strip() if citation is not None else ""
    if not valid_pmid(pmid):
        problems.report(article.line, "PMID", f"'{pmid}' is not a PubMed id (MedlineCitation/PMID must be digits)"
                        if pmid else "the article has no MedlineCitation/PMID")
        return None
    if article.problem:
        problems.report(article.line, None, f"PMID {pmid}: {article.problem}")
        return None
    body = citation.find("Article") if citation is not None else None
    if body is None:
        problems.report(article.line, "Article", f"PMID {pmid}: the citation has no <Article> element")
        return None
    title = flatten(body.find("ArticleTitle")) or flatten(body.find("VernacularTitle"))
    paragraphs = []
    for node in body.iterfind("Abstract/AbstractText"):
        text = flatten(node)
        label = (node.get("Label") or "").strip()
        if text:
            paragraphs.append(f"{label}: {text}" if label else text)
    if not paragraphs:
        problems.report(article.line, "Abstract", f"PMID {pmid}: empty abstract; nothing to retrieve, skipped")
        return None
    abstract = "\n".join(paragraphs)
    if problem := document_problem(pmid, title, abstract):
        field, message = problem
        problems.report(article.line, "ArticleTitle" if field == "title" else "Abstract", message)
        return None
    journal = (body.findtext("Journal/Title") or citation.findtext("MedlineJournalInfo/MedlineTA") or "").strip()
    return Document(
        pmid=pmid,
        title=title,
        abstract=abstract,
        source=SOURCE,
        journal=" ".join(journal.split()),
        year=_year(body),
        authors=_authors(body),
        pub_types=tuple(t for t in (flatten(n) for n in body.iterfind("PublicationTypeList/PublicationType")) if t),
    )


def flatten(node: Element | None) -> str:
    """All text under an element, markup dropped and whitespace runs collapsed."""
    if node is None:
        return ""
    return " ".join("".join(node.itertext()).split())


FIRST_AUTHORS = 3  # authors named before "et al."


def _authors(article: Element) -> str:
    """The first authors as PubMed lists them: "Smith J, Doe A, Lee K, et al." (a collective name as written)."""
    names = []
    for author in article.iterfind("AuthorList/Author"):
        last, initials = flatten(author.find("LastName")), flatten(author.find("Initials"))
        name = f"{last} {initials}".strip() if last else flatten(author.find("CollectiveName"))
        if name:
            names.append(name)
    shown = ", ".join(names[:FIRST_AUTHORS])
    return shown + (", et al." if len(names) > FIRST_AUTHORS else "")


def _year(article: Element) -> int | None:
    for path in ("Journal/JournalIssue/PubDate/Year", "Journal/JournalIssue/PubDate/MedlineDate", "ArticleDate/Year"):
        match = _YEAR.search(article.findtext(path) or "")
        if match:
            return int(match.group(1))
    return None
