"""Exporting curators' work (the Knowledge base page and ``python -m curation export``): the role checked, the
store read, the file laid out by :mod:`curation.ingest.kb_export` or :mod:`curation.ingest.civic_suggestions`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from curation import access
from curation.access import Action, Who
from curation.grades import Grade
from curation.ingest.civic_suggestions import write_civic_suggestions
from curation.ingest.kb_export import FORMATS, decisions_export, kb_records_export
from curation.schemas import RelationSchema, resolve_schema
from curation.store.annotations import main_diseases
from curation.store.base import list_schemas
from curation.store.decisions import list_decisions
from curation.store.kb import list_kb_records

__all__ = ["FORMATS", "SUGGESTED_GRADES", "Export", "civic_suggestions", "decisions_file", "export_decisions",
           "export_new_records", "new_records_file", "records_schema"]

SUGGESTED_GRADES = (Grade.COMPLETE, Grade.PARTIAL)


@dataclass(frozen=True)
class Export:
    """An export's text, how many data rows it holds and the filters that chose them (said beside the file)."""

    text: str
    rows: int
    filters: str

    def summary(self) -> str:
        return f"{self.rows} row{'s' if self.rows != 1 else ''} · {self.filters}"


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


def civic_suggestions(con: duckdb.DuckDBPyConnection, curator: str | None = None,
                      grades: Sequence[Grade] = SUGGESTED_GRADES, *, who: Who = "") -> Export:
    """CIViC source suggestions (CSV) from the active PO decisions that accepted an abstract
    (:func:`curation.ingest.civic_suggestions.write_civic_suggestions`), the disease of each the one its abstract
    mentions most (its stored annotations, gold or predicted). Read back by ``ingest-kb civic-suggestions``.
    """
    access.require(con, who, Action.EXPORT)
    decisions = [d for d in list_decisions(con, curator=curator, schema="PO") if d.grade in grades]
    text, rows = write_civic_suggestions(decisions, main_diseases(con, sorted({d.pmid for d in decisions})))
    filters = (f"schema PO, active decisions graded {' or '.join(g.value for g in grades)}"
               + (f", curator {curator}" if curator else ", every curator"))
    return Export(text, rows, filters)


def records_schema(con: duckdb.DuckDBPyConnection, name: str) -> RelationSchema:
    """The schema whose records to export, by name (any case).

    Raises:
        SchemaError: no schema of that name; the message lists the known ones.
    """
    return resolve_schema(name, list_schemas(con))
