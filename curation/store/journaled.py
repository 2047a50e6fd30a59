"""One write transaction of the decisions table, with its record in the decision journal.

The record is appended and flushed before COMMIT; once COMMIT returned, an ``ack`` follows, so a later replay
tells a decision the curator was told about from one killed between the two (:mod:`curation.store.reconcile`).
A write that fails after its record was written gets a ``void`` record, so a replay does not bring it back.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext

import duckdb

from curation.store.journal import Journal, Record, now_text

log = logging.getLogger(__name__)

SQL_STORE_PATH = "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
SQL_JOURNAL_STATE = "SELECT store_id, applied_seq FROM journal_state"
SQL_SET_APPLIED = "UPDATE journal_state SET applied_seq = ?"


class Writer:
    """The journal side of one write transaction (see :func:`journaled`)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, journal: Journal) -> None:
        self.con, self.journal = con, journal
        self.store_id, applied = con.execute(SQL_JOURNAL_STATE).fetchall()[0]
        self.seq = None
        self._applied = int(applied)
        self.written = False

    def next_seq(self) -> int:
        self.seq = max(self._applied, self.journal.last_seq) + 1
        return self.seq

    def write(self, op: str, data: Mapping[str, object]) -> None:
        """Append the record (flushed to disk) and mark it applied in this transaction."""
        seq = self.seq or self.next_seq()
        self.journal.append(Record(seq, self.store_id, op, now_text(), data, confirm=True))
        self.written = True
        self.con.execute(SQL_SET_APPLIED, [seq])

    def acknowledge(self) -> None:
        """After COMMIT returned: the ``ack`` that tells a later replay the curator was told (not synced on its
        own, see :mod:`curation.store.journal`). A failure is logged, never raised: the decision is saved."""
        try:
            self.journal.append(Record(self.seq, self.store_id, "ack", now_text(), {}), sync=False)
        except OSError as exc:
            log.warning("%s: the acknowledgement of record %s was not written (%s); a replay of it would be "
                        "reported as never confirmed", self.journal.folder, self.seq, exc)


def journal_of(con: duckdb.DuckDBPyConnection) -> Journal | None:
    """The journal of the store ``con`` is on (opened by ``open_store``, so migrated); None in memory."""
    rows = con.execute(SQL_STORE_PATH).fetchall()
    path = rows[0][0] if rows and rows[0][0] else ""
    return Journal.beside(path) if path and path != ":memory:" else None


@contextmanager
def journaled(con: duckdb.DuckDBPyConnection) -> Iterator[Writer | None]:
    """One write transaction whose record is in the journal, flushed to disk, before it commits; once the
    commit returned, an ``ack`` of the record follows (a replay tells confirmed records from the others).

    If the commit fails after the record was written, a ``void`` record cancels it, so a later
    replay does not bring back what the curator was told had failed.
    """
    journal = journal_of(con)
    with journal.lock if journal else nullcontext():
        con.execute("BEGIN TRANSACTION")
        writer = None
        try:
            writer = Writer(con, journal) if journal else None
            yield writer
        except BaseException:
            con.execute("ROLLBACK")
            if writer is not None and writer.written:
                _void(writer)
            raise
        try:
            con.execute("COMMIT")
        except BaseException:
            if writer is not None and writer.written:
                _void(writer)
            raise
        if writer is not None and writer.written:
            writer.acknowledge()


def _void(writer: Writer) -> None:
    seq = max(writer.seq or 0, writer.journal.last_seq) + 1
    try:
        writer.journal.append(Record(seq, writer.store_id, "void", now_text(), {"voids": writer.seq}))
    except OSError:
        pass  # the journal cannot be written either: the next open reports the record as replayed
