"""Curators' work as files: decisions and the KB records they created, as TSV or JSON lines.

PO records export in a CIViC-like layout (``molecular_profile``, ``therapies``, ``citation_id``,
``source_type``) so they read back with ``ingest-kb civic``; other schemas get one column per
entity type (the generic ``ingest-kb tsv`` layout). Text fields are written as they are; TSV
fields have tabs and newlines replaced by spaces so a row stays a row. ``curation.workflows.export`` checks the
role and reads the store.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence

from curation.records import Decision, KBRecord
from curation.schemas import RelationSchema

FORMATS = ("tsv", "jsonl")


def _clean(value: object) -> str:
    return " ".join(str(value if value is not None else "").split())


def _tsv(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", quoting=csv.QUOTE_NONE, escapechar="\\", lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([_clean(v).replace("\\", "/") for v in row])
    return out.getvalue()


def decisions_export(decisions: Sequence[Decision], fmt: str = "tsv", with_identity: bool = False) -> str:
    """Every decision with who, when, relation, document, grade, answer, note, supersession and provenance; with
    ``with_identity`` (a team store's export) also how the curator's name is known (``identity_source``:
    self-declared, oidc, proxy, local).

    ``provenance`` says how the search found the document (its group, each stage's score and rank, the query
    concepts it mentions): in JSON lines an object (null for decisions made without it), like ``query_entities``;
    in TSV the JSON text in one column ("" without it).
    """
    header = [
        "decision_id",
        "curator",
        "created_at",
        "schema",
        "query",
        "query_entities",
        "pmid",
        "grade",
        "answer",
        "note",
        "superseded_by",
        "provenance",
    ] + (["identity_source"] if with_identity else [])
    rows = [
        [
            d.decision_id,
            d.curator,
            d.created_at,
            d.schema,
            d.query,
            json.dumps(dict(d.query_entities)),
            d.pmid,
            d.grade.value,
            d.answer,
            d.note,
            d.superseded_by if d.superseded_by is not None else "",
            d.provenance,
        ] + ([d.identity_source] if with_identity else [])
        for d in decisions
    ]
    if fmt == "jsonl":  # nested objects, never JSON inside a string
        lines = []
        for d, row in zip(decisions, rows, strict=True):
            item = dict(zip(header, row, strict=True))
            item["query_entities"] = dict(d.query_entities)
            item["superseded_by"] = d.superseded_by
            item["provenance"] = json.loads(d.provenance) if d.provenance else None
            lines.append(json.dumps(item, ensure_ascii=False) + "\n")
        return "".join(lines)
    if fmt != "tsv":
        raise ValueError(f"format must be one of {FORMATS}")
    return _tsv(header, rows)


def kb_records_export(records: Sequence[KBRecord], schema: RelationSchema, fmt: str = "tsv") -> str:
    """KB records of one schema: CIViC-like for PO, one column per entity type otherwise."""
    records = [r for r in records if r.schema == schema.name]
    if fmt == "jsonl":
        return "".join(
            json.dumps(
                {
                    "schema": r.schema,
                    "source": r.source,
                    "source_id": r.source_id,
                    "pmid": r.pmid,
                    "entities": dict(r.entities),
                    "attributes": dict(r.attributes),
                },
                ensure_ascii=False,
            )
            + "\n"
            for r in records
        )
    if fmt != "tsv":
        raise ValueError(f"format must be one of {FORMATS}")
    if schema.name == "PO":
        header = [
            "molecular_profile",
            "therapies",
            "citation_id",
            "source_type",
            "evidence_id",
            "curator",
            "grade",
            "decision_id",
        ]
        rows = [
            [
                f"{r.get('Gene')} {r.get('Variant')}",
                r.get("Treatment"),
                r.pmid or "",
                "PubMed",
                r.source_id.lstrip("D") if r.source == "curator" else r.source_id,
                r.attribute("curator"),
                r.attribute("grade"),
                r.attribute("decision_id"),
            ]
            for r in records
        ]
        return _tsv(header, rows)
    header = [schema.column(t) for t in schema.entity_types] + [schema.column("pmid"), "record_id"]
    rows = [[r.get(t) for t in schema.entity_types] + [r.pmid or "", f"{r.source}:{r.source_id}"] for r in records]
    return _tsv(header, rows)
