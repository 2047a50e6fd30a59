"""kill -9 in the middle of curators' writes, with real processes, and recovery from a WAL that will not replay.

A child process records decisions through ``curation.store.decisions.record_decision`` (the Curate page's code path) and
prints ``ack <decision id>`` only after it returned, i.e. after the commit. The parent SIGKILLs it
mid-stream, reopens the store and checks that every acknowledged decision is there, that nothing
half-written is (a decision's answer and its KB record are one transaction), and, for the recovery
tests, damages the WAL the killed process left and runs ``python -m curation recover`` for real.
"""

from __future__ import annotations

import os
import queue
import random
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import duckdb
import pytest

from curation.config import PROJECT_ROOT
from curation.ops.backup import list_backups, verify_backup
from curation.ops.recovery import wal_path
from curation.records import Document
from curation.store.base import transaction
from curation.store.corpus import add_documents
from curation.store.opening import open_store

WRITER = textwrap.dedent(
    """
    import sys
    from curation.store.decisions import record_decision
    from curation.store.opening import open_store
    from curation.grades import Grade
    from curation.ops.backup import backup_store
    from curation.schemas import PO

    db, start, answers, backup_every, backups, stop = sys.argv[1:7]
    start, backup_every, stop = int(start), int(backup_every), int(stop)
    con = open_store(db)
    pmids = [row[0] for row in con.execute("SELECT pmid FROM documents ORDER BY pmid").fetchall()]
    print("ready", flush=True)
    for i in range(start, start + stop):
        if backup_every and i > start and (i - start) % backup_every == 0:
            print("backup-start", flush=True)
            made = backup_store(con, backups, keep=3)
            print("backup-done", made.folder.name, flush=True)
        answer = f"drug{i}" if answers == "1" and i % 2 == 0 else ""
        grade = Grade.COMPLETE if answer else (Grade.PARTIAL, Grade.NOT_RELEVANT)[i % 2]
        # a few genes and curators, so later judgements supersede earlier ones (UPDATEs, KB record removals)
        decision = record_decision(
            con, f"curator{i % 3}", PO, {"Gene": f"GENE{i % 5}", "Variant": "V600E"},
            pmids[i % len(pmids)], grade, answer=answer, note=f"note {i}",
        )
        print("ack", decision.decision_id, answer or "-", flush=True)
    print("idle", flush=True)
    sys.stdin.readline()  # wait to be killed: the WAL stays as it is (no checkpoint on close)
    """
)


def _make_store(path: Path, documents: int = 12) -> None:
    con = open_store(path)
    with transaction(con):
        docs = [Document(f"{2000000 + n}", f"BRAF V600E case {n}", f"Abstract {n}.") for n in range(documents)]
        add_documents(con, docs)
    con.close()


class Writer:
    """The child process and the lines it printed (read on a thread so a hung child cannot hang the test)."""

    def __init__(self, db: Path, start: int, answers: bool, backup_every: int = 0, backups: Path | None = None,
                 stop: int = 10_000) -> None:
        env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
        args = [str(db), str(start), "1" if answers else "0", str(backup_every), str(backups or ""), str(stop)]
        self.process = subprocess.Popen(
            [sys.executable, "-c", WRITER, *args], cwd=PROJECT_ROOT, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.acks: list[tuple[int, str]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def next_line(self) -> str:
        try:
            line = self.lines.get(timeout=60)
        except queue.Empty:
            self.kill()
            pytest.fail("the writer printed nothing for 60 s")
        if line is None:
            pytest.fail(f"the writer ended early: {self.process.stderr.read()[-2000:]}")
        if line.startswith("ack "):
            _, decision_id, answer = line.split()
            self.acks.append((int(decision_id), "" if answer == "-" else answer))
        return line.strip()

    def wait_for(self, prefix: str, acks: int = 0) -> None:
        while not (self.next_line().startswith(prefix) and len(self.acks) >= acks):
            pass

    def kill(self) -> list[tuple[int, str]]:
        """SIGKILL; then every ack already in the pipe counts too (it was printed after its commit)."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        while (line := self.lines.get(timeout=30)) is not None:
            if line.startswith("ack ") and line.endswith("\n"):
                _, decision_id, answer = line.split()
                self.acks.append((int(decision_id), "" if answer == "-" else answer))
        return self.acks


def _check_store(db: Path, acked: list[tuple[int, str]], rounds: int) -> dict[int, tuple[str, int | None]]:
    """Every acknowledged decision is there with its answer; curator KB records match active decisions."""
    con = open_store(db)
    try:
        rows = {
            decision_id: (answer, superseded_by)
            for decision_id, answer, superseded_by in con.execute(
                "SELECT decision_id, answer, superseded_by FROM decisions"
            ).fetchall()
        }
        missing = [decision_id for decision_id, _ in acked if decision_id not in rows]
        assert not missing, f"acknowledged decisions lost after kill -9: {missing}"
        assert all(rows[decision_id][0] == answer for decision_id, answer in acked)
        # at most one committed-but-not-yet-printed decision per kill, nothing else
        assert len(rows) <= len(acked) + rounds
        active_answers = {f"D{d}" for d, (answer, superseded) in rows.items() if answer and superseded is None}
        records = {r[0] for r in con.execute("SELECT source_id FROM kb_records WHERE source = 'curator'").fetchall()}
        assert records == active_answers, "a decision's answer and its KB record must be written together"
    finally:
        con.close()
    return rows


@pytest.mark.parametrize("answers", [False, True], ids=["grades", "answers"])
def test_every_acknowledged_decision_survives_kill_9(tmp_path, answers):
    db = tmp_path / "store.duckdb"
    _make_store(db)
    chooser = random.Random(7)
    acked: list[tuple[int, str]] = []
    rounds = 5
    for round_ in range(rounds):
        writer = Writer(db, start=round_ * 1000, answers=answers)
        writer.wait_for("ack", acks=chooser.randint(5, 60))
        acked += writer.kill()  # mid-write: the next record_decision is under way
        _check_store(db, acked, round_ + 1)
    assert len(acked) >= 5 * rounds
    assert len({d for d, _ in acked}) == len(acked)


def test_kill_9_during_a_backup_leaves_the_store_and_earlier_backups_whole(tmp_path):
    db, backups = tmp_path / "store.duckdb", tmp_path / "backups"
    _make_store(db)
    acked: list[tuple[int, str]] = []
    for round_ in range(3):
        writer = Writer(db, start=round_ * 1000, answers=True, backup_every=4, backups=backups)
        writer.wait_for("backup-done", acks=4)  # at least one complete backup before ...
        writer.wait_for("backup-start")  # ... the kill lands inside the next one
        acked += writer.kill()
        _check_store(db, acked, round_ + 1)
    complete = list_backups(backups)
    assert complete, "the backups finished before the kills must be listed"
    assert all(verify_backup(b) == [] for b in complete)
    leftovers = [p.name for p in backups.iterdir() if p.name.startswith(".")]
    assert len(leftovers) <= 1  # the last kill's half-written backup, removed by the next backup
    assert not any(p.name.startswith("backup-") and not (p / "manifest.json").exists() for p in backups.iterdir())


def _killed_with_wal(tmp_path: Path, before_backup: int, after_backup: int) -> tuple[Path, Path, list]:
    """A store whose writer was SIGKILLed after one backup and more decisions: uncheckpointed WAL left."""
    assert after_backup < before_backup or not before_backup  # one backup only
    db, backups = tmp_path / "store.duckdb", tmp_path / "backups" / "store"
    _make_store(db)
    writer = Writer(db, start=0, answers=True, backup_every=before_backup, backups=backups,
                    stop=before_backup + after_backup)
    writer.wait_for("idle")
    acked = writer.kill()
    assert len(acked) == before_backup + after_backup
    assert wal_path(db).exists() and wal_path(db).stat().st_size > 0, "the kill should leave a WAL"
    return db, backups, acked


def _recover(db: Path, backups: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "curation", "recover", "--db", str(db), "--dir", str(backups)],
        cwd=PROJECT_ROOT, env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
        capture_output=True, text=True, timeout=120,
    )


def _flip(path: Path, position: int, length: int = 16) -> None:
    with open(path, "r+b") as handle:
        handle.seek(position)
        data = handle.read(length)
        handle.seek(position)
        handle.write(bytes(b ^ 0xFF for b in data))


def test_recover_puts_back_what_a_corrupt_wal_still_holds(tmp_path):
    db, backups, acked = _killed_with_wal(tmp_path, before_backup=20, after_backup=19)
    wal = wal_path(db)
    _flip(wal, wal.stat().st_size * 2 // 3)  # damage an entry two thirds in: a bad sector, a bit flip
    with pytest.raises(duckdb.Error, match="Corrupt WAL file"):
        duckdb.connect(str(db)).close()  # DuckDB really refuses the store
    damaged = (db.read_bytes(), wal.read_bytes())

    result = _recover(db, backups)
    assert result.returncode == 0, result.stderr
    assert "restored from the damaged store with its WAL up to byte" in result.stdout

    aside = sorted(tmp_path.glob("store.duckdb.damaged-*"))
    assert [p.name.endswith(".wal") for p in aside] == [False, True]
    assert (aside[0].read_bytes(), aside[1].read_bytes()) == damaged  # kept as they were, not deleted
    assert list(tmp_path.glob("store.duckdb.recovery-*.json"))
    rows = _check_store(db, [], rounds=len(acked))  # opens; curator KB records match decisions
    ids = sorted(rows)
    # the WAL up to its damaged entry gives back a prefix of the history; the decision journal the rest
    # (without the journal: tests/curation/ops/test_backup.py)
    assert ids == [decision_id for decision_id, _ in acked]
    assert "put back from the decision journal:" in result.stdout


def test_recover_falls_back_to_the_newest_backup_when_the_store_file_is_damaged(tmp_path):
    db, backups, acked = _killed_with_wal(tmp_path, before_backup=10, after_backup=9)
    (backup,) = list_backups(backups)
    with open(db, "r+b") as handle:  # the store file's headers overwritten: no state can be read from it
        handle.write(b"\0" * 12288)
    with pytest.raises(duckdb.Error):
        duckdb.connect(str(db)).close()

    result = _recover(db, backups)
    assert result.returncode == 0, result.stderr
    assert f"restored from backup {backup.folder}" in result.stdout
    assert "put back from the decision journal: 9 decisions" in result.stdout
    assert len(list(tmp_path.glob("store.duckdb.damaged-*"))) == 2
    rows = _check_store(db, [], rounds=len(acked))
    # what the backup held, and the nine decisions after it from the journal
    assert sorted(rows) == [decision_id for decision_id, _ in acked]
    con = open_store(db)
    assert con.execute("SELECT count(*) FROM documents").fetchall() == [(12,)]
    con.close()


@pytest.mark.parametrize("damage", ["truncated", "header"])
def test_duckdb_drops_wal_content_without_an_error_in_some_damage(tmp_path, damage):
    """Findings, kept as tests so a DuckDB upgrade that changes them is noticed: a WAL cut short (what a
    full disk can leave), or one whose header bytes are damaged, opens without complaint, and the
    committed transactions in the lost part are gone. ``recover`` cannot see this: the store opens."""
    db, _, acked = _killed_with_wal(tmp_path, before_backup=0, after_backup=20)
    wal = wal_path(db)
    if damage == "truncated":
        with open(wal, "r+b") as handle:
            handle.truncate(wal.stat().st_size // 2)
    else:
        _flip(wal, 0, length=8)
    con = duckdb.connect(str(db))
    (count,) = con.execute("SELECT count(*) FROM decisions").fetchall()[0]
    con.close()
    assert count < len(acked)
    assert (count > 0) == (damage == "truncated")  # the cut: the whole entries before it; the header: nothing
