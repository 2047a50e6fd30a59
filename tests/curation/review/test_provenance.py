"""A decision keeps how the search found its document: stored, read back, exported, and old stores migrate."""

from __future__ import annotations

import json

import pytest

from curation.entities.lexicon import Lexicon
from curation.errors import CurationError
from curation.grades import Grade
from curation.records import Document
from curation.review.provenance import hit_provenance, provenance_json
from curation.schemas import PO
from curation.store import base
from curation.store.base import schema_version, transaction
from curation.store.corpus import add_documents
from curation.store.decisions import decisions_for, list_decisions, record_decision, undo_last_decision
from curation.store.migrations import MIGRATIONS
from curation.store.opening import open_store
from curation.workflows.curate import record_judgement
from curation.workflows.export import export_decisions
from index.hits import ConceptMatch, Hit, StageScore

BRAF = {"Gene": "BRAF", "Variant": "V600E"}
HIT = Hit(
    "1", 2, 0.8123456789, 3.5, None,
    (StageScore("concepts", 2.0, None), StageScore("lexical", 3.5, 1), StageScore("fused", 0.8123456789, 2)),
    (ConceptMatch("Gene", "BRAF", 2, ((0, 4), (30, 34)), "concept index: dictionary"),
     ConceptMatch("Variant", "V600E", 0, (), "text", ("Val600Glu",))),
    "all",
)


def test_provenance_json_is_compact_sorted_and_has_no_offsets():
    text = provenance_json(HIT)
    assert " " not in text.replace("concept index: dictionary", "")  # compact separators
    data = json.loads(text)
    assert data == hit_provenance(HIT)
    assert text == json.dumps(data, sort_keys=True, separators=(",", ":"))
    assert data["group"] == "all"
    assert data["stages"] == [{"stage": "concepts", "score": 2.0, "rank": None},
                              {"stage": "lexical", "score": 3.5, "rank": 1},
                              {"stage": "fused", "score": 0.812346, "rank": 2}]
    assert data["concepts"] == [
        {"slot": "Gene", "concept": "BRAF", "mentions": 2, "how": "concept index: dictionary", "forms": []},
        {"slot": "Variant", "concept": "V600E", "mentions": 0, "how": "text", "forms": ["Val600Glu"]},
    ]
    assert "spans" not in text and "30" not in text


@pytest.fixture
def judged(con):
    with transaction(con):
        add_documents(con, [Document("1", "BRAF V600E", "Vemurafenib in BRAF V600E melanoma."),
                            Document("2", "Cats", "Cats sleep.")])
    return con


def test_provenance_round_trips_through_the_decision(judged):
    lexicon = Lexicon([])
    made = record_judgement(judged, lexicon, "ana", PO, BRAF, "1", Grade.COMPLETE, answer="Vemurafenib",
                            provenance=provenance_json(HIT))
    assert json.loads(made.provenance) == hit_provenance(HIT)
    plain = record_judgement(judged, lexicon, "ana", PO, BRAF, "2", Grade.NOT_RELEVANT)
    assert plain.provenance == ""
    listed = {d.pmid: d for d in list_decisions(judged)}
    assert listed["1"].provenance == made.provenance and listed["2"].provenance == ""
    assert [d.provenance for d in decisions_for(judged, PO, BRAF)] == [made.provenance, ""]
    assert judged.execute("SELECT provenance FROM decisions WHERE pmid = '2'").fetchone() == (None,)  # NULL
    assert undo_last_decision(judged, "ana").provenance == ""
    assert undo_last_decision(judged, "ana").provenance == made.provenance


def test_provenance_that_is_not_json_is_refused_and_nothing_is_written(judged):
    with pytest.raises(CurationError, match="provenance is not JSON"):
        record_decision(judged, "ana", PO, BRAF, "1", Grade.PARTIAL, provenance="{group: all")
    with pytest.raises(CurationError, match="provenance has 100,001 characters"):
        record_decision(judged, "ana", PO, BRAF, "1", Grade.PARTIAL, provenance='"' + "x" * 99_999 + '"')
    assert list_decisions(judged, include_superseded=True) == []


def test_export_includes_provenance(judged):
    record_decision(judged, "ana", PO, BRAF, "1", Grade.COMPLETE, provenance=provenance_json(HIT))
    record_decision(judged, "bo", PO, BRAF, "2", Grade.NOT_RELEVANT)
    rows = [json.loads(line) for line in export_decisions(judged, "jsonl").splitlines()]
    assert rows[0]["provenance"] == hit_provenance(HIT) and rows[1]["provenance"] is None  # an object, not text
    header, first, second = export_decisions(judged, "tsv").splitlines()
    assert header.split("\t")[-1] == "provenance"
    assert first.split("\t")[-1].replace('\\"', '"') == provenance_json(HIT)
    assert second.endswith("\t")


def test_migration_adds_provenance_to_an_old_store(tmp_path, monkeypatch):
    path = tmp_path / "old.duckdb"
    old = tuple(m for m in MIGRATIONS if m[0] < 5)
    monkeypatch.setattr(base, "MIGRATIONS", old)  # the store as the previous release left it
    con = open_store(path)
    # rows as that release wrote them (today's add_documents writes columns later migrations add)
    con.execute("INSERT INTO documents (pmid, title, abstract, sources) "
                "VALUES ('1', 'BRAF V600E', 'Vemurafenib in BRAF V600E melanoma.', ['test'])")
    con.execute("INSERT INTO decisions (curator, schema_name, query, query_entities, entity_key, pmid, grade) "
                "VALUES ('ana', 'PO', 'q', '{}', '{}', '1', 'complete')")
    columns = [c[0] for c in con.execute("DESCRIBE decisions").fetchall()]
    assert "provenance" not in columns
    con.close()
    monkeypatch.undo()

    con = open_store(path)
    assert schema_version(con) == MIGRATIONS[-1][0]
    assert "provenance" in [c[0] for c in con.execute("DESCRIBE decisions").fetchall()]
    (before,) = list_decisions(con)
    assert before.curator == "ana" and before.provenance == ""  # decisions made before keep no provenance
    after = record_decision(con, "bo", PO, BRAF, "1", Grade.PARTIAL, provenance=provenance_json(HIT))
    assert list_decisions(con)[-1].provenance == after.provenance == provenance_json(HIT)
    con.close()


def test_a_decision_keeps_where_it_was_seen_what_ranked_it_and_the_query_as_linked():
    import dataclasses
    from types import SimpleNamespace

    from curation.records import Decision
    from curation.review.provenance import decision_history, decision_provenance, describe

    typed = SimpleNamespace(slot="Variant", typed="Val600Glu", status="linked", canonical="V600E",
                            concept_ids=("p|SUB|V|600|E",), how="notation", confidence=1.0)
    stored = decision_provenance(HIT, rank=3, version="po-edel-1", mode="hybrid", concepts=[typed], rm3=True)
    data = json.loads(stored)
    assert (data["rank"], data["version"], data["mode"], data["rm3"]) == (3, "po-edel-1", "hybrid", True)
    assert data["query"] == [{"slot": "Variant", "typed": "Val600Glu", "status": "linked", "canonical": "V600E",
                              "concept_ids": ["p|SUB|V|600|E"], "how": "notation", "confidence": 1.0}]
    assert describe(stored).startswith("rank 3 · model po-edel-1 (hybrid)")
    assert "linked Val600Glu → V600E" in describe(stored) and describe("") == "" and describe("not json") == ""
    made = Decision(7, "ana", "PO", "q", (("Variant", "Val600Glu"),), "1", "complete", "Vemurafenib", "a, b",
                    "2026-11-25 06:12:00", None, stored)
    final = dataclasses.replace(made, decision_id=8, curator="cy", note="", adjudication=True, provenance="", answer="")
    assert decision_history([final, made]) == [
        "2026-11-25 06:12 · ana · Complete evidence · answer Vemurafenib · " + describe(stored) + " · note: a, b",
        "2026-11-25 06:12 · cy · Complete evidence (adjudicated)",
    ]
