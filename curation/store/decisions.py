"""Curators' decisions (append-only).

A decision is never edited or deleted. A new decision by the same curator on the same
(relation, document) supersedes the previous one (``superseded_by``); an undo marks the
decision withdrawn (``superseded_by`` = its own id) and brings back the one it had
superseded. A decision that names an answer entity also adds a KB record (source
``curator``), removed again by its undo, in the same transaction.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import duckdb

from curation.errors import CurationError
from curation.grades import GRADES, Grade
from curation.records import Decision, KBRecord
from curation.schemas import RelationSchema
from curation.store.base import _scalar
from curation.store.journaled import journaled
from curation.store.kb import add_kb_records
from curation.store.legacy_adjudication import LEGACY_ADJUDICATION

MAX_NOTE = 10_000
MAX_ANSWER = 500  # characters of the answer and of each query entity
MAX_CURATOR = 100
SELF_DECLARED = "self-declared"  # a decision's identity source when the name was typed, not authenticated
MAX_PROVENANCE = 100_000  # characters of a decision's provenance JSON (a hit's stages and concepts: ~1 kB)

SQL_DOCUMENT_EXISTS = "SELECT count(*) FROM documents WHERE pmid = ?"
SQL_ACTIVE_FOR = """
SELECT decision_id FROM decisions
WHERE curator = ? AND schema_name = ? AND entity_key = ? AND pmid = ? AND superseded_by IS NULL
  AND coalesce(identity_source, 'self-declared') = ?
"""
SQL_INSERT_DECISION = """
INSERT INTO decisions (curator, schema_name, query, query_entities, entity_key, pmid, grade, answer, note, supersedes,
                       provenance, journal_seq, identity_source, adjudication)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING decision_id, CAST(created_at AS VARCHAR)
"""
SQL_REPLAY_DECISION = """
INSERT INTO decisions (decision_id, created_at, curator, schema_name, query, query_entities, entity_key, pmid, grade,
                       answer, note, supersedes, provenance, journal_seq, identity_source, adjudication)
VALUES (?, CAST(? AS TIMESTAMPTZ), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
RETURNING decision_id, CAST(created_at AS VARCHAR)
"""
SQL_DECISION_SUPERSEDES = "SELECT superseded_by, supersedes FROM decisions WHERE decision_id = ?"
SQL_SUPERSEDE = "UPDATE decisions SET superseded_by = ? WHERE decision_id = ?"
SQL_REACTIVATE = "UPDATE decisions SET superseded_by = NULL WHERE decision_id = ?"
SQL_DECISION_COLUMNS = (
    "decision_id, curator, schema_name, query, query_entities, pmid, grade, answer, note, "
    "CAST(created_at AS VARCHAR), superseded_by, coalesce(provenance, ''), "
    "coalesce(identity_source, 'self-declared'), coalesce(adjudication, false)"
)
SQL_LAST_ACTIVE = f"""
SELECT {SQL_DECISION_COLUMNS}, supersedes FROM decisions
WHERE curator = ? AND coalesce(identity_source, 'self-declared') = ? AND superseded_by IS NULL
ORDER BY decision_id DESC LIMIT 1
"""
SQL_ONE_DECISION = f"SELECT {SQL_DECISION_COLUMNS}, supersedes FROM decisions WHERE decision_id = ?"
SQL_LIST_DECISIONS = f"""
SELECT {SQL_DECISION_COLUMNS} FROM decisions
WHERE (? IS NULL OR curator = ?) AND (? IS NULL OR schema_name = ?) AND (? OR superseded_by IS NULL)
ORDER BY decision_id
"""
SQL_ON_DOCUMENTS = f"""
SELECT {SQL_DECISION_COLUMNS} FROM decisions
WHERE schema_name = ? AND pmid IN (SELECT unnest(?)) AND superseded_by IS NULL
ORDER BY decision_id
"""
SQL_FOR_RELATION = f"""
SELECT {SQL_DECISION_COLUMNS} FROM decisions
WHERE schema_name = ? AND entity_key = ? AND superseded_by IS NULL ORDER BY decision_id
"""
SQL_DELETE_CURATOR_RECORD = "DELETE FROM kb_records WHERE source = 'curator' AND source_id = ?"
SQL_DELETE_CURATOR_ENTITIES = "DELETE FROM kb_entities WHERE record_id = ?"
# For a replayed journal record written before the typed field: migration 11's rule, on that one decision.
SQL_LEGACY_ADJUDICATION = f"UPDATE decisions SET adjudication = true WHERE decision_id = ? AND {LEGACY_ADJUDICATION}"



def relation_key(schema: RelationSchema, values: Mapping[str, str]) -> str:
    """A partial relation's identity: its filled query entities, case- and space-folded."""
    folded = {t: " ".join(values.get(t, "").split()).casefold() for t in schema.query_types}
    return json.dumps({t: v for t, v in folded.items() if v}, sort_keys=True)


def relation_values(schema: RelationSchema, values: Mapping[str, str]) -> dict[str, str]:
    """The filled query slots of a partial relation, spacing tidied (what a decision and a worklist item store)."""
    return {t: " ".join(values.get(t, "").split()) for t in schema.query_types if values.get(t, "").strip()}


def _check_lengths(query_values: Mapping[str, str]) -> None:
    for entity_type, value in query_values.items():
        if len(value) > MAX_ANSWER:
            raise CurationError(
                f"the {entity_type} entity has {len(value)} characters; at most {MAX_ANSWER}: type the entity's name"
            )


def record_decision(
    con: duckdb.DuckDBPyConnection,
    curator: str,
    schema: RelationSchema,
    values: Mapping[str, str],
    pmid: str,
    grade: Grade,
    answer: str = "",
    note: str = "",
    provenance: str = "",
    identity_source: str = SELF_DECLARED,
    adjudication: bool = False,
) -> Decision:
    """Store one judgement (and the KB record its answer makes), atomically.

    Args:
        provenance: JSON text saying how the search found the document (its group, each stage's score
            and rank, the query concepts it mentions; :func:`curation.review.provenance.provenance_json`);
            "" when the decision was not made from a search (stored as NULL).
        identity_source: how ``curator`` is known: ``self-declared`` (a typed name, personal mode) or the
            source that authenticated it (``oidc``, ``proxy``, ``local``); :mod:`curation.access` decides.
        adjudication: the decision is an adjudicator's final grade. Only
            :func:`curation.workflows.annotation_queue.adjudicate` passes True, after ``require(ADJUDICATE)``;
            the note is free text and never makes one.

    Raises:
        CurationError: no curator name, unknown grade, unknown document, empty relation,
            or an over-long curator name, query entity, answer, note or provenance, or provenance that is not JSON.
    """
    curator = " ".join(curator.split())
    if not curator:
        raise CurationError("enter your name as curator before recording decisions")
    if len(curator) > MAX_CURATOR:
        raise CurationError(f"the curator name has {len(curator)} characters; at most {MAX_CURATOR}: shorten it")
    if grade not in GRADES:
        raise CurationError(f"grade must be one of {tuple(g.value for g in GRADES)}, got '{grade}'")
    grade = Grade(grade)  # written as its value, returned as the Grade
    query_values = relation_values(schema, values)
    if not query_values:
        raise CurationError(f"fill in at least one of {list(schema.query_types)} before judging documents")
    _check_lengths(query_values)
    answer, note = answer.strip(), note.strip()
    if len(answer) > MAX_ANSWER:
        raise CurationError(
            f"the {schema.answer} entity has {len(answer)} characters; at most {MAX_ANSWER}: type the entity's name"
        )
    if len(note) > MAX_NOTE:
        raise CurationError(f"the note has {len(note)} characters; at most {MAX_NOTE}: shorten it")
    provenance = provenance.strip()
    _check_provenance(provenance)
    if answer and grade == Grade.NOT_RELEVANT:
        raise CurationError(f"a document judged not relevant cannot give a {schema.answer}")
    query = schema.render_query(query_values)
    key = relation_key(schema, query_values)
    row = {
        "curator": curator, "schema_name": schema.name, "query": query,
        "query_entities": json.dumps(query_values, sort_keys=True), "entity_key": key, "pmid": pmid,
        "grade": grade.value, "answer": answer, "note": note, "provenance": provenance,
        "identity_source": identity_source, "adjudication": bool(adjudication),
        # the KB record an answer makes: each entity type with its value (the answer in the answer's slot)
        "kb_entities": [[t, answer if t == schema.answer else query_values.get(t, "")] for t in schema.entity_types]
        if answer else [],
    }
    with journaled(con) as journal:
        if not _scalar(con, SQL_DOCUMENT_EXISTS, [pmid]):
            raise CurationError(f"PMID {pmid} is not in the corpus; import its abstract before judging it")
        seq = journal.next_seq() if journal else None
        decision_id, created = apply_decision(con, row, seq=seq)
        if journal:
            journal.write("decide", {**row, "decision_id": decision_id, "created_at": str(created)})
    return Decision(
        decision_id,
        curator,
        schema.name,
        query,
        tuple(sorted(query_values.items())),
        pmid,
        grade,
        answer,
        note,
        str(created),
        None,
        provenance,
        identity_source,
        bool(adjudication),
    )


def apply_decision(con: duckdb.DuckDBPyConnection, row: Mapping[str, object], seq: int | None = None,
                   decision_id: int | None = None, created: str | None = None) -> tuple[int, str]:
    """Insert one decision row (fields as :func:`record_decision` journals them), supersede the curator's
    earlier one on the same (relation, document) and add the KB record its answer makes; inside the
    caller's transaction. ``decision_id`` and ``created`` are given when replaying the journal."""
    source = str(row.get("identity_source") or SELF_DECLARED)  # journal records older than team mode have none
    previous = [r[0] for r in con.execute(
        SQL_ACTIVE_FOR, [row["curator"], row["schema_name"], row["entity_key"], row["pmid"], source]).fetchall()]
    supersedes = previous[-1] if previous else None
    values = [row["curator"], row["schema_name"], row["query"], row["query_entities"], row["entity_key"],
              row["pmid"], row["grade"], row["answer"], row["note"], supersedes, row["provenance"] or None, seq,
              source, bool(row.get("adjudication", False))]
    if decision_id is None:
        decision_id, created = con.execute(SQL_INSERT_DECISION, values).fetchall()[0]
    else:
        decision_id, created = con.execute(SQL_REPLAY_DECISION, [decision_id, created, *values]).fetchall()[0]
    if "adjudication" not in row:  # a journal record older than the typed field: migration 11's rule decides
        con.execute(SQL_LEGACY_ADJUDICATION, [decision_id])
    for old in previous:
        con.execute(SQL_SUPERSEDE, [decision_id, old])
        _remove_curator_record(con, old)
    if row["answer"]:
        record = KBRecord(
            str(row["schema_name"]),
            tuple((str(t), str(v)) for t, v in row["kb_entities"]),
            str(row["pmid"]),
            "curator",
            f"D{decision_id}",
            (("curator", str(row["curator"])), ("grade", str(row["grade"])), ("decision_id", str(decision_id))),
        )
        add_kb_records(con, [record], origin=f"decision {decision_id}")
    return decision_id, created


def _check_provenance(provenance: str) -> None:
    if len(provenance) > MAX_PROVENANCE:
        raise CurationError(f"the decision's provenance has {len(provenance):,} characters; at most "
                            f"{MAX_PROVENANCE:,}: store the hit's stages and concepts, not the document")
    if provenance:
        try:
            json.loads(provenance)
        except json.JSONDecodeError as exc:
            raise CurationError(f"the decision's provenance is not JSON ({exc.msg} at character {exc.pos}); "
                                "pass what provenance_json(hit) returns") from None


def _remove_curator_record(con: duckdb.DuckDBPyConnection, decision_id: int) -> None:
    source_id = f"D{decision_id}"
    con.execute(SQL_DELETE_CURATOR_ENTITIES, [f"curator:{source_id}"])
    con.execute(SQL_DELETE_CURATOR_RECORD, [source_id])


def undo_last_decision(con: duckdb.DuckDBPyConnection, curator: str,
                       identity_source: str = SELF_DECLARED) -> Decision | None:
    """Withdraw the curator's latest active decision made under ``identity_source``; returns it, or None when
    there is none."""
    curator = " ".join(curator.split())
    with journaled(con) as journal:
        rows = con.execute(SQL_LAST_ACTIVE, [curator, identity_source]).fetchall()
        if not rows:
            return None
        *fields, supersedes = rows[0]
        decision = _decision(tuple(fields))
        withdraw(con, decision.decision_id, supersedes)
        if journal:
            journal.write("undo", {"decision_id": decision.decision_id, "curator": curator})
    return decision


def withdraw(con: duckdb.DuckDBPyConnection, decision_id: int, supersedes: int | None) -> None:
    """Mark a decision withdrawn and bring back the one it superseded (inside the caller's transaction)."""
    con.execute(SQL_SUPERSEDE, [decision_id, decision_id])
    _remove_curator_record(con, decision_id)
    if supersedes is not None:
        con.execute(SQL_REACTIVATE, [supersedes])


def get_decision(con: duckdb.DuckDBPyConnection, decision_id: int) -> Decision | None:
    """One decision by id (active or not), or None."""
    rows = con.execute(SQL_ONE_DECISION, [decision_id]).fetchall()
    return _decision(tuple(rows[0][:-1])) if rows else None


def withdraw_decision(con: duckdb.DuckDBPyConnection, decision_id: int, by: str) -> Decision:
    """Withdraw one active decision (whoever made it; the caller checked that ``by`` may), journaled like an undo.

    Raises:
        CurationError: no such decision, or it is no longer active.
    """
    with journaled(con) as journal:
        rows = con.execute(SQL_ONE_DECISION, [decision_id]).fetchall()
        if not rows:
            raise CurationError(f"there is no decision {decision_id}")
        *fields, supersedes = rows[0]
        decision = _decision(tuple(fields))
        if decision.superseded_by is not None:
            raise CurationError(f"decision {decision_id} is no longer active (superseded or withdrawn)")
        withdraw(con, decision_id, supersedes)
        if journal:
            journal.write("undo", {"decision_id": decision_id, "curator": decision.curator, "by": by})
    return decision


def _decision(row: tuple) -> Decision:
    (decision_id, curator, schema, query, entities, pmid, grade, answer, note, created, superseded, provenance,
     source, adjudication) = row
    return Decision(
        decision_id,
        curator,
        schema,
        query,
        tuple(sorted(json.loads(entities).items())),
        pmid,
        Grade(grade),
        answer,
        note,
        created,
        superseded,
        provenance,
        source,
        bool(adjudication),
    )


def list_decisions(
    con: duckdb.DuckDBPyConnection,
    curator: str | None = None,
    schema: str | None = None,
    include_superseded: bool = False,
) -> list[Decision]:
    """Decisions in the order they were made (active ones only, unless asked)."""
    rows = con.execute(SQL_LIST_DECISIONS, [curator, curator, schema, schema, include_superseded]).fetchall()
    return [_decision(row) for row in rows]


def decisions_on_documents(con: duckdb.DuckDBPyConnection, schema: str, pmids: Sequence[str]) -> list[Decision]:
    """Active decisions of every curator on the given documents, for any relation of ``schema``, in order made."""
    pmids = list(dict.fromkeys(pmids))
    if not pmids:
        return []
    return [_decision(row) for row in con.execute(SQL_ON_DOCUMENTS, [schema, pmids]).fetchall()]


def decisions_for(con: duckdb.DuckDBPyConnection, schema: RelationSchema, values: Mapping[str, str]) -> list[Decision]:
    """Active decisions of every curator on one partial relation."""
    key = relation_key(schema, relation_values(schema, values))
    return [_decision(row) for row in con.execute(SQL_FOR_RELATION, [schema.name, key]).fetchall()]
