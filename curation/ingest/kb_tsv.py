"""Generic knowledge-base TSV for any schema: one column per entity type plus a PMID column.

Column names come from the schema's ``columns`` table (default: the entity type in lower
case, and ``pmid``). The answer column may be empty (a record without an answer); the other
entity columns may not. A ``record_id`` column, when present, gives stable ids; otherwise
the line's content does, so re-ingesting the same file is idempotent.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

from curation.ingest.problems import Problems
from curation.ingest.tabular import read_tsv, valid_pmid
from curation.records import KBRecord
from curation.schemas import RelationSchema


def read_kb_tsv(path: Path, schema: RelationSchema, problems: Problems) -> Iterator[KBRecord]:
    path = Path(path)
    columns = {t: schema.column(t) for t in schema.entity_types}
    pmid_column = schema.column("pmid")
    required = (*columns.values(), pmid_column)
    for line, row in read_tsv(path, problems, required):
        entities = tuple((t, row[c].strip()) for t, c in columns.items())
        empty = [t for t, v in entities if not v and t != schema.answer]
        if empty:
            problems.report(line, columns[empty[0]], f"{empty[0]} is empty; only the answer ({schema.answer}) may be")
            continue
        pmid = row[pmid_column].strip() or None
        if pmid is not None and not valid_pmid(pmid):
            problems.report(line, pmid_column, f"'{pmid}' is not a PubMed id (1 to 9 digits)")
            continue
        source_id = row.get("record_id", "").strip()
        if not source_id:
            key = "\t".join([v for _, v in entities] + [pmid or ""])
            source_id = f"{schema.name}:" + hashlib.sha1(key.encode()).hexdigest()[:16]
        extra = tuple((k, v.strip()) for k, v in row.items() if k not in required and k != "record_id" and v.strip())
        yield KBRecord(
            schema=schema.name, entities=entities, pmid=pmid, source="tsv", source_id=source_id, attributes=extra
        )
