"""Opening the store: the connection, the schema brought up to date, and the store checked against its journal."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb

from curation.errors import CurationError, StoreDamagedError, StoreLockedError, StoreUncheckpointedError
from curation.store.base import LOCK_ERROR, _keep_wal_copy, connect, migrate, schema_version
from curation.store.reconcile import reconcile, unapplied_records


def open_store(path: str | Path, read_only: bool = False, backups_dir: str | Path | None = None
               ) -> duckdb.DuckDBPyConnection:
    """Open (creating if needed) the store, bring its schema up to date, and (read-write) check it against
    its decision journal, putting back what the store lost (:func:`curation.store.reconcile.reconcile`).
    ``backups_dir`` is where that check looks for a backup holding what both lost (default: the settings').

    A read-only open of a store with a non-empty write-ahead log beside it (left by a writer that did not
    checkpoint when it stopped: the app's server on a normal stop, or a kill) checks the store against its
    decision journal. DuckDB replays the log in memory, and drops a cut tail without a word; a read-only open
    cannot put back from the journal what that lost, as a read-write open does. So when the journal holds
    decisions or undos the store then lacks, the open is refused (exit 2 from the CLI) rather than warned
    about: a warning would still leave a partial export or count behind, and one read-write open repairs it.
    A log that replays whole opens as before.

    Raises:
        JournalMismatchError: the journal beside the store belongs to another store.
        StoreLockedError: another process holds the file; the message names it and says what to do.
        StoreDamagedError: the file or its write-ahead log cannot be read; the message says how to recover.
        StoreUncheckpointedError: read-only, the store has a write-ahead log, and the journal holds decisions
            the store then lacks; the message names the log and says to open the store read-write once.
    """
    path = Path(path)
    if str(path) != ":memory:":
        if read_only and not path.exists():
            raise FileNotFoundError(f"{path}: no store here yet; ingest a knowledge base or corpus first")
        path.parent.mkdir(parents=True, exist_ok=True)
    if str(path) != ":memory:" and not read_only:
        _keep_wal_copy(path)
    try:
        con = connect(path, read_only=read_only)
    except duckdb.Error as exc:
        message = str(exc)
        if isinstance(exc, duckdb.IOException) and LOCK_ERROR.search(message):
            holder = re.search(r"PID (\d+)", message)
            who = f"process {holder.group(1)}" if holder else "another process"
            # DuckDB's lock: readers share the file with each other; a writer needs it alone.
            rule = ("it writes to the store, which needs the store alone" if read_only else
                    "a process that writes to the store needs it alone, with no other writing or reading it "
                    "(search, suggest, export, stats and annotate only read, and share it with each other)")
            raise StoreLockedError(
                f"{path} is in use by {who}: {rule}. Wait for it to finish or stop it, or use another store file "
                f"(--db, or CURATION_DB for the app)."
            ) from None
        reason = " ".join(message.split())[:500] or type(exc).__name__
        raise StoreDamagedError(
            f"{path} cannot be opened ({reason}). Nothing was changed. Stop the app and run "
            f"`python -m curation recover --db {path}`: it keeps the damaged files aside and puts back the "
            f"newest good state (see docs/RELIABILITY.md)."
        ) from None
    if read_only and str(path) != ":memory:":
        _refuse_unapplied_wal(con, path)
    if not read_only:
        migrate(con)
        if str(path) != ":memory:":
            try:
                reconcile(con, path, backups_dir)
            except BaseException:
                con.close()
                raise
    return con


def open_read_only_from(db: Path, needs: int, too_old: str) -> duckdb.DuckDBPyConnection:
    """The store at ``db``, read-only, once its schema version is known to be ``needs`` or later (read-only, it is
    not migrated here; ``too_old``: what a person is told to do when it is older).

    Raises:
        CurationError: no store there, not a store, or one older than ``needs`` (then ``too_old``).
    """
    if str(db) != ":memory:" and not db.exists():
        raise CurationError(f"{db}: no store here; ingest a knowledge base and a corpus first, or pass --db")
    con = open_store(db, read_only=True)
    try:
        try:
            version = schema_version(con)
        except duckdb.Error:  # a DuckDB file that is not a store
            version = -1
        if version < 0:
            raise CurationError(f"{db} is not a curation store (no schema version); check --db")
        if version < needs:
            raise CurationError(too_old)
    except BaseException:
        con.close()
        raise
    return con


def _refuse_unapplied_wal(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Close ``con`` and refuse when a non-empty write-ahead log lies beside ``path`` and the store, with what
    DuckDB replayed of it, lacks records of its journal (see :func:`open_store`).

    Checked after the open: this process's hold on the file keeps any writer out, so neither the log nor the
    journal can be growing meanwhile.
    """
    wal = path.with_name(path.name + ".wal")
    try:
        if wal.stat().st_size == 0:
            return
    except FileNotFoundError:
        return
    try:
        missing = unapplied_records(con, path)
    except BaseException:
        con.close()
        raise
    if not missing:
        return
    con.close()
    raise StoreUncheckpointedError(
        f"the store has un-checkpointed changes in {wal} that a read-only open cannot apply: without them it "
        f"lacks {len(missing)} decision or undo record(s) of its journal (records {missing[0]}-{missing[-1]}). "
        f"Nothing was read. Open it read-write once, which puts them back: start the app, or run "
        f"`python -m curation recover --db {path}`."
    )
