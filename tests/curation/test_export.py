from __future__ import annotations

import json

from curation import store
from curation.grades import Grade
from curation.ingest.civic import read_civic
from curation.ingest.problems import Problems
from curation.schemas import PO
from curation.workflows.export import export_decisions, export_new_records
from curation.workflows.ingestion import ingest_corpus


def test_new_records_round_trip_through_the_civic_loader(con, fixtures, tmp_path):
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    store.record_decision(
        con,
        "ana",
        PO,
        {"Gene": "BRAF", "Variant": "V600E"},
        "1000001",
        Grade.COMPLETE,
        answer="Vemurafenib",
        note="tab\there\nnewline",
    )
    store.record_decision(con, "ana", PO, {"Gene": "BRAF", "Variant": "V600E"}, "1000002", Grade.NOT_RELEVANT)
    tsv = export_new_records(con, PO)
    path = tmp_path / "new.tsv"
    path.write_text(tsv)
    (record,) = list(read_civic(path, Problems(path)))
    assert (record.get("Gene"), record.get("Variant"), record.get("Treatment"), record.pmid) == (
        "BRAF",
        "V600E",
        "Vemurafenib",
        "1000001",
    )
    decisions = export_decisions(con, "tsv").splitlines()
    assert len(decisions) == 3 and all(line.count("\t") == 11 for line in decisions)
    assert "tab here newline" in decisions[1]
    rows = [json.loads(line) for line in export_decisions(con, "jsonl").splitlines()]
    assert [(r["curator"], r["grade"], r["note"]) for r in rows][0] == ("ana", Grade.COMPLETE, "tab\there\nnewline")
    # nested objects, never JSON inside a string
    assert rows[0]["query_entities"] == {"Gene": "BRAF", "Variant": "V600E"}
    assert all(r["provenance"] is None or isinstance(r["provenance"], dict) for r in rows)
    assert all(r["superseded_by"] is None or isinstance(r["superseded_by"], int) for r in rows)
    (jsonl,) = [json.loads(line) for line in export_new_records(con, PO, "jsonl").splitlines()]
    assert jsonl["entities"]["Treatment"] == "Vemurafenib" and jsonl["source"] == "curator"
