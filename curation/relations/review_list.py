"""Suggestions as data: the CLI's JSON record, the review list for the KB (CSV or JSON lines) and CIViC's
source-suggestion CSV (:mod:`curation.relations.missing_slot` makes the suggestions)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence

from curation.errors import CurationError
from curation.ingest.civic_suggestions import COLUMNS as CIVIC_SUGGESTION_COLUMNS
from curation.relations.missing_slot import SuggestionResult

REVIEW_COLUMNS = ("schema", "query", "slot", "suggestion", "concept_ids", "score", "suggestion_rank", "supporting",
                  "in_kb", "kb_pmids", "pmid", "search_rank", "probability", "direction", "sentence")


def result_record(result: SuggestionResult, new_only: bool = False) -> dict[str, object]:
    """One partial relation's suggestions as JSON-ready data (``new_only``: those the KB lacks)."""
    return {
        "schema": result.schema, "entities": dict(result.values), "slot": result.slot,
        "concepts": [{"slot": c.slot, "typed": c.typed, "status": c.status, "canonical": c.canonical,
                      "ids": list(c.concept_ids)} for c in result.concepts],
        "documents": result.documents, "top_docs": result.top_docs, "scorer": result.scorer,
        "suggestions": [{
            "rank": s.rank, "name": s.name, "concept_ids": list(s.concept_ids), "kind": s.kind,
            "score": round(s.score, 4), "direction": s.direction, "supporting": s.supporting,
            "co_mentions": s.co_mentions, "in_kb": s.in_kb,
            "kb_pmids": list(s.kb_pmids),
            "papers": [{"pmid": p.pmid, "search_rank": p.rank, "probability": p.probability, "title": p.title,
                        "sentence": p.sentence, "same_sentence": p.same_sentence, "direction": p.direction}
                       for p in s.papers],
        } for s in result.suggestions if not (new_only and s.in_kb)],
        "weak": result.weak, "message": result.message, "notes": list(result.notes),
        "seconds": round(result.seconds, 3),
    }


def review_rows(results: Sequence[SuggestionResult], new_only: bool = True) -> list[dict[str, object]]:
    """The review list for the KB: one row per (suggestion, supporting paper), the suggestions new to the KB only
    unless ``new_only`` is False."""
    rows = []
    for result in results:
        query = "; ".join(f"{k}={v}" for k, v in result.values.items())
        for s in result.suggestions:
            if new_only and s.in_kb:
                continue
            for p in s.papers:
                rows.append({"schema": result.schema, "query": query, "slot": result.slot, "suggestion": s.name,
                             "concept_ids": ";".join(s.concept_ids), "score": round(s.score, 4),
                             "suggestion_rank": s.rank, "supporting": s.supporting, "in_kb": s.in_kb,
                             "kb_pmids": ";".join(s.kb_pmids), "pmid": p.pmid, "search_rank": p.rank,
                             "probability": p.probability, "direction": p.direction,
                             "sentence": " ".join(p.sentence.split())})
    return rows


def review_file(results: Sequence[SuggestionResult], fmt: str = "csv", new_only: bool = True) -> str:
    """The review list as CSV (a header, one row per supporting paper) or JSON lines (one object per suggestion,
    its papers inside)."""
    if fmt == "jsonl":
        return "".join(json.dumps({"schema": r.schema, "entities": dict(r.values), "slot": r.slot, **sug},
                                  ensure_ascii=False) + "\n"
                       for r in results for sug in result_record(r, new_only)["suggestions"])  # type: ignore[union-attr]
    if fmt != "csv":
        raise ValueError(f"format must be csv or jsonl, not {fmt!r}")
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=REVIEW_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: _cell(v) for k, v in row.items()} for row in review_rows(results, new_only))
    return out.getvalue()


def _cell(value: object) -> object:
    """A text cell a spreadsheet would run as a formula (abstract text is untrusted) gets a leading apostrophe."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value


def review_civic(results: Sequence[SuggestionResult], diseases: Mapping[str, str], new_only: bool = True) -> str:
    """The review list in CIViC's source-suggestion format (the CSV ``export civic-suggestions`` writes and
    ``ingest-kb civic-suggestions`` reads): one row per (supporting PMID, gene, variant, suggested therapy) of the
    PO relations, ``diseases[pmid]`` (the disease the abstract names most), and a comment with the suggestion's
    score and sentence.

    Raises:
        CurationError: a relation of another schema than PO (CIViC's format has no place for it).
    """
    other = sorted({r.schema for r in results if r.schema != "PO"})
    if other:
        raise CurationError(f"CIViC's source-suggestion format holds PO relations only, not {', '.join(other)}; "
                            "export those as CSV or JSON lines")
    values = {id(r): dict(r.values) for r in results}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CIVIC_SUGGESTION_COLUMNS)
    for result in results:
        query = values[id(result)]
        for s in result.suggestions:
            if new_only and s.in_kb:
                continue
            for p in s.papers:
                comment = (f"Suggested by the curation workbench's relation scorer ({s.scorer}): {s.name} ranked "
                           f"{s.rank} for {query.get('Gene', '')} {query.get('Variant', '')}".rstrip()
                           + (f" ({p.direction})" if p.direction else "")
                           + f", p {p.probability:.2f} in this abstract: " + " ".join(p.sentence.split()))
                writer.writerow([_cell(x) for x in (p.pmid, query.get("Gene", ""), query.get("Variant", ""),
                                                    diseases.get(p.pmid, ""), s.name, comment)])
    return out.getvalue()
