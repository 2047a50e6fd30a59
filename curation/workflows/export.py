"""Exporting curators' work: decisions and the KB records they created, as TSV or JSON lines.

PO records export in a CIViC-like layout (``molecular_profile``, ``therapies``, ``citation_id``,
``source_type``) so they read back with ``ingest-kb civic``; other schemas get one column per
entity type (the generic ``ingest-kb tsv`` layout). Text fields are written as they are; TSV
fields have tabs and newlines replaced by spaces so a row stays a row.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import duckdb

from curation import access
from curation.access import Action, Who
from curation.grades import Grade
from curation.records import Decision, KBRecord
from curation.schemas import RelationSchema
from curation.store.annotations import list_annotations
from curation.store.decisions import list_decisions
from curation.store.kb import list_kb_records

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


def export_decisions(con: duckdb.DuckDBPyConnection, fmt: str = "tsv", include_superseded: bool = True, *,
                     who: Who = "") -> str:
    return decisions_file(con, fmt, active_only=not include_superseded, who=who).text


def export_new_records(con: duckdb.DuckDBPyConnection, schema: RelationSchema, fmt: str = "tsv", *,
                       who: Who = "") -> str:
    """The KB records curators created (answers chosen on the Curate page)."""
    return new_records_file(con, schema, fmt, who=who).text


def decisions_file(con: duckdb.DuckDBPyConnection, fmt: str = "tsv", curator: str | None = None,
                   active_only: bool = False, *, who: Who = "") -> Export:
    """Decisions (every one, or the active ones), of everyone or one curator, with their count and filters."""
    access.require(con, who, Action.EXPORT)
    decisions = list_decisions(con, curator=curator, include_superseded=not active_only)
    filters = f"{'active' if active_only else 'every'} decision" + (f", curator {curator}" if curator
                                                                     else ", every curator")
    return Export(decisions_export(decisions, fmt, with_identity=access.is_team_store(con)), len(decisions), filters)


def new_records_file(con: duckdb.DuckDBPyConnection, schema: RelationSchema, fmt: str = "tsv",
                     curator: str | None = None, *, who: Who = "") -> Export:
    """The schema's KB records curators' answers made (of one curator, when given), with count and filters."""
    access.require(con, who, Action.EXPORT)
    records = [r for r in list_kb_records(con, schema.name) if r.source == "curator"
               and (not curator or r.attribute("curator") == curator)]
    filters = f"schema {schema.name}, records made by curators' answers" + (f", curator {curator}" if curator else "")
    return Export(kb_records_export(records, schema, fmt), len(records), filters)


# --- CIViC source suggestions --------------------------------------------------------------------

#: The fields CIViC's "suggest a source" form asks for, as CSV columns.
CIVIC_SUGGESTION_COLUMNS = ("pubmed_id", "gene", "variant", "disease", "therapy", "comment")
SUGGESTED_GRADES = (Grade.COMPLETE, Grade.PARTIAL)


@dataclass(frozen=True)
class Export:
    """An export's text, how many data rows it holds and the filters that chose them (said beside the file)."""

    text: str
    rows: int
    filters: str

    def summary(self) -> str:
        return f"{self.rows} row{'s' if self.rows != 1 else ''} · {self.filters}"


def civic_suggestions(con: duckdb.DuckDBPyConnection, curator: str | None = None,
                      grades: Sequence[Grade] = SUGGESTED_GRADES, *, who: Who = "") -> Export:
    """CIViC source suggestions (CSV) from the active PO decisions that accepted an abstract.

    One row per (PMID, gene, variant, therapy): the therapy is the decision's answer (else the typed
    Treatment, else empty); the disease is the one the abstract mentions most (its stored annotations,
    gold or predicted), empty when it names none; the comment says who judged it how and when, with the
    curators' notes. Read back by ``ingest-kb civic-suggestions``.
    """
    access.require(con, who, Action.EXPORT)
    decisions = [d for d in list_decisions(con, curator=curator, schema="PO") if d.grade in grades]
    diseases = main_diseases(con, sorted({d.pmid for d in decisions}))
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
    writer.writerow(CIVIC_SUGGESTION_COLUMNS)
    for (pmid, gene, variant, therapy), said in sorted(merged.items()):
        writer.writerow([pmid, gene, variant, diseases.get(pmid, ""), therapy,
                         "Suggested from the curation workbench: " + "; ".join(said)])
    filters = (f"schema PO, active decisions graded {' or '.join(g.value for g in grades)}"
               + (f", curator {curator}" if curator else ", every curator"))
    return Export(out.getvalue(), len(merged), filters)


def main_diseases(con: duckdb.DuckDBPyConnection, pmids: Sequence[str]) -> dict[str, str]:
    """PMID → the disease its annotations name most often (canonical name when linked)."""
    found: dict[str, str] = {}
    for pmid, rows in list_annotations(con, pmids).items():
        counts = Counter(r.canonical or r.text for r in rows
                         if r.entity_type.lower() in ("disease", "diseaseorphenotypicfeature"))
        if counts:
            found[pmid] = min(counts, key=lambda name: (-counts[name], name))
    return found
