"""Check the store against its decision journal at every read-write open, and repair it from the journal.

What is compared: every ``decide`` record must have its row (``decisions.journal_seq``), every ``undo``
record its decision withdrawn, and the store's last applied record (``journal_state.applied_seq``) must
be the journal's last. What is repaired, in the journal's order and idempotently (a second run finds
nothing to do): missing decisions are inserted with their original ids and times, missing undos applied.
What cannot be repaired from the journal is reported: damaged lines (kept aside, see
:meth:`curation.store.journal.Journal.set_aside`) and a journal that ends before the store does.
A replayed record is told apart by its acknowledgement: one whose ``ack`` is in the journal was confirmed to a
curator (the store lost it); one written to be confirmed but without its ``ack`` is from a process stopped
between the journal line and the store's commit: it is put back, as "recovered, never confirmed".
When the journal was cut as well as the store (a double fault), the segment headers say how many records
neither holds any more; the notice counts them and names the newest backup that still has them.

Every repair and every problem becomes a row of ``store_notices``, which the app shows until a curator
acknowledges it: nothing is passed over silently. A journal written for another store is refused.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from curation.config import load_settings
from curation.store.base import transaction
from curation.store.decisions import SQL_DECISION_SUPERSEDES, apply_decision, withdraw
from curation.store.journal import Damage, Journal, JournalMismatchError, Scan
from curation.store.journaled import SQL_JOURNAL_STATE, SQL_SET_APPLIED

log = logging.getLogger(__name__)

SQL_HAS_STATE = (
    "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND table_name = 'journal_state'"
)
SQL_JOURNALED = "SELECT journal_seq, decision_id FROM decisions WHERE journal_seq IS NOT NULL"
SQL_WITHDRAWN = "SELECT decision_id FROM decisions WHERE superseded_by = decision_id"
SQL_ID_EXISTS = "SELECT count(*) FROM decisions WHERE decision_id = ?"
SQL_MAX_ID = "SELECT coalesce(max(decision_id), 0) FROM decisions"
SQL_NEXT_ID = "SELECT nextval('decision_ids')"
SQL_ADVANCE_IDS = "SELECT max(nextval('decision_ids')) FROM range(?)"
SQL_ADD_NOTICE = "INSERT INTO store_notices (kind, message) VALUES (?, ?)"
SQL_OPEN_NOTICES = (
    "SELECT notice_id, CAST(created_at AS VARCHAR), kind, message FROM store_notices "
    "WHERE acknowledged_by IS NULL ORDER BY notice_id"
)
SQL_ACKNOWLEDGE = "UPDATE store_notices SET acknowledged_by = ? WHERE notice_id = ? AND acknowledged_by IS NULL"


@dataclass
class Reconciled:
    """What one reconcile found and did."""

    journal_records: int = 0
    decisions_replayed: int = 0
    undos_replayed: int = 0
    #: ids of replayed decisions (and of decisions whose replayed undo) no curator was told were saved
    unconfirmed_decisions: list[int] = field(default_factory=list)
    unconfirmed_undos: list[int] = field(default_factory=list)
    #: replayed decisions and undos whose acknowledgement may have been on a cut or damaged journal line
    uncertain_decisions: list[int] = field(default_factory=list)
    uncertain_undos: list[int] = field(default_factory=list)
    damage: list[Damage] = field(default_factory=list)
    set_aside: list[Path] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    #: seqs the journal says were written that neither it nor the store holds (both were cut)
    unaccounted: list[int] = field(default_factory=list)

    @property
    def repaired(self) -> bool:
        return bool(self.decisions_replayed or self.undos_replayed)


@dataclass(frozen=True)
class Notice:
    notice_id: int
    created_at: str
    kind: str
    message: str


def reconcile(con: duckdb.DuckDBPyConnection, db_path: str | Path, backups_dir: str | Path | None = None
              ) -> Reconciled:
    """Compare the store with its journal and replay what the store lacks (see the module's docstring).

    Args:
        con: a read-write connection on the store at ``db_path``.
        db_path: the store file; its journal is beside it.
        backups_dir: this store's backup folder, searched when records are unaccounted for (default: the
            settings' ``CURATION_BACKUPS_DIR/<store name>``, where ``curation.ops.backup`` writes them).

    Raises:
        JournalMismatchError: the journal beside ``db_path`` was written for another store.
    """
    db_path = Path(db_path)
    journal = Journal.beside(db_path)
    done = Reconciled()
    if not con.execute(SQL_HAS_STATE).fetchall()[0][0]:
        return done  # a schema from before the journal (migrations not run to 6): nothing to compare
    with journal.lock:
        store_id, applied = con.execute(SQL_JOURNAL_STATE).fetchall()[0]
        applied = int(applied)
        scan = journal.scan()
        foreign = sorted(scan.stores - {store_id})
        if foreign:
            raise JournalMismatchError(
                f"{journal.folder} is the decision journal of another store (id {foreign[0]}), not of {db_path} "
                f"(id {store_id}). Nothing was changed. If {db_path} is a new or different store, move that "
                f"folder aside (rename it) and open again; if the store was replaced by mistake, put back the "
                f"store this journal belongs to (python -m curation recover --db {db_path})."
            )
        journal.note_seq(scan.high_water)  # past a cut too: a seq the journal once used is not used again
        done.journal_records = len(scan.records)
        done.unaccounted = [seq for seq in scan.lost if seq > applied]  # what the store holds is accounted for
        if scan.damage:
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
            done.damage = list(scan.damage)
            done.set_aside = journal.set_aside(scan, stamp)
        with transaction(con):
            _replay(con, scan, done)
            # the store holds records the journal does not: the journal was cut, lost, or restored older
            behind = (applied, scan.last_seq, journal.exists()) if applied > scan.high_water else None
            if scan.high_water > applied:  # a record counted unaccounted for is reported once
                con.execute(SQL_SET_APPLIED, [scan.high_water])
            messages = _messages(journal, done, behind)
            if done.unaccounted:
                folder = Path(backups_dir) if backups_dir else load_settings().backups_dir / db_path.stem
                messages.append(("journal_cut", _cut_message(journal, done.unaccounted, db_path, folder)))
            for kind, message in messages:
                con.execute(SQL_ADD_NOTICE, [kind, message])
                done.notices.append(message)
                log.warning("%s: %s", db_path, message)
    return done


def unapplied_records(con: duckdb.DuckDBPyConnection, db_path: str | Path) -> list[int]:
    """The journal records (seqs) of decisions and undos that the store, as ``con`` sees it, does not hold: what a
    read-write open would put back, or report as lost (read only: nothing is written, the journal neither).

    Records the store holds all carry a seq up to its ``applied_seq`` (each is set in its record's transaction),
    so those past it, less the voided ones, are the missing ones.
    """
    if not con.execute(SQL_HAS_STATE).fetchall()[0][0]:
        return []  # a schema from before the journal
    applied = int(con.execute(SQL_JOURNAL_STATE).fetchall()[0][1])
    scan = Journal.beside(db_path).scan()
    voided = {r.data.get("voids") for r in scan.records if r.op == "void"}
    held = {r.seq for r in scan.records if r.op in ("decide", "undo") and r.seq not in voided}
    return sorted(seq for seq in held | set(scan.lost) if seq > applied)


def _replay(con: duckdb.DuckDBPyConnection, scan: Scan, done: Reconciled) -> None:
    present = dict(con.execute(SQL_JOURNALED).fetchall())  # journal seq → decision id
    withdrawn = {row[0] for row in con.execute(SQL_WITHDRAWN).fetchall()}
    voided = {r.data.get("voids") for r in scan.records if r.op == "void"}
    renumbered: dict[int, int] = {}
    for record in scan.records:
        if record.seq in voided or record.op == "void":
            continue
        data = record.data
        if record.op == "decide":
            if record.seq in present:
                continue
            wanted = int(data["decision_id"])
            taken = con.execute(SQL_ID_EXISTS, [wanted]).fetchall()[0][0]
            new_id, _ = apply_decision(con, data, seq=record.seq, decision_id=None if taken else wanted,
                                       created=None if taken else str(data["created_at"]))
            if new_id != wanted:
                renumbered[wanted] = new_id
            present[record.seq] = new_id
            done.decisions_replayed += 1
            if scan.unconfirmed(record):
                done.unconfirmed_decisions.append(new_id)
            elif scan.uncertain(record):
                done.uncertain_decisions.append(new_id)
        elif record.op == "undo":
            decision_id = renumbered.get(int(data["decision_id"]), int(data["decision_id"]))
            if decision_id in withdrawn:
                continue
            rows = con.execute(SQL_DECISION_SUPERSEDES, [decision_id]).fetchall()
            if not rows:
                continue  # the decision is older than the journal and not in this store: nothing to undo
            withdraw(con, decision_id, rows[0][1])
            withdrawn.add(decision_id)
            done.undos_replayed += 1
            if scan.unconfirmed(record):
                done.unconfirmed_undos.append(decision_id)
            elif scan.uncertain(record):
                done.uncertain_undos.append(decision_id)
    if done.decisions_replayed:  # new decisions must not reuse an id a replayed one took
        top = con.execute(SQL_MAX_ID).fetchall()[0][0]
        current = con.execute(SQL_NEXT_ID).fetchall()[0][0]
        if current < top:
            con.execute(SQL_ADVANCE_IDS, [top - current]).fetchall()


def _messages(journal: Journal, done: Reconciled, behind: tuple[int, int, bool] | None
              ) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    confirmed = (done.decisions_replayed - len(done.unconfirmed_decisions) - len(done.uncertain_decisions),
                 done.undos_replayed - len(done.unconfirmed_undos) - len(done.uncertain_undos))
    if any(confirmed):
        parts = [_count(n, word) for n, word in zip(confirmed, ("decision", "undo"), strict=True) if n]
        out.append(("repaired", f"The store had lost {' and '.join(parts)} that curators had been told were "
                                f"saved; they were put back from the decision journal ({journal.folder})."))
    if done.unconfirmed_decisions or done.unconfirmed_undos:
        parts = [f"{_count(len(ids), what)} ({_ids(ids)})" for ids, what in
                 ((done.unconfirmed_decisions, "decision"), (done.unconfirmed_undos, "undo of decision"))
                 if ids]
        one = len(done.unconfirmed_decisions) + len(done.unconfirmed_undos) == 1
        out.append(("unconfirmed", f"{' and '.join(parts)} recovered, never confirmed: the app stopped after "
                                   f"writing {'it' if one else 'them'} to the decision journal ({journal.folder}) "
                                   f"and before the store committed, so no curator was told "
                                   f"{'it was' if one else 'they were'} saved. {'It is' if one else 'They are'} "
                                   f"in the store now: check {'it' if one else 'them'}, and withdraw what should "
                                   f"not stand."))
    if done.uncertain_decisions or done.uncertain_undos:
        parts = [f"{_count(len(ids), what)} ({_ids(ids)})" for ids, what in
                 ((done.uncertain_decisions, "decision"), (done.uncertain_undos, "undo of decision")) if ids]
        one = len(done.uncertain_decisions) + len(done.uncertain_undos) == 1
        out.append(("uncertain", f"{' and '.join(parts)} recovered from the decision journal ({journal.folder}); "
                                 f"whether a curator was told {'it was' if one else 'they were'} saved cannot be "
                                 f"known: the journal lines after {'it' if one else 'them'}, which would say so, "
                                 f"were cut or damaged. {'It is' if one else 'They are'} in the store now: check "
                                 f"{'it' if one else 'them'}."))
    if done.damage:
        where = "; ".join(d.describe() for d in done.damage[:5]) + (" ..." if len(done.damage) > 5 else "")
        aside = ", ".join(p.name for p in done.set_aside) or "nothing"
        out.append(("journal_damaged", f"{len(done.damage)} line(s) of the decision journal could not be trusted "
                                       f"and were left out ({where}); the damaged file(s) are kept as {aside} in "
                                       f"{journal.folder}. Decisions on those lines may be missing: check them."))
    if behind:
        applied, last, exists = behind
        what = f"ends at record {last}" if exists else "is missing"
        out.append(("journal_behind", f"The decision journal {what}, but the store holds records up to {applied}: "
                                      f"decisions since the journal's last backup cannot be checked against it "
                                      f"({journal.folder}). New decisions are journaled from record {applied + 1}."))
    return out


def _cut_message(journal: Journal, unaccounted: list[int], db_path: Path, folder: Path) -> str:
    n, first, last = len(unaccounted), min(unaccounted), max(unaccounted)
    held = [(name, seq) for name, seq in _backups(folder, db_path) if seq >= first]  # newest first
    if held:
        name, seq = held[0]
        some = sum(s <= seq for s in unaccounted)
        where = (f"The newest backup that has them: {folder / name} holds "
                 f"{'them' if some == n else f'{some} of them'} (its records go up to {seq}); the store file in it "
                 f"opens with DuckDB, read-only, to copy them back.")
    else:
        newest = _backups(folder, db_path)[:1]
        where = (f"No backup in {folder} holds them"
                 + (f" (the newest, {newest[0][0]}, goes up to record {newest[0][1]})." if newest else "."))
    return (f"The decision journal and the store were both cut: the journal cannot account for {_count(n, 'decision')}"
            f" or undos (records {first}-{last}: its segment headers say they were written; neither it nor the "
            f"store holds them now, {journal.folder}). {where}")


def _backups(folder: Path, db_path: Path) -> list[tuple[str, int]]:
    """This store's backups as (folder name, last journal record held), newest first, from the manifests that
    ``curation.ops.backup`` writes (read here: the store may not import the ops package)."""
    found = []
    for manifest in sorted(folder.glob("backup-*/manifest.json"), reverse=True) if folder.is_dir() else []:
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        store = data.get("store")
        if isinstance(data.get("journal_seq"), int) and (not store or Path(store).resolve() == db_path.resolve()):
            found.append((manifest.parent.name, data["journal_seq"]))
    return found


def _count(n: int, word: str) -> str:
    head, _, tail = word.partition(" ")
    return f"{n} {head}{'s' if n != 1 else ''}{' ' + tail if tail else ''}"


def _ids(ids: list[int]) -> str:
    shown = ", ".join(str(i) for i in ids[:10]) + (", ..." if len(ids) > 10 else "")
    return f"decision{'s' if len(ids) != 1 else ''} {shown}"


def open_notices(con: duckdb.DuckDBPyConnection) -> list[Notice]:
    """Repairs and problems found at open that no curator has acknowledged yet (oldest first)."""
    has_table = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'store_notices'").fetchall()[0][0]
    if not has_table:
        return []
    return [Notice(*row) for row in con.execute(SQL_OPEN_NOTICES).fetchall()]


def acknowledge_notice(con: duckdb.DuckDBPyConnection, notice_id: int, who: str) -> None:
    """Mark a notice read (by ``who``); it is kept, no longer shown."""
    con.execute(SQL_ACKNOWLEDGE, [" ".join(who.split()) or "someone", notice_id])
