"""Recovering a store that will not open (``python -m curation recover``).

What DuckDB 2.0 does after a hard kill (tests/curation/ops/test_durability.py, docs/RELIABILITY.md):
a commit returns only after its WAL entry is written and ``fdatasync``-ed, so a ``kill -9`` loses no
committed transaction, and the next open replays the WAL. A WAL entry whose checksum does not match
makes the open fail ("Corrupt WAL file: entry at byte position N …"), and the store stays unusable
until someone acts. A WAL cut short is *not* an error: DuckDB replays the whole entries and drops the
torn tail silently.

Recovery never deletes anything. It prepares every state it can get back, in a scratch folder beside
the store:

1. ``wal-prefix`` — the store file plus the WAL up to its first corrupt entry (the byte position DuckDB
   names), i.e. every transaction committed before the damage; when DuckDB names no position (a
   damaged length field can end in an internal error), the longest WAL prefix that replays, by bisection;
2. ``checkpoint`` — the store file alone: the state at its last checkpoint (backups checkpoint first);
3. ``backup`` — the newest backup whose checksum and rows per table match its manifest.

It puts back the newest of them (most decision rows, then most rows: decisions are append-only, so
more rows means a later state; ties go to the states read from the store itself), after renaming the
damaged file and WAL to ``<store>.damaged-<UTC time>`` and ``….wal``, then opens the result through
:func:`curation.store.opening.open_store` (which migrates an older backup), checks its rows and writes a report
``<store>.recovery-<UTC time>.json`` beside it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from curation.errors import USER_ERRORS, CurationError, StoreDamagedError
from curation.files import fsync_path, write_atomic
from curation.ops.backup import SQL_DECISIONS_SUMMARY, Backup, list_backups, table_counts, verify_backup
from curation.store.base import connect, migrate
from curation.store.opening import open_store
from curation.store.reconcile import Reconciled, reconcile

CORRUPT_WAL_ENTRY = re.compile(r"Corrupt WAL file: entry at byte position (\d+)")


@dataclass(frozen=True)
class Candidate:
    """One state that could be put back, prepared as a single DuckDB file in the scratch folder."""

    kind: str  # wal-prefix | checkpoint | backup
    file: Path
    description: str
    counts: dict[str, int]
    decisions: tuple[int, int | None, str | None]  # (rows, last id, last time)
    wal_bytes: int = 0  # wal-prefix: how much of the WAL was replayed

    @property
    def progress(self) -> tuple[int, int]:
        return self.decisions[0], sum(self.counts.values())


@dataclass
class RecoveryReport:
    """What ``recover`` found and did."""

    store: Path
    healthy: bool
    failure: str = ""
    kept_aside: list[Path] = field(default_factory=list)
    restored_from: str = ""
    restored_kind: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    decisions: tuple[int, int | None, str | None] = (0, None, None)
    candidates: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    may_be_lost: str = ""
    report_file: Path | None = None
    journal: Reconciled | None = None

    def lines(self) -> list[str]:
        if self.healthy:
            return [f"{self.store} opens normally: nothing to recover."]
        rows, last_id, last_at = self.decisions
        out = [
            f"{self.store} did not open: {self.failure}",
            *(f"kept aside (not deleted): {path}" for path in self.kept_aside),
            f"restored from {self.restored_from}",
            f"the store now holds {rows} decision rows (newest id {last_id}, {last_at}), "
            f"{self.counts.get('kb_records', 0)} KB records, {self.counts.get('documents', 0)} documents",
            *([f"put back from the decision journal: {self.journal.decisions_replayed} decisions, "
               f"{self.journal.undos_replayed} undos"] if self.journal else []),
            *(f"journal: {line}" for line in (self.journal.notices if self.journal else [])),
            f"may have been lost: {self.may_be_lost if not (self.journal and self.journal.journal_records) else ''}"
            f"{'nothing the decision journal held' if self.journal and self.journal.journal_records else ''}",
            "states considered:",
            *(f"  {line}" for line in self.candidates),
            *(f"  not usable: {line}" for line in self.rejected),
        ]
        if self.report_file:
            out.append(f"report: {self.report_file}")
        return out

    def to_dict(self) -> dict[str, object]:
        return {
            "store": str(self.store),
            "healthy": self.healthy,
            "failure": self.failure,
            "kept_aside": [str(p) for p in self.kept_aside],
            "restored_from": self.restored_from,
            "restored_kind": self.restored_kind,
            "counts": self.counts,
            "decisions": {"rows": self.decisions[0], "last_id": self.decisions[1], "last_at": self.decisions[2]},
            "candidates": self.candidates,
            "rejected": self.rejected,
            "may_be_lost": self.may_be_lost,
            "journal": {"records": self.journal.journal_records, "decisions_replayed": self.journal.decisions_replayed,
                        "undos_replayed": self.journal.undos_replayed, "notices": self.journal.notices}
            if self.journal else None,
        }


def wal_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".wal")


def open_failure(db_path: str | Path) -> str | None:
    """Why the store does not open (None: it opens). A store held by another process is not damaged:

    Raises:
        StoreLockedError: another process holds the file (recovering under it would lose its writes).
    """
    db_path = Path(db_path)
    if not db_path.exists():
        return f"{db_path} does not exist"
    try:
        open_store(db_path).close()
    except StoreDamagedError as exc:
        return " ".join(str(exc).split())
    return None


def _summary(con: duckdb.DuckDBPyConnection) -> tuple[dict[str, int], tuple[int, int | None, str | None]]:
    rows, last_id, last_at = con.execute(SQL_DECISIONS_SUMMARY).fetchall()[0]
    return table_counts(con), (int(rows), last_id, last_at)


def _describe(decisions: tuple[int, int | None, str | None]) -> str:
    rows, last_id, last_at = decisions
    return f"{rows} decision rows (newest id {last_id}, {last_at})" if rows else "no decisions"


def _open_candidate(kind: str, file: Path, description: str, wal_bytes: int = 0) -> Candidate:
    with connect(file) as con:  # replays a WAL beside it, and checkpoints it on close
        counts, decisions = _summary(con)
    return Candidate(kind, file, description, counts, decisions, wal_bytes)


def _wal_prefix(db_path: Path, wal: Path, offset: int, work: Path, description: str, name: str) -> Candidate:
    file = work / name / "store.duckdb"
    file.parent.mkdir()
    shutil.copyfile(db_path, file)
    with open(wal, "rb") as source, open(wal_path(file), "wb") as target:
        target.write(source.read(offset))
    return _open_candidate("wal-prefix", file, description, wal_bytes=offset)


def _longest_wal_prefix(db_path: Path, wal: Path, work: Path) -> Candidate:
    """When DuckDB names no corrupt entry (a damaged length field can end in an internal error): the
    longest prefix of the WAL that replays, by bisection. A WAL cut anywhere replays its whole
    transactions (DuckDB takes a cut as a torn tail), so every prefix up to the damage opens."""
    size = wal.stat().st_size
    low, high, best = 0, size - 1, None  # the whole WAL is known to fail
    while low < high:
        middle = (low + high + 1) // 2
        try:
            candidate = _wal_prefix(
                db_path, wal, middle, work, f"the damaged store with the first {middle} of its {size} WAL bytes "
                "(the longest prefix that replays)", f"bisect-{middle}"
            )
        except duckdb.Error:
            high = middle - 1
            continue
        if best is not None:
            shutil.rmtree(best.file.parent, ignore_errors=True)
        best, low = candidate, middle
    if best is None:
        raise CurationError("no prefix of the WAL replays")
    return best


def _checkpoint(db_path: Path, work: Path) -> Candidate:
    file = work / "checkpoint.duckdb"
    shutil.copyfile(db_path, file)
    return _open_candidate("checkpoint", file, "the damaged store file without its WAL (its last checkpoint)")


def _backup(backup: Backup, work: Path) -> Candidate:
    file = work / "backup.duckdb"
    shutil.copyfile(backup.file, file)
    candidate = _open_candidate("backup", file, f"backup {backup.folder} (taken {backup.created_at.isoformat()})")
    if candidate.counts != backup.counts:
        raise CurationError(f"the copy of {backup.folder} holds {candidate.counts}, its manifest {backup.counts}")
    return candidate


def _attempt(make: Callable[[], Candidate], label: str, found: list[Candidate], rejected: list[str]) -> bool:
    try:
        found.append(make())
    except (duckdb.Error, *USER_ERRORS, OSError) as exc:
        rejected.append(f"{label}: {' '.join(str(exc).split())[:300]}")
        return False
    return True


def recover_store(db_path: str | Path, backups_dir: str | Path, now: datetime | None = None) -> RecoveryReport:
    """Put back the newest state that can be recovered when the store does not open; see the module doc.

    Args:
        db_path: the store file (its WAL is ``<db_path>.wal``).
        backups_dir: this store's backup folder (:func:`curation.ops.backup.backups_dir_for`).

    Raises:
        StoreLockedError: another process holds the store.
        CurationError: the store does not open and no state could be recovered (nothing was moved).
    """
    db_path = Path(db_path).resolve()
    wal = wal_path(db_path)
    failure = open_failure(db_path)
    if failure is None:
        return RecoveryReport(db_path, healthy=True)
    stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    work = Path(tempfile.mkdtemp(prefix=f".{db_path.name}.recovery-", dir=db_path.parent))
    try:
        found: list[Candidate] = []
        rejected: list[str] = []
        match = CORRUPT_WAL_ENTRY.search(failure)
        if db_path.exists() and wal.exists() and match:
            offset = int(match.group(1))
            description = f"the damaged store with its WAL up to byte {offset} (the first corrupt entry)"
            _attempt(lambda: _wal_prefix(db_path, wal, offset, work, description, "wal-prefix"),
                     "WAL up to its corrupt entry", found, rejected)
        elif db_path.exists() and wal.exists() and "WAL" in failure:
            _attempt(lambda: _longest_wal_prefix(db_path, wal, work), "WAL prefixes", found, rejected)
        if db_path.exists():
            _attempt(lambda: _checkpoint(db_path, work), "store file without its WAL", found, rejected)
        for backup in list_backups(backups_dir):
            problems = verify_backup(backup)
            if problems:
                rejected.append(f"backup {backup.folder.name}: {'; '.join(problems)}")
                continue
            if _attempt(lambda b=backup: _backup(b, work), f"backup {backup.folder.name}", found, rejected):
                break  # the newest good backup; older ones hold less
        if not found:
            raise CurationError(
                f"{db_path} does not open ({failure}) and there is nothing to restore: "
                f"{'; '.join(rejected) or f'no backups in {backups_dir}'}. Nothing was moved or changed; "
                "keep the store file and its .wal as they are and see docs/RELIABILITY.md."
            )
        chosen = max(found, key=lambda c: c.progress)  # first of equals: states read from the store itself
        kept = _set_aside(db_path, wal, stamp)
        os.replace(chosen.file, db_path)
        fsync_path(db_path.parent)
        con = connect(db_path)
        try:
            migrate(con)  # an older backup is brought up to date
            counts, decisions = _summary(con)
            changed = {t: (n, counts.get(t)) for t, n in chosen.counts.items() if counts.get(t) != n}
            if changed:
                raise CurationError(
                    f"the restored store {db_path} does not hold what {chosen.description} held: {changed}")
            # then what the restored state lacks is put back from the decision journal
            journaled = reconcile(con, db_path, backups_dir)
            counts, decisions = _summary(con)
        finally:
            con.close()
        report = RecoveryReport(
            db_path,
            healthy=False,
            failure=failure,
            kept_aside=kept,
            restored_from=chosen.description,
            restored_kind=chosen.kind,
            counts=counts,
            decisions=decisions,
            candidates=[f"{c.kind}: {c.description}: {_describe(c.decisions)}" for c in found],
            rejected=rejected,
            may_be_lost=_may_be_lost(chosen, found, kept),
            journal=journaled,
        )
        report.report_file = db_path.with_name(f"{db_path.name}.recovery-{stamp}.json")
        write_atomic(report.report_file, json.dumps(report.to_dict(), indent=2))
        return report
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _set_aside(db_path: Path, wal: Path, stamp: str) -> list[Path]:
    """Rename the damaged file and its WAL (never delete them); the pair keeps DuckDB's naming, so a
    later DuckDB release, or a person, can still try to open it."""
    aside = db_path.with_name(f"{db_path.name}.damaged-{stamp}")
    kept = []
    for source, target in ((db_path, aside), (wal, wal_path(aside))):
        if source.exists():
            if target.exists():
                raise CurationError(f"{target} already exists; not overwriting it. Run recover again in a second.")
            os.rename(source, target)
            kept.append(target)
    return kept


def _may_be_lost(chosen: Candidate, found: list[Candidate], kept: list[Path]) -> str:
    kept_wal = next((p for p in kept if p.name.endswith(".wal")), None)
    wal_note = f" (the WAL is kept at {kept_wal}, {kept_wal.stat().st_size} bytes)" if kept_wal else ""
    if chosen.kind == "wal-prefix":
        return (
            f"transactions written to the WAL from byte {chosen.wal_bytes} on were not replayed{wal_note}; "
            "every transaction before that is back"
        )
    if chosen.kind == "checkpoint":
        return f"everything written after the store's last checkpoint{wal_note}"
    others = [c for c in found if c is not chosen]
    note = "; ".join(f"{c.kind} held {_describe(c.decisions)}" for c in others)
    return (
        f"everything written after the backup was taken; the damaged store's own state could not be read "
        f"or is older{': ' + note if note else ''}{wal_note}"
    )
