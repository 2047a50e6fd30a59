"""The decision journal: every decision and undo, appended and flushed to disk before it is acknowledged.

DuckDB's write-ahead log can be damaged in ways DuckDB does not notice: the store then opens with the
last transactions silently gone. The journal is a second, independent copy of what curators decided,
kept beside the store (``<store>.journal/``), from which the store is checked and repaired each time
it is opened read-write (:mod:`curation.store.reconcile`).

Format: JSON lines, one record per line, in numbered segment files (``000001.jsonl``, ...; a new
segment is started after each backup, and segments no kept backup needs are removed). A record::

    {"seq": 7, "store": "<store id>", "op": "decide" | "undo" | "void" | "ack", "at": "<UTC time>",
     "data": {...}, "confirm": true, "sum": "<sha256 of the record's other fields, canonical JSON>"}

``seq`` counts from 1 across segments, without gaps; ``store`` is the id the store was given when the
journal began (table ``journal_state``), so a journal is never replayed into another store. A record is
written and synced *before* its transaction commits, so a process killed between the two leaves a line
for a decision nobody was told about. ``"confirm": true`` (records written since acknowledgements began)
says that an ``ack`` record with the same ``seq`` follows once the commit has returned; a confirming
record without its ``ack`` was never confirmed to a curator. ``ack`` records take no ``seq`` of their own
(they repeat the one they acknowledge), and are not synced on their own: under a kill the OS keeps them,
and the next record's sync makes them durable.

Each segment written since then starts with a fixed-width header line, ``{"head":"<first> <last> <crc32>"}``:
the first and last ``seq`` appended to it, rewritten in place at each append (after the line, before the
same sync). A cut that takes the tail of a segment leaves the header, so the records the journal can no
longer account for are counted (:attr:`Scan.lost`), not guessed from one torn line. A line that does not
parse or whose checksum is wrong (a torn write at a crash, a flipped bit) is reported with its file and
line, and the damaged file is kept aside; the records around it still count.

This module only reads and writes the files; what a record means for the tables is in
:mod:`curation.store.decisions` and :mod:`curation.store.reconcile`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import threading
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from curation.errors import StoreDamagedError
from curation.files import fsync_path

FOLDER_SUFFIX = ".journal"
SEGMENT = re.compile(r"^(\d{6})\.jsonl$")
OPS = ("decide", "undo", "void", "ack")
HEAD = re.compile(r'^\{"head":"(\d{12}) (\d{12}) ([0-9a-f]{8})"\}$')

#: One lock per journal folder: sessions of one app share the process, and a decision's journal line
#: and its store transaction must not interleave with another decision's.
_locks: dict[str, threading.RLock] = {}
_locks_guard = threading.Lock()
#: The last ``seq`` this process appended to (or read in) each journal folder: a failed commit's record stays
#: in the file while the store does not count it, so the next record must number from here too.
_last_seq: dict[str, int] = {}


class JournalMismatchError(StoreDamagedError):
    """The journal beside a store belongs to another store (or the store to another journal)."""


def folder_for(db_path: str | Path) -> Path:
    """The journal folder of the store at ``db_path``."""
    db_path = Path(db_path)
    return db_path.with_name(db_path.name + FOLDER_SUFFIX)


def lock_for(folder: Path) -> threading.RLock:
    key = str(Path(folder).resolve())
    with _locks_guard:
        return _locks.setdefault(key, threading.RLock())


def now_text() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def checksum(record: Mapping[str, object]) -> str:
    """sha256 of the record without its ``sum``, as canonical JSON (sorted keys, no spaces)."""
    body = {k: v for k, v in record.items() if k != "sum"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Record:
    seq: int
    store: str
    op: str
    at: str
    data: Mapping[str, object]
    confirm: bool = False  # an ``ack`` of this seq follows once its transaction committed

    def line(self) -> str:
        body = {"seq": self.seq, "store": self.store, "op": self.op, "at": self.at, "data": dict(self.data)}
        if self.confirm:  # absent otherwise: lines written before acknowledgements keep their bytes and sums
            body["confirm"] = True
        return json.dumps({**body, "sum": checksum(body)}, sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class Damage:
    """A line of a segment that cannot be trusted."""

    file: str
    line: int
    reason: str

    def describe(self) -> str:
        return f"{self.file}, line {self.line}: {self.reason}"


@dataclass
class Scan:
    """What the journal holds: its good records in ``seq`` order, and what was wrong."""

    records: list[Record] = field(default_factory=list)
    damage: list[Damage] = field(default_factory=list)
    stores: set[str] = field(default_factory=set)
    acks: list[Record] = field(default_factory=list)  # kept apart: an ack repeats the seq it acknowledges
    #: seqs a segment's header says were appended to it that it no longer holds (the segment was cut)
    lost: list[int] = field(default_factory=list)
    #: the highest seq any segment's header names (0: no header)
    head_seq: int = 0
    #: seqs of records that a damaged line follows in their segment: their ``ack`` may have been on it
    torn_after: set[int] = field(default_factory=set)

    @property
    def acked(self) -> set[int]:
        return {r.seq for r in self.acks}

    @property
    def high_water(self) -> int:
        """The last seq the journal knows was written: its last record, or a header's, past a cut."""
        return max(self.last_seq, self.head_seq)

    def unconfirmed(self, record: Record) -> bool:
        """A record written to be confirmed whose ``ack`` never came: its commit never returned to a curator.
        Not when lines after it were cut away or damaged: its ``ack`` may have gone with them (:meth:`uncertain`)."""
        return record.confirm and record.seq not in self.acked and not self._ack_may_be_gone(record)

    def uncertain(self, record: Record) -> bool:
        """A record written to be confirmed whose ``ack`` is missing where the lines after it were cut or damaged:
        whether its commit returned to a curator cannot be known."""
        return record.confirm and record.seq not in self.acked and self._ack_may_be_gone(record)

    def _ack_may_be_gone(self, record: Record) -> bool:
        return bool(self.lost and max(self.lost) > record.seq) or record.seq in self.torn_after

    @property
    def last_seq(self) -> int:
        return self.records[-1].seq if self.records else 0

    def missing(self) -> list[int]:
        """Sequence numbers absent between 1 and the last one (a lost line)."""
        present = {r.seq for r in self.records}
        return [s for s in range(1, self.last_seq + 1) if s not in present]


def _parse(text: str, file: str, number: int) -> Record | Damage:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        return Damage(file, number, f"not JSON ({exc.msg} at character {exc.pos})")
    if not isinstance(raw, dict):
        return Damage(file, number, "not a JSON object")
    expected = {"seq", "store", "op", "at", "data", "sum"}
    if set(raw) not in (expected, expected | {"confirm"}):
        return Damage(file, number, f"fields {sorted(raw)}, expected {sorted(expected)}")
    if raw["sum"] != checksum(raw):
        return Damage(file, number, "checksum does not match (the line was changed or cut)")
    if not isinstance(raw["seq"], int) or raw["seq"] < 1 or raw["op"] not in OPS or not isinstance(raw["data"], dict):
        return Damage(file, number, f"bad seq or op ({raw['seq']!r}, {raw['op']!r})")
    return Record(raw["seq"], str(raw["store"]), raw["op"], str(raw["at"]), raw["data"], raw.get("confirm") is True)


class Journal:
    """The journal folder of one store."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    @classmethod
    def beside(cls, db_path: str | Path) -> Journal:
        return cls(folder_for(db_path))

    @property
    def lock(self) -> threading.RLock:
        return lock_for(self.folder)

    @property
    def last_seq(self) -> int:
        """The last ``seq`` appended by this process, or seen by :meth:`note_seq` (0: none yet)."""
        return _last_seq.get(str(self.folder.resolve()), 0)

    def note_seq(self, seq: int) -> None:
        key = str(self.folder.resolve())
        _last_seq[key] = max(seq, _last_seq.get(key, 0))

    def segments(self) -> list[Path]:
        if not self.folder.is_dir():
            return []
        return sorted(p for p in self.folder.iterdir() if SEGMENT.match(p.name))

    def exists(self) -> bool:
        return bool(self.segments())

    def _current(self) -> Path:
        segments = self.segments()
        if segments and (segments[-1].stat().st_size == 0 or _head_of(segments[-1]) is not None):
            return segments[-1]
        # none yet, or the last one has no (readable) header: written before headers, or damaged
        number = int(SEGMENT.match(segments[-1].name).group(1)) + 1 if segments else 1
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{number:06d}.jsonl"
        path.touch()
        fsync_path(self.folder)
        return path

    def append(self, record: Record, sync: bool = True) -> None:
        """Append one record and flush it to disk (file and, for a new file, its folder) before returning;
        ``sync=False`` (an ``ack``) leaves the flush to the OS and to the next synced record.

        Raises:
            OSError: the disk is full or the folder not writable; the caller must not acknowledge.
        """
        line = record.line().encode("utf-8")
        path = self._current()
        head = _head_of(path)
        with open(path, "r+b") as out:  # not "ab": the header is rewritten in place
            if head is None:  # a new segment: its header first
                head = (record.seq + (record.op == "ack"), record.seq - (record.op != "ack"))
                out.write(_head_line(*head))
            end = out.seek(0, os.SEEK_END)
            if end and not _ends_with_newline(path):
                out.write(b"\n")  # a torn last line stays a line of its own (reported, never merged)
            out.write(line)
            if record.op != "ack" and record.seq > head[1]:  # after the line: a header never runs ahead
                out.seek(0)
                out.write(_head_line(head[0], record.seq))
            out.flush()
            if sync:
                os.fsync(out.fileno())
        self.note_seq(record.seq)

    def scan(self) -> Scan:
        """Read every segment; damaged lines are listed, never raised."""
        scan = Scan()
        for path in self.segments():
            with open(path, "rb") as handle:
                data = handle.read()
            lines = data.split(b"\n")
            head = _parse_head(lines[0])
            if head is False:
                scan.damage.append(Damage(path.name, 1, "segment header damaged or cut"))
            held: set[int] = set()
            before: list[int] = []  # seqs of this segment's records so far (a damaged line may be their ack)
            for number, raw in enumerate(lines, start=1):
                if not raw.strip() or (number == 1 and head is not None):
                    continue
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    scan.damage.append(Damage(path.name, number, "not UTF-8"))
                    scan.torn_after.update(before)
                    continue
                parsed = _parse(text, path.name, number)
                if isinstance(parsed, Damage):
                    if number == len(lines) and not data.endswith(b"\n"):
                        parsed = Damage(path.name, number, f"torn last line ({parsed.reason})")
                    scan.damage.append(parsed)
                    scan.torn_after.update(before)
                else:
                    (scan.acks if parsed.op == "ack" else scan.records).append(parsed)
                    scan.stores.add(parsed.store)
                    if parsed.op != "ack":
                        held.add(parsed.seq)
                        before.append(parsed.seq)
            if head:
                first, last = head
                scan.lost += [seq for seq in range(first, last + 1) if seq not in held]
                scan.head_seq = max(scan.head_seq, last)
        scan.records.sort(key=lambda r: r.seq)
        deduped: list[Record] = []
        for record in scan.records:  # a repeated seq (never written twice by us): keep the first
            if deduped and deduped[-1].seq == record.seq:
                scan.damage.append(Damage("?", 0, f"seq {record.seq} appears twice; the first is kept"))
                continue
            deduped.append(record)
        scan.records = deduped
        return scan

    def set_aside(self, scan: Scan, stamp: str) -> list[Path]:
        """Copy each segment with damage to ``damaged-<stamp>-<name>`` and rewrite it with its good lines only."""
        kept: list[Path] = []
        for name in sorted({d.file for d in scan.damage if d.file != "?"}):
            path = self.folder / name
            aside = self.folder / f"damaged-{stamp}-{name}"
            shutil.copyfile(path, aside)
            fsync_path(aside)
            kept_records, good = scan.records + scan.acks, []
            for record in _records_of(path):  # in file order; a repeated seq left out by scan stays out
                if record in kept_records and record not in good:
                    good.append(record)
            tmp = path.with_name(f".{name}.rewrite")
            with open(tmp, "wb") as out:
                head = _head_of(path)
                if head is not None:  # kept as it was: it still says how far the segment went
                    out.write(_head_line(*head))
                for record in good:
                    out.write(record.line().encode("utf-8"))
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
            fsync_path(self.folder)
            kept.append(aside)
        return kept

    def rotate(self) -> Path | None:
        """Start a new segment (after a backup); returns it, or None when the current one is empty."""
        segments = self.segments()
        if not segments or not _records_of(segments[-1]):
            return None
        number = int(SEGMENT.match(segments[-1].name).group(1)) + 1
        path = self.folder / f"{number:06d}.jsonl"
        path.touch()
        fsync_path(self.folder)
        return path

    def prune(self, needed_from_seq: int) -> list[Path]:
        """Remove whole segments whose records all have ``seq`` < ``needed_from_seq``. The current segment and
        the one holding the last record are kept: the journal always knows the last record written."""
        removed: list[Path] = []
        holding = [(path, _records_of(path)) for path in self.segments()]
        with_records = [path for path, records in holding if records]
        keep = {holding[-1][0], *(with_records[-1:])} if holding else set()
        for path, records in holding:
            if path not in keep and records and max(r.seq for r in records) < needed_from_seq:
                path.unlink()
                removed.append(path)
        if removed:
            fsync_path(self.folder)
        return removed


def _records_of(path: Path) -> list[Record]:
    out = []
    for number, text in enumerate(path.read_text(encoding="utf-8", errors="replace").split("\n"), start=1):
        if text.strip():
            parsed = _parse(text, path.name, number)
            if isinstance(parsed, Record):
                out.append(parsed)
    return out


def _head_line(first: int, last: int) -> bytes:
    span = f"{first:012d} {last:012d}"
    return f'{{"head":"{span} {zlib.crc32(span.encode()):08x}"}}\n'.encode()


def _parse_head(line: bytes) -> tuple[int, int] | None | bool:
    """A segment's first line as a header: (first, last); None when it is no header (a segment written before
    headers); False when it is one that is damaged or cut."""
    if not line.startswith(b'{"head":'):
        return None
    match = HEAD.match(line.decode("ascii", errors="replace"))
    if not match or int(match.group(3), 16) != zlib.crc32(f"{match.group(1)} {match.group(2)}".encode()):
        return False
    return int(match.group(1)), int(match.group(2))


def _head_of(path: Path) -> tuple[int, int] | None:
    """The readable header of a segment file, or None (no header, a damaged one, or an empty file)."""
    with open(path, "rb") as handle:
        head = _parse_head(handle.read(len(_head_line(0, 0))).rstrip(b"\n"))
    return head or None


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"
