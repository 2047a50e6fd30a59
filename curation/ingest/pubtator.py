"""PubTator files (BioRED, BC5CDR): titles, abstracts, gold mentions and relations.

Format, one block per document, blocks separated by blank lines::

    PMID|t|title
    PMID|a|abstract
    PMID<TAB>start<TAB>end<TAB>text<TAB>type<TAB>id[<TAB>extra]      mention
    PMID<TAB>type<TAB>id1<TAB>id2[<TAB>novelty]                        relation

Offsets are into ``title + " " + abstract``. A PMID repeated in one file (BC5CDR's training
file holds every document twice) becomes one document with the union of its annotations,
provided the text is the same; different texts under one PMID are reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from curation.ingest.limits import document_problem
from curation.ingest.problems import Problems
from curation.ingest.tabular import ascii_digits, open_text_lines, valid_pmid
from curation.records import Document, Mention, Relation


@dataclass
class _Block:
    pmid: str
    line: int
    title: str | None = None
    abstract: str | None = None
    mentions: list[Mention] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)


def read_pubtator(path: Path, problems: Problems) -> Iterator[Document]:
    """Read a PubTator file into documents (one per PMID, annotations merged)."""
    path = Path(path)
    source = path.name.split(".")[0]
    blocks: dict[str, _Block] = {}
    order: list[str] = []
    for block in _blocks(path, problems, source):
        if block.title is None or block.abstract is None:
            problems.report(block.line, "title" if block.title is None else "abstract", f"PMID {block.pmid} has no "
                            f"{'|t|' if block.title is None else '|a|'} line")
            continue
        if problem := document_problem(block.pmid, block.title, block.abstract):
            problems.report(block.line, *problem)
            continue
        if not _mentions_fit(block, problems):
            continue
        seen = blocks.get(block.pmid)
        if seen is None:
            blocks[block.pmid] = block
            order.append(block.pmid)
            continue
        if (seen.title, seen.abstract) != (block.title, block.abstract):
            problems.report(block.line, "abstract", f"PMID {block.pmid} appears again (line {seen.line}) with a "
                            "different text; keep one version")
            continue
        seen.mentions.extend(m for m in block.mentions if m not in set(seen.mentions))
        seen.relations.extend(r for r in block.relations if r not in set(seen.relations))
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


def _mentions_fit(block: _Block, problems: Problems) -> bool:
    text = f"{block.title} {block.abstract}" if block.title else (block.abstract or "")
    for mention in block.mentions:
        if mention.end > len(text) or text[mention.start : mention.end] != mention.text:
            problems.report(
                block.line, "offsets",
                f"PMID {block.pmid}: mention '{mention.text}' at {mention.start}-{mention.end} does not match "
                f"the text there ('{text[mention.start:mention.end]}'); correct the offsets or the mention text "
                "(offsets count characters of the title, one space, then the abstract)",
            )
            return False
    return True


def _blocks(path: Path, problems: Problems, source: str) -> Iterator[_Block]:
    block: _Block | None = None
    for number, line in open_text_lines(path, problems):
        if not line.strip():
            if block is not None:
                yield block
                block = None
            continue
        if "\t" not in line and "|" in line[:20]:
            pmid, kind, text = (line.split("|", 2) + ["", ""])[:3]
            if not valid_pmid(pmid) or kind not in ("t", "a"):
                problems.report(number, "pmid", f"expected 'PMID|t|title' or 'PMID|a|abstract', got '{line[:40]}'")
                continue
            if block is not None and block.pmid != pmid:
                yield block
                block = None
            if block is None:
                block = _Block(pmid=pmid, line=number)
            if kind == "t":
                block.title = text
            else:
                block.abstract = text
            continue
        fields = line.split("\t")
        if block is None or fields[0] != block.pmid:
            problems.report(number, "pmid", f"annotation for PMID '{fields[0]}' outside that document's block")
            continue
        if len(fields) >= 6 and ascii_digits(fields[1]) and ascii_digits(fields[2]):
            start, end = int(fields[1]), int(fields[2])
            if end <= start:
                problems.report(number, "end", f"end offset {end} is not after start {start}")
                continue
            block.mentions.append(Mention(block.pmid, start, end, fields[3], fields[4], fields[5], source))
        elif len(fields) in (4, 5):
            novelty = fields[4] if len(fields) == 5 else ""
            block.relations.append(Relation(block.pmid, fields[1], fields[2], fields[3], novelty, source))
        else:
            problems.report(number, None, f"neither a mention (6 fields) nor a relation (4-5 fields): {len(fields)} "
                            "fields")
    if block is not None:
        yield block
