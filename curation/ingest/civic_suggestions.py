"""CIViC source-suggestion CSV (what ``export civic-suggestions`` writes) back into PO records.

Columns ``pubmed_id, gene, variant, disease, therapy, comment`` (a header line; quoted CSV fields may
hold commas and newlines). Each row is one PO record (Gene, Variant, Treatment = therapy, which may be
empty) with its PubMed id, the disease and the comment as attributes; the record id is the row's
content, so importing the same file twice adds nothing. :func:`write_civic_suggestions` writes the file from
curators' decisions.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from curation.ingest.limits import MAX_FIELD_CHARS
from curation.ingest.problems import Problems
from curation.ingest.tabular import open_text_lines, valid_pmid
from curation.records import Decision, KBRecord

COLUMNS = ("pubmed_id", "gene", "variant", "disease", "therapy", "comment")
SOURCE = "civic-suggestion"


def read_civic_suggestions(path: Path, problems: Problems) -> Iterator[KBRecord]:
    """Read a suggestion CSV; a bad row is reported with its line and field (skipped when lenient)."""
    path = Path(path)
    numbered = list(open_text_lines(path, problems))
    if not numbered:
        raise problems.fail(1, None, "the file is empty; expected a header line " + ",".join(COLUMNS))
    text = "\n".join(line for _, line in numbered) + "\n"
    reader = csv.reader(text.splitlines(keepends=True))
    try:
        header = [h.strip() for h in next(reader)]
    except csv.Error as exc:
        raise problems.fail(numbered[0][0], None, f"not CSV ({exc})") from None
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise problems.fail(numbered[0][0], missing[0],
                            f"missing column(s) {missing}; expected the header {','.join(COLUMNS)}: is this the right "
                            "format?")
    at = {c: header.index(c) for c in COLUMNS}
    while True:
        # the file line the next row starts on (a quoted field may span lines)
        line = numbered[reader.line_num][0] if reader.line_num < len(numbered) else None
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise problems.fail(line, None, f"not CSV ({exc})") from None
        if not any(field.strip() for field in row):
            continue
        if len(row) != len(header):
            problems.report(line, None, f"{len(row)} fields, the header has {len(header)}")
            continue
        values = {c: row[i].strip() for c, i in at.items()}
        too_long = next((c for c, v in values.items() if len(v) > MAX_FIELD_CHARS), None)
        if too_long:
            problems.report(line, too_long, f"longer than {MAX_FIELD_CHARS:,} characters")
            continue
        if not valid_pmid(values["pubmed_id"]):
            problems.report(line, "pubmed_id", f"'{values['pubmed_id']}' is not a PubMed id (1 to 9 digits)")
            continue
        if not values["gene"] or not values["variant"]:
            problems.report(line, "gene" if not values["gene"] else "variant", "is empty; a PO record needs both")
            continue
        key = "\t".join(values[c] for c in ("pubmed_id", "gene", "variant", "therapy"))
        yield KBRecord(
            "PO",
            (("Gene", values["gene"]), ("Variant", values["variant"]), ("Treatment", values["therapy"])),
            values["pubmed_id"],
            SOURCE,
            hashlib.sha1(key.encode()).hexdigest()[:16],
            tuple((c, values[c]) for c in ("disease", "comment") if values[c]),
        )


def write_civic_suggestions(decisions: Iterable[Decision], diseases: Mapping[str, str]) -> tuple[str, int]:
    """The CSV of PO decisions (with its header) and its row count: one row per (PMID, gene, variant, therapy).

    The therapy is the decision's answer (else the typed Treatment, else empty); the disease is
    ``diseases[pmid]`` (empty when absent); the comment says who judged it how and when, with the curators' notes.
    """
    merged: dict[tuple[str, str, str, str], list[str]] = {}
    for d in decisions:
        values = dict(d.query_entities)
        therapy = d.answer or values.get("Treatment", "")
        key = (d.pmid, values.get("Gene", ""), values.get("Variant", ""), therapy)
        said = f"{d.grade.value} evidence per {d.curator} ({d.created_at[:10]})" + (f": {' '.join(d.note.split())}"
                                                                              if d.note else "")
        merged.setdefault(key, []).append(said)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for (pmid, gene, variant, therapy), said in sorted(merged.items()):
        writer.writerow([pmid, gene, variant, diseases.get(pmid, ""), therapy,
                         "Suggested from the curation workbench: " + "; ".join(said)])
    return out.getvalue(), len(merged)
