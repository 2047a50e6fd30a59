"""Backups taken from the open store, and ``recover`` on stores that will not open (in one process).

The kill -9 tests with real processes, and recovery from the WAL a killed process left, are in
test_durability.py.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from curation.cli import main
from curation.errors import CurationError, StoreLockedError
from curation.grades import Grade
from curation.ops.backup import backup_due, backup_if_due, backup_store, backups_dir_for, list_backups, verify_backup
from curation.ops.recovery import open_failure, recover_store, wal_path
from curation.records import Document
from curation.schemas import PO
from curation.store.base import transaction
from curation.store.corpus import add_documents
from curation.store.decisions import record_decision
from curation.store.migrations import MIGRATIONS
from curation.store.opening import open_store

BRAF = {"Gene": "BRAF", "Variant": "V600E"}


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "store.duckdb"
    con = open_store(path)
    with transaction(con):
        add_documents(con, [Document(str(3000000 + n), f"Title {n}", f"Abstract {n}.") for n in range(5)])
    con.close()
    return path


def _decide(con, n: int, start: int = 0) -> list[int]:
    return [
        record_decision(
            con, "ana", PO, {"Gene": f"G{i}", "Variant": "V600E"}, str(3000000 + i % 5), Grade.COMPLETE, answer=f"d{i}"
        ).decision_id
        for i in range(start, start + n)
    ]


def _decision_ids(path: Path) -> list[int]:
    con = open_store(path)
    try:
        return [row[0] for row in con.execute("SELECT decision_id FROM decisions ORDER BY 1").fetchall()]
    finally:
        con.close()


def _without_journal(db: Path) -> None:
    """Move the decision journal away: these tests are about what the WAL and the backups alone give back
    (with the journal, recovery puts back every decision: tests/curation/store/test_journal.py)."""
    folder = db.with_name(db.name + ".journal")
    folder.rename(folder.with_name(folder.name + "-elsewhere"))


def _leave_wal(con) -> None:
    """Close without folding the WAL into the file: what a killed process leaves behind."""
    con.execute("PRAGMA disable_checkpoint_on_shutdown")
    con.close()


def test_backup_is_a_verified_copy_and_only_the_newest_are_kept(db, tmp_path):
    con = open_store(db)
    ids = _decide(con, 3)
    folder = tmp_path / "backups"
    made = [backup_store(con, folder, keep=2) for _ in range(3)]
    _decide(con, 1, start=3)
    con.close()

    kept = list_backups(folder)
    assert [b.folder for b in kept] == [made[2].folder, made[1].folder]
    assert not made[0].folder.exists()
    assert [p.name for p in folder.iterdir() if p.name.startswith(".")] == []  # no half-written backup left
    newest = kept[0]
    assert verify_backup(newest) == []
    assert newest.counts["decisions"] == 3 and newest.counts["documents"] == 5 and newest.counts["kb_records"] == 3
    assert newest.manifest["schema_version"] == MIGRATIONS[-1][0]
    assert newest.manifest["decisions"]["last_id"] == ids[-1]
    assert _decision_ids(newest.file) == ids  # a DuckDB file that opens as a store


def test_backup_taken_while_another_cursor_writes_is_one_snapshot(db, tmp_path):
    con = open_store(db)
    stop = threading.Event()

    def write() -> None:
        cursor = con.cursor()
        i = 0
        while not stop.is_set():
            _decide(cursor, 1, start=i)
            i += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        made = [backup_store(con.cursor(), tmp_path / "backups", keep=5) for _ in range(4)]
    finally:
        stop.set()
        writer.join()
    con.close()
    for backup in made:
        copy = duckdb.connect(str(backup.file), read_only=True)
        active = copy.execute("SELECT count(*) FROM decisions WHERE superseded_by IS NULL AND answer <> ''").fetchall()
        records = copy.execute("SELECT count(*) FROM kb_records WHERE source = 'curator'").fetchall()
        copy.close()
        assert active == records  # a decision and its KB record: both in the backup, or neither
    assert made[-1].counts["decisions"] > 0


def test_backup_is_due_by_the_newest_backup_time(db, tmp_path):
    folder = tmp_path / "backups"
    assert backup_due(folder, 30)  # none yet
    assert not backup_due(folder, 0)  # 0: automatic backups off
    con = open_store(db)
    assert backup_if_due(con, folder, 30) is not None
    assert backup_if_due(con, folder, 30) is None  # just made one
    con.close()
    later = datetime.now(UTC) + timedelta(minutes=31)
    assert backup_due(folder, 30, now=later)
    assert backup_due(folder, 30, now=datetime.now(UTC) - timedelta(days=1))  # clock set back
    assert backups_dir_for(tmp_path / "root", db) == tmp_path / "root" / "store"


def test_half_written_backup_of_a_dead_process_is_ignored_then_removed(db, tmp_path):
    folder = tmp_path / "backups"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    partial = folder / f".backup-20260101T000000.000000Z.partial-{gone.stdout.strip()}"
    partial.mkdir(parents=True)
    (partial / "store.duckdb").write_bytes(b"half")
    (folder / "backup-20260101T000000.000000Z").mkdir()  # renamed but no manifest: not a backup
    assert list_backups(folder) == []
    con = open_store(db)
    backup_store(con, folder)
    con.close()
    assert not partial.exists()
    assert len(list_backups(folder)) == 1


def test_a_damaged_backup_is_reported(db, tmp_path):
    con = open_store(db)
    made = backup_store(con, tmp_path / "backups")
    con.close()
    with open(made.file, "r+b") as handle:
        handle.seek(made.file.stat().st_size // 2)
        handle.write(b"\xff" * 64)
    assert "does not match the checksum" in verify_backup(made)[0]


def test_recover_leaves_a_healthy_store_alone(db, tmp_path):
    before = db.read_bytes()
    report = recover_store(db, tmp_path / "backups")
    assert report.healthy and report.lines() == [f"{db} opens normally: nothing to recover."]
    assert list(tmp_path.glob("*.damaged-*")) == [] and db.read_bytes() == before


def test_recover_refuses_a_store_another_process_holds(db, tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import duckdb, sys
            con = duckdb.connect({str(db)!r})
            print("ready", flush=True)
            sys.stdin.readline()
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(StoreLockedError, match=f"process {holder.pid}"):
            recover_store(db, tmp_path / "backups")
    finally:
        holder.communicate("\n", timeout=30)
    assert list(tmp_path.glob("*.damaged-*")) == []


def test_recover_with_nothing_to_restore_moves_nothing(db, tmp_path):
    with open(db, "r+b") as handle:
        handle.write(b"\0" * 12288)
    before = db.read_bytes()
    with pytest.raises(CurationError, match="nothing to restore.*Nothing was moved"):
        recover_store(db, tmp_path / "backups")
    assert db.read_bytes() == before and list(tmp_path.glob("*.damaged-*")) == []


def test_recover_with_a_damaged_wal_header_puts_back_the_last_checkpoint(db, tmp_path):
    folder = tmp_path / "backups"
    con = open_store(db)
    saved = _decide(con, 4)
    backup_store(con, folder)  # checkpoints first: the store file holds these four
    _decide(con, 3, start=4)
    _leave_wal(con)
    with open(wal_path(db), "r+b") as handle:  # damage the WAL's header: no entry position is reported
        handle.seek(16)
        handle.write(b"\xff" * 8)
    failure = open_failure(db)
    assert failure and "WAL" in failure and "byte position" not in failure

    _without_journal(db)
    report = recover_store(db, folder, now=datetime(2026, 5, 22, 10, 15, tzinfo=UTC))
    # no WAL prefix replays anything (one shorter than the header is ignored): the checkpoint's state
    assert report.decisions[0] == 4 and _decision_ids(db) == saved
    assert any(line.startswith("checkpoint: ") and "4 decision rows" in line for line in report.candidates)
    assert [p.name for p in report.kept_aside] == ["store.duckdb.damaged-20260522T101500Z",
                                                   "store.duckdb.damaged-20260522T101500Z.wal"]
    assert report.report_file.name == "store.duckdb.recovery-20260522T101500Z.json"


def test_recover_skips_a_damaged_backup_for_an_older_good_one(db, tmp_path):
    folder = tmp_path / "backups"
    con = open_store(db)
    first = _decide(con, 2)
    older = backup_store(con, folder)
    _decide(con, 2, start=2)
    newer = backup_store(con, folder)
    con.close()
    with open(newer.file, "r+b") as handle:
        handle.seek(newer.file.stat().st_size // 2)
        handle.write(b"\xff" * 64)
    with open(db, "r+b") as handle:
        handle.write(b"\0" * 12288)

    _without_journal(db)
    report = recover_store(db, folder)
    assert report.restored_kind == "backup" and str(older.folder) in report.restored_from
    assert any(newer.folder.name in line and "checksum" in line for line in report.rejected)
    assert _decision_ids(db) == first


@pytest.mark.parametrize("keep", ["0", "-1"])
def test_a_keep_below_one_is_refused_and_deletes_nothing(db, tmp_path, capsys, keep):
    folder = tmp_path / "backups"
    for _ in range(2):
        assert main(["backup", "--db", str(db), "--dir", str(folder)]) == 0
    kept = [b.folder for b in list_backups(folder)]
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:  # refused by the argument parser, before the store is opened
        main(["backup", "--db", str(db), "--dir", str(folder), "--keep", keep])
    assert stopped.value.code == 2 and "--keep" in capsys.readouterr().err
    assert [b.folder for b in list_backups(folder)] == kept
    con = open_store(db)
    try:
        with pytest.raises(CurationError, match="at least 1"):
            backup_store(con, folder, keep=int(keep))
    finally:
        con.close()
    assert [b.folder for b in list_backups(folder)] == kept


def test_cli_backup_and_recover(db, tmp_path, capsys):
    folder = tmp_path / "backups"
    assert main(["backup", "--db", str(db), "--dir", str(folder)]) == 0
    assert "backed up" in capsys.readouterr().out and len(list_backups(folder)) == 1
    assert main(["recover", "--db", str(db), "--dir", str(folder)]) == 0
    assert "nothing to recover" in capsys.readouterr().out
    with open(db, "r+b") as handle:
        handle.write(b"\0" * 12288)
    assert main(["recover", "--db", str(db), "--dir", str(folder), "--json"]) == 0
    assert '"restored_kind": "backup"' in capsys.readouterr().out
    assert main(["recover", "--db", str(db), "--dir", str(tmp_path / "empty")]) == 0  # healthy again


def test_recover_finds_the_longest_wal_prefix_that_replays_when_no_entry_is_named(db, tmp_path, monkeypatch):
    import curation.ops.recovery

    folder = tmp_path / "backups"
    con = open_store(db)
    first = _decide(con, 3)
    backup_store(con, folder)
    _decide(con, 12, start=3)
    _leave_wal(con)
    wal = wal_path(db)
    with open(wal, "r+b") as handle:  # a checksum error, but recover is told no position (as after an internal error)
        handle.seek(wal.stat().st_size * 2 // 3)
        handle.write(b"\xff" * 16)
    real = open_failure(db)
    position = int(curation.ops.recovery.CORRUPT_WAL_ENTRY.search(real).group(1))
    monkeypatch.setattr(curation.ops.recovery, "open_failure",
                        lambda path: "INTERNAL Error: Failure while replaying WAL")

    cut = tmp_path / "cut" / "store.duckdb"  # what replaying up to the named entry would give
    cut.parent.mkdir()
    cut.write_bytes(db.read_bytes())
    wal_path(cut).write_bytes(wal.read_bytes()[:position])
    expected = _decision_ids(cut)

    _without_journal(db)
    report = recover_store(db, folder)
    assert report.restored_kind == "wal-prefix" and "longest prefix that replays" in report.restored_from
    ids = _decision_ids(db)
    assert ids == expected and ids[:3] == first and 3 < len(ids) < 15  # up to the damage, not beyond
    assert list(tmp_path.glob(".store.duckdb.recovery-*")) == []  # scratch copies removed
