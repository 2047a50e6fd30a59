"""The decision journal: every acknowledged decision survives a store that lost it, and damage is reported."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from curation.config import PROJECT_ROOT
from curation.errors import CurationError, StoreDamagedError
from curation.grades import Grade
from curation.ops import backup as backup_module
from curation.ops.backup import backup_store, backups_dir_for, list_backups
from curation.ops.recovery import recover_store, wal_path
from curation.records import Document
from curation.schemas import PO
from curation.store.base import connect, transaction
from curation.store.corpus import add_documents
from curation.store.decisions import list_decisions, record_decision, undo_last_decision
from curation.store.journal import Journal, JournalMismatchError, folder_for
from curation.store.journaled import journaled
from curation.store.opening import open_store
from curation.store.reconcile import acknowledge_notice, open_notices, reconcile

PMIDS = [str(3000000 + n) for n in range(5)]


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "store.duckdb"
    con = open_store(path)
    with transaction(con):
        add_documents(con, [Document(p, f"Title {p}", f"Abstract {p}.") for p in PMIDS])
    con.close()
    return path


def _decide(con, n: int, start: int = 0, curator: str = "ana") -> list[int]:
    return [
        record_decision(
            con, curator, PO, {"Gene": f"G{i}", "Variant": "V600E"}, PMIDS[i % 5], Grade.COMPLETE, answer=f"d{i}",
            note=f"note {i} <b>", provenance=json.dumps({"group": "all", "rank": i}),
        ).decision_id
        for i in range(start, start + n)
    ]


def _state(path: Path) -> dict:
    """Everything a decision writes, read without reconciling (a plain connection)."""
    con = connect(path, read_only=True)
    try:
        return {
            "decisions": con.execute(
                "SELECT decision_id, curator, pmid, grade, answer, note, CAST(created_at AS VARCHAR), superseded_by, "
                "supersedes, provenance, journal_seq FROM decisions ORDER BY 1").fetchall(),
            "kb": con.execute("SELECT source_id, pmid FROM kb_records WHERE source = 'curator' ORDER BY 1").fetchall(),
        }
    finally:
        con.close()


def _snapshot(path: Path, to: Path) -> None:
    """A copy of the store file as it is now (checkpointed: no WAL)."""
    con = open_store(path)
    con.execute("CHECKPOINT")
    con.close()
    shutil.copyfile(path, to)


def test_decisions_lost_by_the_store_are_put_back_once_with_their_ids_times_and_records(db, tmp_path):
    con = open_store(db)
    _decide(con, 3)
    con.close()
    _snapshot(db, tmp_path / "older.duckdb")
    con = open_store(db)
    _decide(con, 4, start=3)
    undo_last_decision(con, "ana")  # the undo is journaled too
    con.close()
    full = _state(db)
    assert len(full["decisions"]) == 7 and len(full["kb"]) == 6

    shutil.copyfile(tmp_path / "older.duckdb", db)  # the store goes back: 4 decisions and an undo lost
    assert len(_state(db)["decisions"]) == 3
    con = open_store(db)
    notices = open_notices(con)
    con.close()
    assert _state(db) == full  # same ids, times, notes, provenance, supersession, KB records
    assert [n.kind for n in notices] == ["repaired"]
    assert "4 decisions and 1 undo" in notices[0].message and "journal" in notices[0].message

    con = open_store(db)  # idempotent: a second open finds nothing to do and says nothing new
    assert len(open_notices(con)) == 1
    again = reconcile(con, db)
    assert not again.repaired and not again.notices
    assert [d.decision_id for d in list_decisions(con)] == [1, 2, 3, 4, 5, 6]
    new = _decide(con, 1, start=10)[0]  # the sequence was moved past the replayed ids
    assert new == 8
    acknowledge_notice(con, notices[0].notice_id, "ana")
    assert open_notices(con) == []
    con.close()


def test_a_torn_last_line_is_reported_with_its_line_and_kept_aside(db):
    con = open_store(db)
    _decide(con, 3)
    con.close()
    segment = Journal.beside(db).segments()[-1]
    lines = segment.read_text().count("\n")  # three decisions and their acknowledgements
    with open(segment, "ab") as out:  # a crash in the middle of writing a line
        out.write(b'{"seq": 4, "store": "x", "op": "deci')
    con = open_store(db)
    notices = open_notices(con)
    assert [n.kind for n in notices] == ["journal_damaged"]
    assert f"{segment.name}, line {lines + 1}: torn last line" in notices[0].message
    aside = list(segment.parent.glob(f"damaged-*-{segment.name}"))
    assert len(aside) == 1 and aside[0].read_bytes().endswith(b'"op": "deci')
    assert segment.read_text().count("\n") == lines and segment.read_text().endswith("\n")  # the good lines stay
    assert len(list_decisions(con)) == 3  # nothing lost, nothing invented
    _decide(con, 1, start=3)  # and the journal goes on from record 4
    con.close()
    assert [r.seq for r in Journal.beside(db).scan().records] == [1, 2, 3, 4]


def test_a_flipped_byte_inside_the_journal_is_found_by_its_checksum(db, tmp_path):
    con = open_store(db)
    _decide(con, 3)
    con.close()
    _snapshot(db, tmp_path / "empty.duckdb")
    segment = Journal.beside(db).segments()[-1]
    text = segment.read_text().replace('"grade":"complete"', '"grade":"partial"', 1)
    segment.write_text(text)
    con = open_store(db)
    (notice,) = open_notices(con)
    # line 1 is the segment's header, line 2 its first record
    assert notice.kind == "journal_damaged" and "line 2: checksum does not match" in notice.message
    con.close()


def test_a_journal_from_another_store_is_refused_and_nothing_is_changed(db, tmp_path):
    con = open_store(db)
    _decide(con, 2)
    con.close()
    other = tmp_path / "other.duckdb"
    open_store(other).close()
    shutil.rmtree(folder_for(other), ignore_errors=True)
    shutil.copytree(folder_for(db), folder_for(other))  # a journal left beside a different store
    before = other.read_bytes()
    with pytest.raises(JournalMismatchError, match="journal of another store") as caught:
        open_store(other)
    assert str(folder_for(other)) in str(caught.value) and "move that folder aside" in str(caught.value)
    assert other.read_bytes() == before
    assert isinstance(caught.value, StoreDamagedError)  # the app and the CLI show it as a store that will not open


def test_reconcile_repairs_a_store_that_opened_silently_after_its_wal_was_cut(db):
    con = open_store(db)
    con.execute("CHECKPOINT")
    _decide(con, 5)
    con.execute("PRAGMA disable_checkpoint_on_shutdown")  # the decisions are in the WAL only
    con.close()
    wal = wal_path(db)
    os.truncate(wal, wal.stat().st_size // 2)  # what a damaged disk can leave: DuckDB drops the torn tail silently
    plain = connect(db)
    silently = plain.execute("SELECT count(*) FROM decisions").fetchall()[0][0]
    plain.close()
    assert silently < 5  # DuckDB itself opens it and says nothing
    con = open_store(db)
    assert len(list_decisions(con)) == 5
    (notice,) = open_notices(con)
    assert notice.kind == "repaired" and f"{5 - silently} decision" in notice.message
    con.close()


def test_a_read_only_open_refuses_a_cut_wal_instead_of_showing_part_of_the_store(db, capsys):
    from curation.cli import main
    from curation.errors import StoreUncheckpointedError

    con = open_store(db)
    con.execute("CHECKPOINT")
    _decide(con, 60)
    con.execute("PRAGMA disable_checkpoint_on_shutdown")  # the 60 decisions are in the WAL only
    con.close()
    con = open_store(db, read_only=True)  # a whole WAL (what the app's server leaves when it stops) is read
    assert len(list_decisions(con)) == 60
    con.close()
    wal = wal_path(db)
    os.truncate(wal, wal.stat().st_size // 2)  # a read-only open would replay about half, silently
    with pytest.raises(StoreUncheckpointedError, match=r"store\.duckdb\.wal .*recover --db"):
        open_store(db, read_only=True)
    capsys.readouterr()
    assert main(["export", "decisions", "--db", str(db)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and str(wal) in err
    assert wal.stat().st_size > 0  # the refusal changed nothing: the read-write open still has the log to copy
    open_store(db).close()  # what the message asks for: it replays the log and puts back the rest from the journal
    con = open_store(db, read_only=True)
    assert len(list_decisions(con)) == 60
    con.close()


def test_a_decision_whose_transaction_fails_after_its_journal_line_is_voided(db):
    con = open_store(db)
    _decide(con, 1)
    with pytest.raises(RuntimeError), journaled(con) as writer:
        writer.next_seq()
        writer.write("undo", {"decision_id": 1, "curator": "ana"})
        raise RuntimeError("the commit failed")
    con.close()
    records = Journal.beside(db).scan().records
    assert [(r.seq, r.op) for r in records] == [(1, "decide"), (2, "undo"), (3, "void")]
    assert records[2].data == {"voids": 2}
    con = open_store(db)
    assert [d.decision_id for d in list_decisions(con)] == [1]  # the undo never happened
    assert open_notices(con) == []
    con.close()


def test_refused_input_writes_nothing_to_the_journal(db):
    con = open_store(db)
    with pytest.raises(CurationError, match="not in the corpus"):
        record_decision(con, "ana", PO, {"Gene": "BRAF"}, "999", Grade.COMPLETE)
    con.close()
    assert Journal.beside(db).scan().records == []


def test_backups_rotate_the_journal_and_a_store_is_rebuilt_from_a_backup_and_the_journal(db, tmp_path):
    folder = tmp_path / "backups"
    con = open_store(db)
    _decide(con, 2)
    backup_store(con, folder, keep=2)
    _decide(con, 2, start=2)
    backup_store(con, folder, keep=2)
    _decide(con, 2, start=4)
    backup_store(con, folder, keep=2)  # the first backup is removed, and the journal segment only it needed
    _decide(con, 3, start=6)
    undo_last_decision(con, "ana")
    con.close()
    full = _state(db)
    journal = Journal.beside(db)
    # the oldest kept backup holds records up to 4: the segments of records 1-2 and 3-4 are no longer needed
    assert [r.seq for r in journal.scan().records] == [5, 6, 7, 8, 9, 10]
    assert len(journal.segments()) == 2
    oldest = list_backups(folder)[-1]
    assert oldest.manifest["journal_seq"] == 4

    with open(db, "r+b") as handle:  # the store file is destroyed
        handle.write(b"\0" * 12288)
    report = recover_store(db, folder)
    assert report.restored_kind == "backup"
    assert report.journal is not None and report.journal.decisions_replayed == 3 and report.journal.undos_replayed == 1
    assert _state(db) == full
    assert any("put back from the decision journal: 3 decisions, 1 undos" in line for line in report.lines())


def test_a_missing_journal_is_reported_not_passed_over(db):
    con = open_store(db)
    _decide(con, 2)
    con.close()
    shutil.rmtree(folder_for(db))
    con = open_store(db)
    (notice,) = open_notices(con)
    assert notice.kind == "journal_behind" and "journal is missing" in notice.message
    _decide(con, 1, start=2)
    con.close()
    assert [r.seq for r in Journal.beside(db).scan().records] == [3]  # it goes on from the store's count


KILLED_BEFORE_COMMIT = """
import os, sys
from curation.grades import Grade
from curation.schemas import PO
from curation.store import decisions
from curation.store.opening import open_store
db, pmid = sys.argv[1], sys.argv[2]
con = open_store(db)
decisions.record_decision(con, "ana", PO, {"Gene": "G0", "Variant": "V600E"}, pmid, Grade.COMPLETE)
from curation.store import journaled
write = journaled.Writer.write
def write_then_die(self, op, data):
    write(self, op, data)
    os._exit(9)  # the journal line is on disk; the process dies before the store's COMMIT
journaled.Writer.write = write_then_die
decisions.record_decision(con, "ana", PO, {"Gene": "G1", "Variant": "V600E"}, pmid, Grade.PARTIAL)
"""


def test_a_decision_killed_between_its_journal_line_and_commit_is_restored_as_never_confirmed(db):
    child = subprocess.run([sys.executable, "-c", KILLED_BEFORE_COMMIT, str(db), PMIDS[0]], cwd=PROJECT_ROOT,
                           env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}, capture_output=True, text=True)
    assert child.returncode == 9, child.stderr
    assert len(_state(db)["decisions"]) == 1  # the store never committed the second decision
    con = open_store(db)
    notices = open_notices(con)
    assert [d.decision_id for d in list_decisions(con)] == [1, 2]  # kept: the journal holds it
    con.close()
    assert [n.kind for n in notices] == ["unconfirmed"]
    message = notices[0].message
    assert "had been told" not in message
    assert "recovered, never confirmed" in message and "decision 2" in message and "no curator was told" in message


@pytest.mark.parametrize("backed_up", [True, False], ids=["a-backup-holds-them", "no-backup"])
def test_a_double_fault_says_how_many_decisions_the_journal_cannot_account_for(db, tmp_path, monkeypatch, backed_up):
    root = tmp_path / "backups"
    monkeypatch.setenv("CURATION_BACKUPS_DIR", str(root))
    folder = backups_dir_for(root, db)
    con = open_store(db)
    _decide(con, 2)
    backup_store(con, folder, keep=3)  # an older backup: records up to 2
    con.execute("CHECKPOINT")
    if backed_up:  # a backup taken while a write was in flight skips its CHECKPOINT: the WAL keeps its decisions
        monkeypatch.setattr(backup_module, "_checkpoint", lambda con: False)
        _decide(con, 60, start=2)
        made = backup_store(con, folder, keep=3)
        assert made.manifest["journal_seq"] == 62
    else:
        _decide(con, 60, start=2)
    con.execute("PRAGMA disable_checkpoint_on_shutdown")  # the 60 decisions are in the WAL only
    con.close()
    segment = next(p for p in Journal.beside(db).segments() if '"seq":3,' in p.read_text())  # records 3-62
    wal = wal_path(db)
    os.truncate(wal, wal.stat().st_size // 2)  # both cut: the store opens silently with a prefix
    os.truncate(segment, segment.stat().st_size // 2 + 7)  # and the journal ends in a torn line
    con = open_store(db)
    lost = 62 - len(list_decisions(con))
    notices = open_notices(con)
    con.close()
    assert lost >= 20, notices
    (cut,) = [n for n in notices if n.kind == "journal_cut"]
    assert f"cannot account for {lost} decisions" in cut.message
    if backed_up:
        assert f"{made.folder} holds them" in cut.message
    else:
        assert f"No backup in {folder} holds them" in cut.message
    assert not [n for n in notices if n.kind == "unconfirmed"]  # a cut acknowledgement is not a kill
    con = open_store(db)  # reported once; new decisions take seqs past the cut ones
    assert len(open_notices(con)) == len(notices) and not reconcile(con, db).notices
    _decide(con, 1, start=70)
    con.close()
    assert Journal.beside(db).scan().records[-1].seq == 63


def test_a_torn_acknowledgement_is_not_reported_as_a_decision_nobody_was_told_of(db):
    """The WAL and the journal's last line (decision 3's ack) both cut: whether a curator was told is unknowable."""
    con = open_store(db)
    _decide(con, 2)
    con.execute("CHECKPOINT")
    _decide(con, 1, start=2)  # confirmed to the curator: its ack is the journal's last line
    con.execute("PRAGMA disable_checkpoint_on_shutdown")
    con.close()
    os.truncate(wal_path(db), 0)  # the store loses decision 3
    segment = Journal.beside(db).segments()[-1]
    assert '"op":"ack"' in segment.read_text().splitlines()[-1]
    os.truncate(segment, segment.stat().st_size - 9)  # and the ack is torn
    con = open_store(db)
    notices = open_notices(con)
    assert [d.decision_id for d in list_decisions(con)] == [1, 2, 3]
    con.close()
    kinds = [n.kind for n in notices]
    assert "unconfirmed" not in kinds and "repaired" not in kinds, kinds
    (uncertain,) = [n for n in notices if n.kind == "uncertain"]
    assert "decision 3" in uncertain.message and "cannot be known" in uncertain.message
    assert "journal_damaged" in kinds
