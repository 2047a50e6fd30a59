from __future__ import annotations

import json

from curation.grades import Grade
from curation.ingest.civic import read_civic
from curation.ingest.problems import Problems
from curation.schemas import PO
from curation.store.annotations import replace_annotations
from curation.store.base import transaction
from curation.store.decisions import record_decision
from curation.store.kb import list_kb_records
from curation.store.opening import open_store
from curation.workflows.export import export_decisions, export_new_records
from curation.workflows.ingestion import ingest_corpus


def test_new_records_round_trip_through_the_civic_loader(con, fixtures, tmp_path):
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    record_decision(
        con,
        "ana",
        PO,
        {"Gene": "BRAF", "Variant": "V600E"},
        "1000001",
        Grade.COMPLETE,
        answer="Vemurafenib",
        note="tab\there\nnewline",
    )
    record_decision(con, "ana", PO, {"Gene": "BRAF", "Variant": "V600E"}, "1000002", Grade.NOT_RELEVANT)
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


def test_civic_source_suggestions_carry_the_form_fields_and_round_trip(con, fixtures, tmp_path):
    import csv

    from curation.ingest.civic_suggestions import COLUMNS as CIVIC_SUGGESTION_COLUMNS
    from curation.store.annotations import AnnotationRow
    from curation.workflows.export import civic_suggestions
    from curation.workflows.ingestion import ingest_kb

    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    with transaction(con):  # the abstract names melanoma twice and a rash once
        rows = [AnnotationRow("1000001", s, e, t, "disease", f"MESH:{t}", t, 1.0, "dictionary", "test")
                for s, e, t in ((14, 22, "melanoma"), (40, 48, "melanoma"), (50, 54, "rash"))]
        replace_annotations(con, "test", {"1000001": 200}, rows)
    braf = {"Gene": "BRAF", "Variant": "V600E"}
    record_decision(con, "ana", PO, braf, "1000001", Grade.COMPLETE, answer="Vemurafenib",
                    note='responds, "durably"\nin 3 of 4')
    record_decision(con, "bo", PO, braf, "1000001", Grade.PARTIAL, answer="Vemurafenib")
    record_decision(con, "bo", PO, {"Gene": "KRAS", "Variant": "G12C"}, "1000002", Grade.PARTIAL)
    record_decision(con, "ana", PO, {"Gene": "EGFR", "Variant": "L858R"}, "1000002", Grade.NOT_RELEVANT)

    made = civic_suggestions(con)
    assert made.rows == 2 and "every curator" in made.summary() and made.summary().startswith("2 rows")
    parsed = list(csv.DictReader(made.text.splitlines(keepends=True)))
    assert tuple(parsed[0]) == CIVIC_SUGGESTION_COLUMNS
    first, second = parsed
    assert (first["pubmed_id"], first["gene"], first["variant"], first["disease"], first["therapy"]) == (
        "1000001", "BRAF", "V600E", "melanoma", "Vemurafenib")  # the disease it names most
    assert "complete evidence per ana" in first["comment"] and "partial evidence per bo" in first["comment"]
    assert 'responds, "durably" in 3 of 4' in first["comment"]  # quotes and commas kept, one line
    assert (second["gene"], second["disease"], second["therapy"]) == ("KRAS", "", "")  # not-relevant ones left out
    assert civic_suggestions(con, curator="ana").rows == 1

    path = tmp_path / "suggestions.csv"
    path.write_text(made.text)
    report = ingest_kb(con, "civic-suggestions", path)
    assert report.added == 2
    again = ingest_kb(con, "civic-suggestions", path)
    assert again.added == 0 and again.unchanged == 2  # the same file twice adds nothing
    back = sorted((r for r in list_kb_records(con, "PO") if r.source == "civic-suggestion"),
                  key=lambda r: r.get("Gene"))
    assert [(r.get("Gene"), r.get("Variant"), r.get("Treatment"), r.pmid, r.attribute("disease")) for r in back] == [
        ("BRAF", "V600E", "Vemurafenib", "1000001", "melanoma"), ("KRAS", "G12C", "", "1000002", "")]


def test_the_cli_exports_to_a_file_and_says_how_many_rows_and_which_filters(fixtures, tmp_path, capsys):
    from curation.cli import main

    db = tmp_path / "store.duckdb"
    con = open_store(db)
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    record_decision(con, "ana", PO, {"Gene": "BRAF", "Variant": "V600E"}, "1000001", Grade.COMPLETE,
                    answer="Vemurafenib")
    record_decision(con, "bo", PO, {"Gene": "BRAF", "Variant": "V600E"}, "1000002", Grade.NOT_RELEVANT)
    con.close()
    out = tmp_path / "s.csv"
    assert main(["export", "civic-suggestions", "--db", str(db), "--out", str(out)]) == 0
    assert f"wrote {out}: 1 row · schema PO" in capsys.readouterr().out
    assert out.read_text().splitlines()[1].startswith("1000001,BRAF,V600E,,Vemurafenib,")
    assert main(["export", "decisions", "--db", str(db), "--format", "jsonl", "--curator", "bo"]) == 0
    printed = capsys.readouterr()
    assert [json.loads(line)["curator"] for line in printed.out.splitlines()] == ["bo"]
    assert "1 row · every decision, curator bo" in printed.err
    assert main(["export", "records", "--db", str(db), "--format", "xml"]) == 2
    assert "--format must be one of" in capsys.readouterr().err
