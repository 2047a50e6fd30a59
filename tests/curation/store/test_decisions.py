from __future__ import annotations

import pytest

from curation.errors import CurationError
from curation.grades import Grade
from curation.schemas import PO
from curation.store.base import content_counts, stats
from curation.store.decisions import decisions_for, list_decisions, record_decision, undo_last_decision
from curation.store.kb import list_kb_records
from curation.store.worklist import add_worklist_item, fill_worklist_from_kb, list_worklist, set_worklist_status
from curation.workflows.ingestion import ingest_corpus, ingest_kb

BRAF = {"Gene": "BRAF", "Variant": "V600E"}


@pytest.fixture
def loaded(con, fixtures):
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    return con


def _rows(con):
    return con.execute("SELECT decision_id, curator, grade, superseded_by FROM decisions ORDER BY 1").fetchall()


def test_record_and_undo_round_trip(loaded):
    d = record_decision(
        loaded, "ana", PO, BRAF, "1000001", Grade.COMPLETE, answer="Vemurafenib", note="<b>ok</b>"
    )
    assert d.query == "Treatment for gene BRAF and variant V600E?"
    assert _rows(loaded) == [(d.decision_id, "ana", Grade.COMPLETE, None)]
    assert stats(loaded)["decisions"] == 1
    added = [r for r in list_kb_records(loaded, "PO") if r.source == "curator"]
    assert [(r.get("Treatment"), r.pmid, r.attribute("curator")) for r in added] == [("Vemurafenib", "1000001", "ana")]
    undone = undo_last_decision(loaded, "ana")
    assert undone.decision_id == d.decision_id
    assert _rows(loaded) == [(d.decision_id, "ana", Grade.COMPLETE, d.decision_id)]  # kept, marked withdrawn
    assert stats(loaded)["decisions"] == 0
    assert not [r for r in list_kb_records(loaded) if r.source == "curator"]
    assert undo_last_decision(loaded, "ana") is None


def test_a_new_judgement_supersedes_and_undo_restores_it(loaded):
    first = record_decision(loaded, "ana", PO, BRAF, "1000001", Grade.PARTIAL)
    second = record_decision(
        loaded, "ana", PO, {"Gene": "braf", "Variant": " V600E "}, "1000001", Grade.NOT_RELEVANT
    )
    assert _rows(loaded) == [
        (first.decision_id, "ana", Grade.PARTIAL, second.decision_id),
        (second.decision_id, "ana", Grade.NOT_RELEVANT, None),
    ]
    other = record_decision(loaded, "ben", PO, BRAF, "1000001", Grade.COMPLETE)
    assert {d.curator for d in decisions_for(loaded, PO, BRAF)} == {"ana", "ben"}
    undo_last_decision(loaded, "ana")
    active = {(d.curator, d.grade) for d in decisions_for(loaded, PO, BRAF)}
    assert active == {("ana", Grade.PARTIAL), ("ben", Grade.COMPLETE)}
    assert other.decision_id > second.decision_id
    history = list_decisions(loaded, curator="ana", include_superseded=True)
    assert [d.grade for d in history] == [Grade.PARTIAL, Grade.NOT_RELEVANT]


def test_a_grade_is_stored_as_its_value_and_returned_as_the_grade(loaded):
    given = record_decision(loaded, "ana", PO, BRAF, "1000001", Grade.PARTIAL)
    (stored,) = list_decisions(loaded)
    assert given.grade is Grade.PARTIAL and stored.grade is Grade.PARTIAL
    column = _rows(loaded)[0][2]
    assert type(column) is str and column == "partial"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"curator": "  "}, "enter your name"),
        ({"grade": "maybe"}, "grade must be one of"),
        ({"pmid": "999"}, "not in the corpus"),
        ({"values": {"Treatment": "x"}}, "fill in at least one"),
        ({"note": "x" * 10_001}, "at most 10000"),
        ({"grade": Grade.NOT_RELEVANT, "answer": "Vemurafenib"}, "cannot give a Treatment"),
    ],
)
def test_bad_decisions_are_refused_and_nothing_is_written(loaded, kwargs, message):
    args = {"curator": "ana", "values": BRAF, "pmid": "1000001", "grade": Grade.COMPLETE, "answer": "", "note": ""}
    args.update(kwargs)
    with pytest.raises(CurationError, match=message):
        record_decision(
            loaded, args["curator"], PO, args["values"], args["pmid"], args["grade"], args["answer"], args["note"]
        )
    assert _rows(loaded) == []


def test_sql_and_html_in_notes_are_stored_verbatim(loaded):
    note = "'); DROP TABLE decisions; -- <script>alert(1)</script>"
    record_decision(loaded, "o'brien", PO, BRAF, "1000001", Grade.COMPLETE, note=note)
    (decision,) = list_decisions(loaded)
    assert (decision.curator, decision.note) == ("o'brien", note)


def test_worklist_from_kb_and_status(loaded):
    # The fixture's EML4::ALK fusion record has no therapy and no other record answers it.
    assert fill_worklist_from_kb(loaded, PO) == 1
    assert fill_worklist_from_kb(loaded, PO) == 0
    (item,) = list_worklist(loaded, PO)
    assert item["values"] == {"Gene": "ALK", "Variant": "EML4::ALK Fusion"}
    assert (item["status"], item["judged"], item["origin"]) == ("open", 0, "kb")
    assert add_worklist_item(loaded, PO, BRAF) is True
    assert add_worklist_item(loaded, PO, {"Gene": "braf", "Variant": "v600e"}) is False
    record_decision(loaded, "ana", PO, BRAF, "1000001", Grade.COMPLETE)
    braf = [i for i in list_worklist(loaded, PO) if i["values"]["Gene"] == "BRAF"][0]
    assert braf["judged"] == 1
    set_worklist_status(loaded, braf["item_id"], "done", "ana")
    assert [i["values"]["Gene"] for i in list_worklist(loaded, PO, status="done")] == ["BRAF"]
    with pytest.raises(CurationError, match="status must be one of"):
        set_worklist_status(loaded, braf["item_id"], "finished")


def test_answers_do_not_change_what_cached_resources_are_built_from(loaded):
    # A decision with an answer adds a curator KB record; the app must not rebuild its matcher and
    # indexes (keyed on content_counts) on every such click.
    before = content_counts(loaded)
    decision = record_decision(loaded, "ana", PO, {"Gene": "BRAF", "Variant": "V600E"}, "1000001",
                               Grade.COMPLETE, answer="Dabrafenib")
    assert any(r.source == "curator" for r in list_kb_records(loaded)) and decision.answer == "Dabrafenib"
    assert content_counts(loaded) == before


def test_migration_types_adjudications_only_where_the_author_could_adjudicate(tmp_path, monkeypatch):
    """Before the typed field a note ``adjudication`` made one, whoever typed it: the migration keeps only those
    whose author held the adjudicator (or maintainer) role when they made it, or worked in a personal store."""
    from datetime import UTC, datetime, timedelta

    from curation.store import base
    from curation.store.migrations import MIGRATIONS
    from curation.store.opening import open_store
    from curation.store.team import change_roles

    path = tmp_path / "old.duckdb"
    monkeypatch.setattr(base, "MIGRATIONS", tuple(m for m in MIGRATIONS if m[0] <= 10))  # before the typed field
    con = open_store(path)
    early, late = "2020-01-01 00:00:00+00", (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    change_roles(con, [("ana@x.org", "maintainer", "grant"), ("ben@x.org", "curator", "grant"),
                       ("dan@x.org", "adjudicator", "grant"), ("gus@x.org", "adjudicator", "grant")], "ana@x.org",
                 "oidc")
    change_roles(con, [("gus@x.org", "adjudicator", "revoke")], "ana@x.org", "oidc")
    rows = [  # (curator, identity source, when, note, an adjudication after the migration)
        ("ana", "self-declared", early, "adjudication", True),  # a personal store then: every name held every role
        ("dan@x.org", "oidc", early, "adjudication", False),  # before dan was granted the role
        ("dan@x.org", "oidc", late, "Adjudication: a tie", True),
        ("ana@x.org", "oidc", late, "adjudication", True),  # a maintainer may adjudicate
        ("operator", "local", late, "adjudication", True),  # the shell holds every role
        ("ben@x.org", "oidc", late, "adjudication", False),  # a curator
        ("eve@x.org", "proxy", late, "adjudication", False),  # no role at all
        ("gus@x.org", "oidc", late, "adjudication", False),  # the role was revoked before
        ("bo", "self-declared", late, "adjudication", False),  # a typed name in a team store has no role
        ("dan@x.org", "oidc", late, "looks right", False),  # not an adjudication note
    ]
    for i, (curator, source, when, note, _) in enumerate(rows, start=1):
        con.execute("INSERT INTO decisions (curator, schema_name, query, query_entities, entity_key, pmid, grade, "
                    "note, created_at, identity_source) VALUES (?, 'PO', 'q', '{}', '{}', ?, 'partial', ?, "
                    "CAST(? AS TIMESTAMPTZ), ?)", [curator, str(i), note, when, source])
    con.close()
    monkeypatch.undo()

    con = open_store(path)
    got = [(d.curator, d.note, d.adjudication) for d in list_decisions(con)]
    assert got == [(curator, note, expected) for curator, _, _, note, expected in rows]
    con.close()


def test_a_replayed_journal_record_older_than_the_typed_field_follows_the_migration(loaded):
    """Journal records written before migration 11 carry no ``adjudication`` field; replayed, their note decides
    as the migration decided for the rows the store held."""
    from curation.store.base import transaction
    from curation.store.decisions import apply_decision, get_decision
    from curation.store.team import change_roles

    change_roles(loaded, [("dan@x.org", "adjudicator", "grant"), ("ben@x.org", "curator", "grant")], "local:ops",
                 "local")
    made = record_decision(loaded, "dan@x.org", PO, BRAF, "1000001", Grade.PARTIAL, identity_source="oidc")
    row = {"curator": "", "schema_name": "PO", "query": made.query, "query_entities": '{"Gene": "BRAF"}',
           "entity_key": '{"gene": "braf"}', "pmid": "1000002", "grade": "partial", "answer": "", "provenance": "",
           "kb_entities": []}
    replayed = {}
    for curator, note in (("dan@x.org", "adjudication"), ("ben@x.org", "adjudication"), ("dan@x.org", "ok")):
        with transaction(loaded):
            legacy = {**row, "curator": curator, "note": note, "identity_source": "oidc"}
            replayed[(curator, note)] = apply_decision(loaded, legacy)[0]
    with transaction(loaded):
        typed = apply_decision(loaded, {**row, "curator": "ben@x.org", "note": "adjudication",
                                        "identity_source": "oidc", "adjudication": False})[0]
    got = {key: get_decision(loaded, i).adjudication for key, i in replayed.items()}
    assert got == {("dan@x.org", "adjudication"): True, ("ben@x.org", "adjudication"): False,
                   ("dan@x.org", "ok"): False}
    assert not get_decision(loaded, typed).adjudication  # a record that carries the field is taken as written
