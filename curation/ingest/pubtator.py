"""PubTator files (BioRED, BC5CDR, NCBI's corpora): titles, abstracts, gold mentions and relations.

Format, one block per document, blocks separated by blank lines::

    PMID|t|title
    PMID|a|abstract
    PMID<TAB>start<TAB>end<TAB>text<TAB>type<TAB>id[<TAB>extra]      mention
    PMID<TAB>type<TAB>id1<TAB>id2[<TAB>novelty]                        relation

Offsets are into ``title + " " + abstract``. A PMID repeated in one file (BC5CDR's training
file holds every document twice) becomes one document with the union of its annotations,
provided the text is the same.

Each document stands on its own, so a bad one is skipped and named (``problems.skip``), strict or
lenient, and the others are read: a malformed block, a mention whose text is not the text at its
offsets, a PMID repeated with a different text. A mention whose text differs from the text there only
in case or spacing (NCBI's GNormPlus has 'intersex' over "Intersex") is kept, with the document's
own text, and a warning (``problems.warn``). Only a file no document can be read from is an error.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from curation.ingest.limits import document_problem
from curation.ingest.problems import Problems
from curation.ingest.tabular import ascii_digits, open_text_lines, valid_pmid
from curation.records import Document, Mention, Relation

Fault = tuple[int | None, str | None, str]  # (line, field, problem): what an InputError names


@dataclass
class _Block:
    pmid: str
    line: int
    title: str | None = None
    abstract: str | None = None
    mentions: list[Mention] = field(default_factory=list)
    mention_lines: list[int] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    fault: Fault | None = None  # the first thing wrong with it: the block is skipped
    stray: bool = False  # a line outside any document's block, not a document

    def flag(self, line: int | None, field: str | None, problem: str) -> None:
        if self.fault is None:
            self.fault = (line, field, problem)


class _LineProblems(Problems):
    """Lines ``open_text_lines`` cannot decode, kept for the block they fall in instead of raised."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, lenient=True)
        self.found: list[Fault] = []

    def report(self, line: int | None, field: str | None, problem: str) -> None:
        self.found.append((line, field, problem))


def read_pubtator(path: Path, problems: Problems, gold: bool = True) -> Iterator[Document]:
    """Read a PubTator file into documents (one per PMID, annotations merged); a bad document is skipped and
    named in ``problems.skipped``, a mention kept with its case or spacing changed in ``problems.warnings``.

    Args:
        gold: check the mentions against the text and keep them and the relations; False: text only (a
            mention that does not fit the text then costs nothing: ``annotate`` drops them anyway).

    Raises:
        InputError: no document of the file can be read (the first problem named), or the file cannot be
            read at all (a broken gzip stream).
    """
    path = Path(path)
    source = path.name.split(".")[0]
    blocks: dict[str, _Block] = {}
    order: list[str] = []
    first: Fault | None = None

    def skip(block: _Block, fault: Fault, what: str = "") -> None:
        nonlocal first
        first = first or fault
        line, where, problem = fault
        if not block.stray:
            problem += f"; {what or f'PMID {block.pmid}'} skipped (its block starts at line {block.line})"
        problems.skip(line, where, problem)

    for block in _blocks(path, problems, source):
        if block.fault is None and (block.title is None or block.abstract is None):
            missing = "|t|" if block.title is None else "|a|"
            block.flag(block.line, "title" if block.title is None else "abstract",
                       f"PMID {block.pmid} has no {missing} line")
        if block.fault is None and (problem := document_problem(block.pmid, block.title, block.abstract)):
            block.flag(block.line, *problem)
        if block.fault is None and gold:
            block.mentions = _fitted(block, problems)
        if block.fault is not None:
            skip(block, block.fault)
            continue
        if not gold:
            block.mentions, block.relations = [], []
        seen = blocks.get(block.pmid)
        if seen is None:
            blocks[block.pmid] = block
            order.append(block.pmid)
            continue
        if (seen.title, seen.abstract) != (block.title, block.abstract):
            skip(block, (block.line, "abstract", f"PMID {block.pmid} appears again (line {seen.line}) with a "
                         "different text; keep one version"), what="this copy")
            continue
        seen.mentions.extend(m for m in block.mentions if m not in set(seen.mentions))
        seen.relations.extend(r for r in block.relations if r not in set(seen.relations))
    if not order and first is not None:
        line, where, problem = first
        raise problems.fail(line, where, f"{problem}; no document of the file could be read")
    for pmid in order:
        b = blocks[pmid]
        yield Document(
            pmid=pmid,
            title=b.title or "",
            abstract=b.abstract or "",
            source=source,
            mentions=tuple(dict.fromkeys(b.mentions)),
            relations=tuple(dict.fromkeys(b.relations)),
        )


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def _fitted(block: _Block, problems: Problems) -> list[Mention]:
    """The block's mentions, each read as the text at its offsets; a case- or spacing-only difference is a
    warning, any other flags the block."""
    text = f"{block.title} {block.abstract}" if block.title else (block.abstract or "")
    kept = []
    for mention, line in zip(block.mentions, block.mention_lines, strict=True):
        span = text[mention.start : mention.end]
        if span == mention.text:
            kept.append(mention)
        elif mention.end <= len(text) and _folded(span) == _folded(mention.text):
            problems.warn(line, "text", f"PMID {block.pmid}: mention '{mention.text}' at {mention.start}-"
                          f"{mention.end} differs from the text there ('{span}') only in case or spacing; kept as "
                          f"'{span}'")
            kept.append(dataclasses.replace(mention, text=span))
        else:
            block.flag(line, "offsets",
                       f"PMID {block.pmid}: mention '{mention.text}' at {mention.start}-{mention.end} does not match "
                       f"the text there ('{span}'); correct the offsets or the mention text (offsets count "
                       "characters of the title, one space, then the abstract)")
            return []
    return kept


def _blocks(path: Path, problems: Problems, source: str) -> Iterator[_Block]:
    """The file's blocks in order, each flagged with its first problem, and stray lines as flagged blocks."""
    undecoded = _LineProblems(path)
    pending: list[Fault] = []  # undecodable lines read while no block was open: the next block's
    block: _Block | None = None

    def stray(number: int | None, key: str, where: str | None, problem: str) -> _Block:
        return _Block(pmid=key, line=number or 0, fault=(number, where, f"{problem}; the line is skipped"),
                      stray=True)

    for number, line in open_text_lines(path, undecoded):
        for fault in undecoded.found:
            if block is not None:
                block.flag(*fault)
            else:
                pending.append(fault)
        undecoded.found.clear()
        if not line.strip():
            if block is not None:
                yield block
                block = None
            yield from (stray(f[0], "", f[1], f[2]) for f in pending)
            pending.clear()
            continue
        if "\t" not in line and "|" in line[:20]:
            pmid, kind, text = (line.split("|", 2) + ["", ""])[:3]
            if block is not None and block.pmid != pmid:
                yield block
                block = None
            if block is None:
                block = _Block(pmid=pmid, line=number)
                for fault in pending:
                    block.flag(*fault)
                pending.clear()
            if not valid_pmid(pmid) or kind not in ("t", "a"):
                block.flag(number, "pmid", f"expected 'PMID|t|title' or 'PMID|a|abstract', got '{line[:40]}'")
            elif kind == "t":
                block.title = text
            else:
                block.abstract = text
            continue
        fields = line.split("\t")
        if block is None or fields[0] != block.pmid:
            yield stray(number, fields[0], "pmid", f"annotation for PMID '{fields[0][:40]}' outside that document's "
                        "block")
            continue
        if len(fields) >= 6 and ascii_digits(fields[1]) and ascii_digits(fields[2]):
            start, end = int(fields[1]), int(fields[2])
            if end <= start:
                block.flag(number, "end", f"end offset {end} is not after start {start}")
                continue
            block.mentions.append(Mention(block.pmid, start, end, fields[3], fields[4], fields[5], source))
            block.mention_lines.append(number)
        elif len(fields) in (4, 5):
            novelty = fields[4] if len(fields) == 5 else ""
            block.relations.append(Relation(block.pmid, fields[1], fields[2], fields[3], novelty, source))
        else:
            block.flag(number, None, f"neither a mention (6 fields, offsets in ASCII digits) nor a relation (4-5 "
                       f"fields): {len(fields)} fields")
    for fault in undecoded.found:  # an undecodable last line
        if block is not None:
            block.flag(*fault)
        else:
            pending.append(fault)
    if block is not None:
        yield block
    yield from (stray(f[0], "", f[1], f[2]) for f in pending)
