"""Backups of the store, written while the app holds it open.

A backup is a complete DuckDB file copied from the live connection with ``COPY FROM DATABASE`` inside
one transaction: DuckDB's MVCC gives the copy one consistent snapshot even while curators keep
recording decisions on other cursors, and the app never has to close the store. (``EXPORT DATABASE``
works from a live connection too, but writes Parquet plus a ``load.sql`` with paths relative to the
working directory; a DuckDB file can simply be opened, verified and put back.)

Each backup is built under a hidden ``.partial`` folder and renamed into place when it is complete, so
a crash mid-backup leaves no half backup that looks whole::

    <backups_dir>/backup-20260522T101530.123456Z/store.duckdb
                                                /manifest.json   (time, rows per table, schema version, sha256)

:func:`backups_dir_for` gives each store its own folder under the ``CURATION_BACKUPS_DIR`` root, so a
recovery never restores another store's backup. ``bench/backup.py`` measures the cost on the real data.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

from curation.errors import CurationError
from curation.files import file_sha256, fsync_path, write_atomic
from curation.jobs.processes import pid_alive
from curation.store.base import connect, schema_version
from curation.store.journaled import journal_of

KEEP = 10  # backups kept per store: five hours of history at the default 30-minute interval
MANIFEST = "manifest.json"
STORE_FILE = "store.duckdb"
PREFIX = "backup-"
STAMP = "%Y%m%dT%H%M%S.%fZ"
MANIFEST_FORMAT = 1

SQL_CURRENT_DATABASE = "SELECT current_database()"
SQL_TABLES = "SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main' ORDER BY 1"
SQL_COUNT_ROWS = "SELECT count(*) FROM query_table(?)"
SQL_DECISIONS_SUMMARY = "SELECT count(*), max(decision_id), CAST(max(created_at) AS VARCHAR) FROM decisions"
SQL_JOURNAL_SEQ = "SELECT applied_seq FROM journal_state"
SQL_ATTACH = "ATTACH ? AS {alias}"  # the alias is an identifier made here (_alias), never user input
SQL_COPY_DATABASE = "COPY FROM DATABASE {source} TO {target}"  # identifiers: quoted by _ident
SQL_DETACH = "DETACH {alias}"

_lock = threading.Lock()  # one backup at a time per process (the app's sessions share one store)
_aliases = itertools.count()


@dataclass(frozen=True)
class Backup:
    """One complete backup: its folder and what its manifest says."""

    folder: Path
    manifest: Mapping[str, object]

    @property
    def file(self) -> Path:
        return self.folder / STORE_FILE

    @property
    def created_at(self) -> datetime:
        return _parse_stamp(self.folder.name)

    @property
    def counts(self) -> dict[str, int]:
        return dict(self.manifest["counts"])


def backups_dir_for(root: str | Path, db_path: str | Path) -> Path:
    """The backup folder of one store: ``<root>/<store file stem>``."""
    return Path(root) / Path(db_path).stem


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(STAMP)


def _parse_stamp(folder_name: str) -> datetime:
    return datetime.strptime(folder_name.removeprefix(PREFIX), STAMP).replace(tzinfo=UTC)


def table_counts(con: duckdb.DuckDBPyConnection, database: str | None = None) -> dict[str, int]:
    """Rows per table of one database (the connection's current one by default)."""
    if database is None:
        database = con.execute(SQL_CURRENT_DATABASE).fetchall()[0][0]
    tables = [row[0] for row in con.execute(SQL_TABLES, [database]).fetchall()]
    return {
        table: int(con.execute(SQL_COUNT_ROWS, [f"{_ident(database)}.main.{_ident(table)}"]).fetchall()[0][0])
        for table in tables
    }


def _remove_partials(backups_dir: Path) -> None:
    """Delete half-written backups left by a process that died mid-backup (never a complete one)."""
    for entry in backups_dir.glob(f".{PREFIX}*.partial-*"):
        tail = entry.name.rsplit("-", 1)[1]
        pid = int(tail) if tail.isascii() and tail.isdigit() else 0  # isdigit alone passes "²", which int refuses
        if pid == os.getpid() or not pid_alive(pid):
            shutil.rmtree(entry, ignore_errors=True)


def _checkpoint(con: duckdb.DuckDBPyConnection) -> bool:
    """Fold the WAL into the main file when no other write is in flight (never force: that would abort a
    curator's transaction). Keeps the store file's last checkpoint at least as new as the newest backup,
    which is what ``recover`` falls back to when a WAL will not replay."""
    try:
        con.execute("CHECKPOINT")
    except duckdb.TransactionException:
        return False
    return True


def _copy(con: duckdb.DuckDBPyConnection, target: Path) -> dict[str, int]:
    """Copy the current database into a new DuckDB file in one transaction; returns the rows copied."""
    source = con.execute(SQL_CURRENT_DATABASE).fetchall()[0][0]
    alias = f"curation_backup_{os.getpid()}_{next(_aliases)}"
    con.execute(SQL_ATTACH.format(alias=_ident(alias)), [str(target)])
    try:
        con.execute("BEGIN TRANSACTION")
        try:
            counts = table_counts(con, source)
            con.execute(SQL_COPY_DATABASE.format(source=_ident(source), target=_ident(alias)))
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
    finally:
        con.execute(SQL_DETACH.format(alias=_ident(alias)))
    return counts


def _open_copy(path: Path, wait_s: float = 30.0) -> duckdb.DuckDBPyConnection:
    """The fresh copy, read-only, once this process has let go of it.

    DETACH returns at once, but a transaction another cursor began before it keeps the attached file open
    until that transaction ends, and opening the file meanwhile is a "file handle conflict". Under load a
    writer's transaction can outlive the copy by a while, so the open is retried until ``wait_s`` has passed.
    """
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return connect(path, read_only=True)
        except duckdb.ResourceInUseException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def backup_store(con: duckdb.DuckDBPyConnection, backups_dir: str | Path, keep: int = KEEP) -> Backup:
    """Write a consistent backup of the open store, then keep only the newest ``keep`` backups.

    Args:
        con: a connection (or cursor) on the store; it stays usable, other cursors may keep writing.
        backups_dir: this store's backup folder (see :func:`backups_dir_for`).
        keep: how many complete backups to keep (at least 1).

    Raises:
        CurationError: ``keep`` is below 1 (nothing is written or deleted), or the copy does not hold what the
            store held when it was taken.
    """
    if keep < 1:  # 0 or less once meant 1, and deleted every older backup without a word
        raise CurationError(f"keep {keep} backups? Keep at least 1 (the one being written); nothing was written")
    with _lock:
        return _backup(con, Path(backups_dir), keep)


def _backup(con: duckdb.DuckDBPyConnection, backups_dir: Path, keep: int) -> Backup:
    started = time.perf_counter()
    if backups_dir.exists() and not backups_dir.is_dir():
        raise CurationError(f"the backup folder {backups_dir} is a file; name a folder for this store's backups")
    backups_dir.mkdir(parents=True, exist_ok=True)
    _remove_partials(backups_dir)
    now = datetime.now(UTC)
    name = PREFIX + _stamp(now)
    while (backups_dir / name).exists():  # two backups within a microsecond: keep names unique
        now += timedelta(microseconds=1)
        name = PREFIX + _stamp(now)
    partial = backups_dir / f".{name}.partial-{os.getpid()}"
    partial.mkdir()
    try:
        checkpointed = _checkpoint(con)
        expected = _copy(con, partial / STORE_FILE)
        with _open_copy(partial / STORE_FILE) as copy:
            counts = table_counts(copy)
            version = schema_version(copy)
            decisions, last_id, last_at = copy.execute(SQL_DECISIONS_SUMMARY).fetchall()[0]
            journal_seq = copy.execute(SQL_JOURNAL_SEQ).fetchall()[0][0]
        if counts != expected:
            raise CurationError(f"backup {partial} holds {counts} rows but the store held {expected}; not kept")
        fsync_path(partial / STORE_FILE)
        manifest = {
            "format": MANIFEST_FORMAT,
            "created_at": now.isoformat(),
            "store": str(_store_path(con)),
            "schema_version": int(version),
            "counts": counts,
            "decisions": {"rows": int(decisions), "last_id": last_id, "last_at": last_at},
            "journal_seq": int(journal_seq),  # the last decision-journal record this backup holds
            "bytes": (partial / STORE_FILE).stat().st_size,
            "sha256": file_sha256(partial / STORE_FILE),
            "checkpointed_first": checkpointed,
            "duckdb": duckdb.__version__,
            "seconds": round(time.perf_counter() - started, 3),
        }
        write_atomic(partial / MANIFEST, json.dumps(manifest, indent=2))
        os.rename(partial, backups_dir / name)
        fsync_path(backups_dir)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    for old in list_backups(backups_dir)[keep:]:
        shutil.rmtree(old.folder, ignore_errors=True)
    _rotate_journal(con, list_backups(backups_dir))
    return Backup(backups_dir / name, manifest)


def _rotate_journal(con: duckdb.DuckDBPyConnection, kept: list[Backup]) -> None:
    """Start a new journal segment, and remove the segments that no kept backup needs to be brought
    up to date (each backup needs the records after its ``journal_seq``)."""
    journal = journal_of(con)
    if journal is None:
        return
    with journal.lock:
        journal.rotate()
        needed = [b.manifest.get("journal_seq") for b in kept]
        if needed and all(isinstance(n, int) for n in needed):
            journal.prune(min(needed) + 1)


def _store_path(con: duckdb.DuckDBPyConnection) -> str:
    rows = con.execute(
        "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
    ).fetchall()
    return rows[0][0] if rows and rows[0][0] else ":memory:"


def list_backups(backups_dir: str | Path) -> list[Backup]:
    """Complete backups, newest first (half-written ones and unreadable manifests are not listed)."""
    backups_dir = Path(backups_dir)
    if not backups_dir.is_dir():
        return []
    found = []
    for folder in backups_dir.glob(f"{PREFIX}*"):
        try:
            _parse_stamp(folder.name)
            manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        except (ValueError, OSError):
            continue
        found.append(Backup(folder, manifest))
    return sorted(found, key=lambda b: b.folder.name, reverse=True)


def verify_backup(backup: Backup) -> list[str]:
    """What is wrong with a backup (an empty list: it is whole): checksum, readability, rows per table."""
    if not backup.file.exists():
        return [f"{backup.file} is missing"]
    if file_sha256(backup.file) != backup.manifest.get("sha256"):
        return [f"{backup.file} does not match the checksum in its manifest (changed or damaged on disk)"]
    try:
        with connect(backup.file, read_only=True) as copy:
            counts = table_counts(copy)
    except duckdb.Error as exc:
        return [f"{backup.file} does not open: {exc}"]
    return [
        f"{table}: {counts.get(table)} rows, manifest says {count}"
        for table, count in backup.counts.items()
        if counts.get(table) != count
    ]


def backup_due(backups_dir: str | Path, interval_min: float, now: datetime | None = None) -> bool:
    """Whether the newest backup is older than the interval (reads folder names only: cheap on every rerun).

    An interval of 0 or less means automatic backups are off.
    """
    if interval_min <= 0:
        return False
    backups_dir = Path(backups_dir)
    if not backups_dir.is_dir():
        return True
    stamps = []
    for entry in os.scandir(backups_dir):
        if entry.name.startswith(PREFIX) and (Path(entry.path) / MANIFEST).exists():
            try:
                stamps.append(_parse_stamp(entry.name))
            except ValueError:
                continue
    if not stamps:
        return True
    age = (now or datetime.now(UTC)) - max(stamps)
    return age >= timedelta(minutes=interval_min) or age < timedelta(0)  # a clock set back: back up anyway


def backup_if_due(
    con: duckdb.DuckDBPyConnection, backups_dir: str | Path, interval_min: float, keep: int = KEEP
) -> Backup | None:
    """Back up when the newest backup is older than ``interval_min``; None when not due, or when another
    thread of this process is already backing up (the app's sessions share the store)."""
    if not backup_due(backups_dir, interval_min):
        return None
    if not _lock.acquire(blocking=False):
        return None
    try:
        if not backup_due(backups_dir, interval_min):
            return None
        return _backup(con, Path(backups_dir), max(1, keep))
    finally:
        _lock.release()
