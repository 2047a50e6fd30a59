"""UniProtKB flat files (``uniprot_sprot.dat[.gz]``): MOD_RES features into PTM records.

The flat file is parsed by Biopython's :func:`Bio.SwissProt.parse`, streamed entry by entry
(the Swiss-Prot file is ~600 MB uncompressed). One MOD_RES feature such as::

    FT   MOD_RES         473
    FT                   /note="Phosphoserine; by IKKE, MTOR and TBK1"
    FT                   /evidence="ECO:0000269|PubMed:15718470,
    FT                   ECO:0000269|PubMed:21464307"

becomes one record per (catalyst, PubMed id): Protein AKT1, PTM type "phosphorylation",
Residue "serine 473", Catalyst IKKE / MTOR / TBK1, so the PTM query reads "Catalysts for the
phosphorylation of AKT1 at serine 473?".

Decisions this loader makes, and why:

* **Protein** is the first gene's ``Name=`` (evidence braces removed), else the entry name
  (``KAPX_TESTA``): curators and abstracts name proteins by gene symbol.
* **Residue** takes the amino acid from the entry's sequence at the feature position, so it
  is right for every ptmlist term (``Citrulline`` is an arginine). Features on another
  isoform (``P31749-2:12``) take it from the term instead; an unknown position ("?") leaves
  the residue empty, which is still a valid partial relation.
* **Catalysts** come from ``; by A, B and C``; "autocatalysis" means the protein itself and
  a viral protein's "host CSK" is the host kinase CSK. No "by" gives an empty answer slot:
  the record is kept as a source of KB-matching negatives, like a feature without PubMed
  evidence (``pmid=None``).
* Only MOD_RES is read: CARBOHYD, LIPID and CROSSLNK (ubiquitin, SUMO) are other features.
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from Bio import SwissProt

from curation.ingest.problems import Problems
from curation.ingest.tabular import is_gzip
from curation.records import KBRecord
from curation.schemas import PTM

SOURCE = "uniprot"

# Ordered: the first pattern that matches the modification term wins, so the specific
# acyl groups come before "hydroxy" and "methyl", and pantetheine before phospho.
_PTM_TYPES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), name)
    for pattern, name in (
        (r"pantetheine", "phosphopantetheinylation"),
        (r"ADP-ribosyl", "ADP-ribosylation"),
        (r"(?:^|-)phospho|aspartylphosphate", "phosphorylation"),
        (r"hydroxyisobutyryl", "2-hydroxyisobutyrylation"),
        (r"hydroxybutyryl", "beta-hydroxybutyrylation"),
        (r"acetyl", "acetylation"),
        (r"succinyl", "succinylation"),
        (r"malonyl", "malonylation"),
        (r"glutaryl", "glutarylation"),
        (r"crotonyl", "crotonylation"),
        (r"propionyl", "propionylation"),
        (r"butyryl", "butyrylation"),
        (r"lactoyl", "lactylation"),
        (r"biotinyl", "biotinylation"),
        (r"lipoyl", "lipoylation"),
        (r"methyl", "methylation"),
        (r"citrulline", "citrullination"),
        (r"sulf(?:en|in|on)ic acid|sulfoxide", "oxidation"),
        (r"^sulfo", "sulfation"),
        (r"nitroso", "S-nitrosylation"),
        (r"nitro", "nitration"),
        (r"hydroxy", "hydroxylation"),
        (r"carboxyglutamate", "carboxylation"),
        (r"deamidated", "deamidation"),
        (r"formyl", "formylation"),
        (r"hypusine", "hypusination"),
        (r" amide$", "amidation"),
    )
)

AMINO_ACIDS = {
    "A": "alanine", "R": "arginine", "N": "asparagine", "D": "aspartate", "C": "cysteine",
    "Q": "glutamine", "E": "glutamate", "G": "glycine", "H": "histidine", "I": "isoleucine",
    "L": "leucine", "K": "lysine", "M": "methionine", "F": "phenylalanine", "P": "proline",
    "S": "serine", "T": "threonine", "W": "tryptophan", "Y": "tyrosine", "V": "valine",
    "U": "selenocysteine", "O": "pyrrolysine",
}  # fmt: skip
# Longest first so "glutamine" is not read as a shorter name inside it.
_AMINO_ACID_WORD = re.compile(
    "|".join(sorted({*AMINO_ACIDS.values(), "aspartic acid", "glutamic acid"}, key=len, reverse=True)), re.IGNORECASE
)
_CONTEXT = re.compile(r"^\(([^)]*)\)\s*")  # "(Microbial infection) Phosphothreonine; by ..."
_CATALYST_SEPARATOR = re.compile(r"\s*,\s*|\s+and/or\s+|\s+and\s+|\s+or\s+")
_SELF = {"autocatalysis", "autophosphorylation"}
_PUBMED_EVIDENCE = re.compile(r"(ECO:[0-9]+)\|PubMed:([0-9]+)")  # ASCII: \d also matches other scripts' digits
_EVIDENCE_BRACES = re.compile(r"\s*\{[^}]*\}")
_FULL_NAME = re.compile(r"(?:RecName|SubName): Full=([^;{]+)")


def ptm_type(term: str) -> str:
    """The PTM type of a ptmlist term ("Phosphoserine" -> "phosphorylation").

    Unknown terms are kept, lowercased ("Allysine" -> "allysine").
    """
    term = _CONTEXT.sub("", term).strip()
    for pattern, name in _PTM_TYPES:
        if pattern.search(term):
            return name
    return term.lower()


def parse_catalysts(note: str, protein: str) -> list[str]:
    """Catalysts named in a MOD_RES note, in order ("by PKA, PKC and autocatalysis").

    >>> parse_catalysts("Phosphoserine; by PKA, PKC and autocatalysis; alternate", "KAPX")
    ['PKA', 'PKC', 'KAPX']
    """
    catalysts: list[str] = []
    for part in note.split(";")[1:]:
        part = part.strip()
        if not part.startswith("by "):
            continue
        for name in _CATALYST_SEPARATOR.split(part[3:]):
            name = name.strip()
            if name.lower() in _SELF:
                name = protein
            elif name.startswith("host "):
                name = name[len("host ") :].strip()
            if name and name not in catalysts:
                catalysts.append(name)
    return catalysts


def read_uniprot(path: Path, problems: Problems) -> Iterator[KBRecord]:
    """Read a UniProtKB flat file (plain or gzip) into PTM records, one per MOD_RES, catalyst and PMID.

    An entry Biopython cannot parse is reported (line and line type) and skipped; a file that is
    not a flat file, not text or a broken gzip stream fails as a whole.
    """
    path = Path(path)
    compressed = is_gzip(path, problems)
    handle = gzip.open(path, "rt", encoding="utf-8") if compressed else path.open(encoding="utf-8")
    with handle:
        lines = _CountedLines(handle)
        try:
            yield from _read_entries(lines, problems)
        except UnicodeDecodeError as exc:
            raise problems.fail(
                lines.number + 1, None, f"not UTF-8 text ({exc.reason}); is this a UniProt .dat file?"
            ) from None
        except (OSError, EOFError, zlib.error) as exc:
            what = "broken gzip stream" if compressed else "cannot read the file"
            raise problems.fail(lines.number, None, f"{what} ({exc}); download the file again") from None


class _CountedLines:
    """A text handle for Bio.SwissProt that counts lines and remembers the current entry's ID line."""

    def __init__(self, handle: TextIO) -> None:
        self._handle = handle
        self.number = 0
        self.last = ""
        self.entry_line = 0
        self.entry_name = ""

    def read(self, size: int = -1) -> str:
        # Bio.SwissProt only calls read(0), to check that the handle is text.
        if size != 0:
            raise NotImplementedError("read only supports size 0")
        return ""

    def __iter__(self) -> _CountedLines:
        return self

    def __next__(self) -> str:
        line = next(self._handle)
        self.number += 1
        self.last = line
        if line.startswith("ID   "):
            self.entry_line = self.number
            self.entry_name = line[5:].split(None, 1)[0] if line[5:].strip() else ""
        return line


def _read_entries(lines: _CountedLines, problems: Problems) -> Iterator[KBRecord]:
    while True:
        try:
            for entry in SwissProt.parse(lines):
                yield from _entry_records(entry, lines.entry_line, problems)
            return
        except UnicodeDecodeError:
            raise
        # Bio.SwissProt signals malformed input with ValueError (SwissProtParserError) and asserts.
        except (ValueError, AssertionError, IndexError, KeyError) as exc:
            if lines.number <= 1:
                raise problems.fail(
                    1, None, "not a UniProtKB flat file: the first line must start with 'ID   ' "
                    "(download uniprot_sprot.dat.gz from the UniProt FTP site)"
                ) from None
            reason = " ".join(str(exc).split()) or type(exc).__name__
            if reason == "Unexpected end of stream.":
                reason = f"the file ends inside entry {lines.entry_name} (no '//' line); the download is incomplete"
            else:
                reason = f"entry {lines.entry_name} (from line {lines.entry_line}) cannot be parsed: {reason}"
            problems.report(lines.number, lines.last[:2].strip() or None, f"{reason}; fix or remove the entry")
            # Resynchronise after the broken entry's "//" (unless the parser stopped on it) and go on.
            if not lines.last.startswith("//"):
                for line in lines:
                    if line.startswith("//"):
                        break


def _entry_records(entry: SwissProt.Record, line: int, problems: Problems) -> Iterator[KBRecord]:
    accession = entry.accessions[0] if entry.accessions else entry.entry_name
    protein = _gene_name(entry) or entry.entry_name
    name_match = _FULL_NAME.search(entry.description)
    common = (
        ("accession", accession),
        ("entry_name", entry.entry_name),
        ("protein_name", name_match.group(1).strip() if name_match else ""),
        ("organism", entry.organism.rstrip(".").strip()),
    )
    seen: set[str] = set()
    for feature in entry.features:
        if feature.type != "MOD_RES":
            continue
        note = " ".join(feature.qualifiers.get("note", feature.qualifiers.get("description", "")).split())
        term = note.split(";")[0].strip()
        if not term:
            problems.report(line, "FT MOD_RES", f"entry {entry.entry_name}: a MOD_RES feature has no /note; skipped")
            continue
        start = feature.location.start
        position = int(start) + 1 if isinstance(start, int) else None
        isoform = feature.location.ref
        residue = ""
        if position is not None:
            if isoform is None:
                if position > len(entry.sequence):
                    problems.report(
                        line, "FT MOD_RES",
                        f"entry {entry.entry_name}: MOD_RES '{term}' at {position} is past the end of the "
                        f"{len(entry.sequence)}-residue sequence; fix the entry",
                    )
                    continue
                amino_acid = AMINO_ACIDS.get(entry.sequence[position - 1], "")
            else:
                word = _AMINO_ACID_WORD.search(term)
                amino_acid = word.group(0).lower() if word else ""
            residue = f"{amino_acid or 'residue'} {position}"
        modification = ptm_type(term)
        catalysts = parse_catalysts(note, protein) or [""]
        evidence = _evidence_by_pmid(feature.qualifiers.get("evidence", ""))
        context = _CONTEXT.match(term)
        attributes = common + (("description", note),) + ((("isoform", isoform),) if isoform else ())
        if context:
            attributes += (("context", context.group(1)),)
        where = f"{isoform or accession}:MOD_RES:{position if position is not None else '?'}:{term}"
        for pmid, codes in evidence:
            for catalyst in catalysts:
                source_id = f"{where}:{catalyst}:{pmid or ''}"
                if source_id in seen:
                    continue
                seen.add(source_id)
                values = {"Protein": protein, "PTM type": modification, "Residue": residue, "Catalyst": catalyst}
                yield KBRecord(
                    schema=PTM.name,
                    entities=tuple((t, values[t]) for t in PTM.entity_types),
                    pmid=pmid,
                    source=SOURCE,
                    source_id=source_id,
                    attributes=attributes + (("evidence", codes),),
                )


def _gene_name(entry: SwissProt.Record) -> str:
    for gene in entry.gene_name:
        name = gene.get("Name", "") if isinstance(gene, dict) else ""
        name = _EVIDENCE_BRACES.sub("", name).strip()
        if name:
            return name
    return ""


def _evidence_by_pmid(evidence: str) -> list[tuple[str | None, str]]:
    """(PMID, ECO codes) pairs in order; [(None, all evidence)] when no PubMed id is cited.

    "ECO:0000269|PubMed:15718470,ECO:0007744|PubMed:15718470" -> [("15718470", "ECO:0000269, ECO:0007744")]
    """
    codes: dict[str, list[str]] = {}
    for code, pmid in _PUBMED_EVIDENCE.findall(evidence):
        if code not in codes.setdefault(pmid, []):
            codes[pmid].append(code)
    if not codes:
        items = [item.strip() for item in evidence.split(",") if item.strip()]
        return [(None, ", ".join(items))]
    return [(pmid, ", ".join(found)) for pmid, found in codes.items()]
