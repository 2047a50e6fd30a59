"""The backup benchmark's recovery part: what the product gives back from damaged copies.

A damaged store file, WALs damaged at random places, and a double fault: the WAL and the decision journal
both cut (what the product says it lost, checked against what it lost).
"""

from __future__ import annotations

import os
import random
import re
import shutil
import time
from pathlib import Path

import duckdb

from bench._backup_timing import ms_summary, timed_decision
from curation.errors import StoreDamagedError
from curation.ops.backup import backup_store
from curation.ops.recovery import recover_store, wal_path
from curation.store.journal import Journal, folder_for
from curation.store.opening import open_store
from curation.store.reconcile import acknowledge_notice, open_notices


def recovery_figures(db: Path, folder: Path, work: Path, pmids: list[str], trials: int) -> dict[str, object]:
    """Recover a copy whose store file is damaged; then damage a WAL of 200 decisions at random places
    (16 bytes inverted) and see what DuckDB does with each, and what ``recover`` gets back when it refuses."""
    out: dict[str, object] = {}
    broken = work / "headers" / "store.duckdb"
    broken.parent.mkdir()
    shutil.copyfile(db, broken)
    with open(broken, "r+b") as handle:
        handle.write(b"\0" * 12288)
    started = time.perf_counter()
    report = recover_store(broken, folder)
    out["damaged_file"] = {"seconds": round(time.perf_counter() - started, 3), "restored": report.restored_kind,
                           "decision_rows": report.decisions[0]}

    walled = work / "wal" / "store.duckdb"
    walled.parent.mkdir()
    shutil.copyfile(db, walled)
    con = open_store(walled)
    before = con.execute("SELECT count(*) FROM decisions").fetchall()[0][0]
    for i in range(200):
        timed_decision(con, 20_000_000 + i, pmids)
    con.execute("PRAGMA disable_checkpoint_on_shutdown")  # leave the WAL as a killed process would
    con.close()
    size = wal_path(walled).stat().st_size
    chooser = random.Random(11)
    outcomes = []
    for position in sorted(chooser.randrange(0, size - 16) for _ in range(trials)):
        trial = work / "trial" / "store.duckdb"
        trial.parent.mkdir()
        shutil.copyfile(walled, trial)
        shutil.copyfile(wal_path(walled), wal_path(trial))
        with open(wal_path(trial), "r+b") as handle:
            handle.seek(position)
            data = handle.read(16)
            handle.seek(position)
            handle.write(bytes(b ^ 0xFF for b in data))
        outcome: dict[str, object] = {"position": position}
        outcome["product"] = _product_open(walled, work, folder, before, 200, position=position)
        try:
            with duckdb.connect(str(trial)) as probe:
                outcome["opened_with"] = probe.execute("SELECT count(*) FROM decisions").fetchall()[0][0] - before
        except duckdb.Error as exc:
            outcome["refused"] = "checksum" if "Corrupt WAL file" in str(exc) else str(exc).splitlines()[0][-160:]
            started = time.perf_counter()
            report = recover_store(trial, folder)
            outcome["recover_s"] = round(time.perf_counter() - started, 3)
            outcome["restored"] = report.restored_kind
            outcome["recovered"] = report.decisions[0] - before
        outcomes.append(outcome)
        shutil.rmtree(trial.parent)
    silent = [o for o in outcomes if "opened_with" in o]
    refused = [o for o in outcomes if "refused" in o]
    out["corrupt_wal"] = {
        "wal_bytes": size,
        "decisions_in_wal": 200,
        "trials": len(outcomes),
        "refused": len(refused),
        "refused_checksum": sum(o["refused"] == "checksum" for o in refused),
        "opened_silently": len(silent),
        "opened_silently_lost_decisions": sorted(200 - o["opened_with"] for o in silent),
        "recovered_decisions_when_refused": sorted(o["recovered"] for o in refused),
        "restored_from": sorted({o["restored"] for o in refused}),
        "recover_s": ms_summary([o["recover_s"] * 1000 for o in refused]) if refused else None,
        "product": _product_summary([o["product"] for o in outcomes]),
        "outcomes": outcomes,
    }
    truncated = []
    for cut in sorted(chooser.randrange(1, size) for _ in range(max(1, trials // 4))):
        trial = work / "trial" / "store.duckdb"
        trial.parent.mkdir()
        shutil.copyfile(walled, trial)
        shutil.copyfile(wal_path(walled), wal_path(trial))
        os.truncate(wal_path(trial), cut)
        product = _product_open(walled, work, folder, before, 200, cut=cut)
        try:
            with duckdb.connect(str(trial)) as probe:
                kept = probe.execute("SELECT count(*) FROM decisions").fetchall()[0][0] - before
            truncated.append({"cut_at": cut, "opened_with": kept, "product": product})
        except duckdb.Error as exc:
            truncated.append({"cut_at": cut, "refused": str(exc)[:120], "product": product})
        shutil.rmtree(trial.parent)
    out["truncated_wal"] = {
        "trials": len(truncated),
        "opened_silently": sum("opened_with" in t for t in truncated),
        "lost_decisions": sorted(200 - t["opened_with"] for t in truncated if "opened_with" in t),
        "product": _product_summary([t["product"] for t in truncated]),
        "outcomes": truncated,
    }
    return out


def _product_open(walled: Path, work: Path, folder: Path, before: int, made: int, position: int | None = None,
                  cut: int | None = None) -> dict[str, object]:
    """What the product gives back from a damaged copy: the store, its WAL (16 bytes inverted at ``position``,
    or cut at ``cut``) and its decision journal, as they sit side by side in a deployment.
    ``curation.store.opening.open_store`` (which checks the store against the journal), and ``recover_store`` when
    it refuses; then how many of the
    ``made`` decisions are there, and whether a person is told (a notice, or the recovery report)."""
    copy = work / "product" / "store.duckdb"
    copy.parent.mkdir()
    try:
        shutil.copyfile(walled, copy)
        shutil.copyfile(wal_path(walled), wal_path(copy))
        journal = walled.with_name(walled.name + ".journal")
        if journal.is_dir():
            shutil.copytree(journal, copy.with_name(copy.name + ".journal"))
        with open(wal_path(copy), "r+b") as handle:
            if position is not None:
                handle.seek(position)
                data = handle.read(16)
                handle.seek(position)
                handle.write(bytes(b ^ 0xFF for b in data))
        if cut is not None:
            os.truncate(wal_path(copy), cut)
        started = time.perf_counter()
        told: list[str] = []
        try:
            con = open_store(copy)
            path = "opened"
        except StoreDamagedError:
            report = recover_store(copy, folder)
            told.append(f"recover: restored from {report.restored_kind}")
            con = open_store(copy)
            path = "recovered"
        try:
            present = con.execute("SELECT count(*) FROM decisions").fetchall()[0][0] - before
            told += [f"{n.kind}" for n in open_notices(con)]
        finally:
            con.close()
        lost = max(0, made - present)
        return {"path": path, "seconds": round(time.perf_counter() - started, 3), "present": present, "lost": lost,
                "told": told, "silent_lost": 0 if told else lost}
    finally:
        shutil.rmtree(copy.parent, ignore_errors=True)


def _product_summary(results: list[dict[str, object]]) -> dict[str, object]:
    return {
        "trials": len(results),
        "opened": sum(r["path"] == "opened" for r in results),
        "recovered": sum(r["path"] == "recovered" for r in results),
        "lost_decisions": sum(r["lost"] for r in results),
        "silent_lost_decisions": sum(r["silent_lost"] for r in results),
        "told": sum(bool(r["told"]) for r in results),
        "seconds": ms_summary([r["seconds"] * 1000 for r in results]) if results else None,
    }


def double_fault_trials(db: Path, work: Path, pmids: list[str], trials: int, made: int = 60,
                        seed: int = 17) -> dict[str, object]:
    """The store's WAL and its decision journal both cut at random places (a double fault), ``trials`` times.

    A copy of the store records ``made`` decisions (in the WAL only) and is backed up while a write is in
    flight (the backup's CHECKPOINT is skipped, so the WAL keeps them and the backup holds them all). Each
    trial puts that state back, cuts the WAL and the journal segment holding the decisions, and opens the
    store as the app does. The notice must count exactly the decisions now missing and name that backup."""
    root = work / "double"
    store, pristine, folder = root / "store.duckdb", root / "pristine", root / "backups"
    pristine.mkdir(parents=True)
    shutil.copyfile(db, store)
    con = open_store(store, backups_dir=folder)
    for notice in open_notices(con):  # the copy has no journal yet (one is started): not what is measured
        acknowledge_notice(con, notice.notice_id, "bench")
    con.execute("CHECKPOINT")
    before = con.execute("SELECT count(*) FROM decisions").fetchall()[0][0]
    for i in range(made):
        timed_decision(con, 30_000_000 + i, pmids)
    writer = con.cursor()  # a curator's write in flight while the backup runs
    writer.execute("BEGIN TRANSACTION")
    writer.execute("UPDATE journal_state SET applied_seq = applied_seq")
    backup = backup_store(con, folder, keep=1)
    writer.execute("ROLLBACK")
    con.execute("PRAGMA disable_checkpoint_on_shutdown")  # leave the WAL as a killed process would
    con.close()
    if backup.manifest["checkpointed_first"]:
        raise RuntimeError("the backup checkpointed the store: the WAL no longer holds the decisions to cut")
    journal = folder_for(store)
    shutil.copyfile(store, pristine / store.name)
    shutil.copyfile(wal_path(store), pristine / wal_path(store).name)
    shutil.copytree(journal, pristine / journal.name)
    chooser = random.Random(seed)
    outcomes = []
    for _ in range(trials):
        for path in (store, wal_path(store)):
            shutil.copyfile(pristine / path.name, path)
        shutil.rmtree(journal)
        shutil.copytree(pristine / journal.name, journal)
        segment = [p for p in Journal(journal).segments() if '"op":"decide"' in p.read_text()][-1]
        wal_cut = chooser.randrange(1, wal_path(store).stat().st_size)
        journal_cut = chooser.randrange(1, segment.stat().st_size)
        os.truncate(wal_path(store), wal_cut)
        os.truncate(segment, journal_cut)
        outcome: dict[str, object] = {"wal_cut": wal_cut, "journal_cut": journal_cut}
        try:
            con = open_store(store, backups_dir=folder)
        except StoreDamagedError:
            outcome["recovered_from"] = recover_store(store, folder).restored_kind
            con = open_store(store, backups_dir=folder)
        try:
            lost = made - (con.execute("SELECT count(*) FROM decisions").fetchall()[0][0] - before)
            notices = open_notices(con)
        finally:
            con.close()
        cut = " ".join(n.message for n in notices if n.kind == "journal_cut")
        counted = re.search(r"cannot account for (\d+) decision", cut)
        outcome.update(lost=lost, counted=int(counted.group(1)) if counted else 0, notices=[n.kind for n in notices],
                       named_backup=str(backup.folder) in cut)
        outcome["message_true"] = (outcome["counted"] == lost and outcome["named_backup"] == (lost > 0)
                                   and "unconfirmed" not in outcome["notices"])
        outcomes.append(outcome)
    return {
        "trials": trials,
        "decisions_in_wal": made,
        "lost_decisions": sorted(o["lost"] for o in outcomes),
        "counted_right": sum(o["counted"] == o["lost"] for o in outcomes),
        "named_backup_when_lost": sum(o["named_backup"] for o in outcomes if o["lost"]),
        "trials_with_loss": sum(o["lost"] > 0 for o in outcomes),
        "messages_true": sum(o["message_true"] for o in outcomes),
        "messages_wrong": [o for o in outcomes if not o["message_true"]][:5],
    }
