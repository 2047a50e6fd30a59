from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from curation.errors import CurationError, StoreLockedError
from curation.records import Document, KBRecord, Mention, Synonym
from curation.store.base import list_schemas, schema_version, stats, transaction
from curation.store.corpus import add_documents, add_synonyms, get_documents, list_synonyms
from curation.store.kb import add_kb_records, list_entity_values, list_kb_records
from curation.store.migrations import MIGRATIONS
from curation.store.opening import open_store


def _record(source_id="EID1", treatment="Vemurafenib", updated="2024-01-01", pmid="123"):
    return KBRecord(
        schema="PO",
        entities=(("Gene", "BRAF"), ("Variant", "V600E"), ("Treatment", treatment)),
        pmid=pmid,
        source="civic",
        source_id=source_id,
        attributes=(("updated", updated),),
    )


def test_migrations_run_once_and_record_the_version(tmp_path):
    path = tmp_path / "s.duckdb"
    con = open_store(path)
    assert schema_version(con) == MIGRATIONS[-1][0]
    con.close()
    con = open_store(path)  # a second open applies nothing again
    rows = con.execute("SELECT version FROM schema_version").fetchall()
    assert rows == [(v,) for v, _, _ in MIGRATIONS]
    assert [s.name for s in list_schemas(con)] == ["PO", "PTM", "Chemical-Disease", "Disease-Treatment", "Gene-Disease"]


def test_kb_records_round_trip_and_reingest_is_idempotent(con):
    with transaction(con):
        assert add_kb_records(con, [_record(), _record("EID2", "")], origin="a.tsv") == (2, 0, 0)
    with transaction(con):
        assert add_kb_records(con, [_record(), _record("EID2", "")], origin="a.tsv") == (0, 0, 2)
    records = list_kb_records(con, "PO")
    assert [r.source_id for r in records] == ["EID1", "EID2"]
    assert records[0] == _record()
    assert list_entity_values(con, "PO", "Treatment") == [("Vemurafenib", 1)]
    assert con.execute("SELECT answer FROM kb_records ORDER BY source_id").fetchall() == [("Vemurafenib",), ("",)]


def test_newer_record_updates_older_does_not(con):
    with transaction(con):
        add_kb_records(con, [_record(treatment="Dabrafenib", updated="2024-05-01")], origin="new.tsv")
    with transaction(con):
        assert add_kb_records(con, [_record(updated="2015-01-01")], origin="old.tsv") == (0, 0, 1)
    assert list_kb_records(con)[0].get("Treatment") == "Dabrafenib"
    with transaction(con):
        assert add_kb_records(con, [_record(updated="2025-01-01")], origin="newer.tsv") == (0, 1, 0)
    assert list_kb_records(con)[0].get("Treatment") == "Vemurafenib"
    assert con.execute("SELECT count(*) FROM kb_entities").fetchone()[0] == 3


def test_documents_merge_by_pmid_with_both_annotation_sets(con):
    text_a = Document("1", "T", "A", source="biored", mentions=(Mention("1", 0, 1, "T", "Gene", "7", "biored"),))
    text_b = Document("1", "T", "A", source="bc5cdr", mentions=(Mention("1", 2, 3, "A", "Chemical", "D1", "bc5cdr"),))
    with transaction(con):
        assert add_documents(con, [text_a]) == (1, 0)
    with transaction(con):
        assert add_documents(con, [text_b]) == (0, 1)
    with transaction(con):
        assert add_documents(con, [text_b]) == (0, 1)
    (doc,) = get_documents(con, ["1", "404"], with_mentions=True)
    assert sorted(doc.source.split(",")) == ["bc5cdr", "biored"]
    assert [m.type for m in doc.mentions] == ["Gene", "Chemical"]
    assert stats(con)["documents"] == 1 and stats(con)["mentions"] == 2


def test_transaction_rolls_back_everything(con):
    with pytest.raises(RuntimeError), transaction(con):
        add_documents(con, [Document("9", "t", "a")])
        raise RuntimeError("disk full")
    assert stats(con)["documents"] == 0


def test_values_are_bound_not_interpolated(con):
    nasty = "x'); DROP TABLE documents; --"
    with transaction(con):
        add_documents(con, [Document("5", nasty, nasty + " \"quoted\" ; %s {0}")])
        add_synonyms(con, [Synonym("C1", "chemical", nasty)])
    (doc,) = get_documents(con, ["5"])
    assert doc.title == nasty
    assert list_synonyms(con, "chemical")[0].name == nasty
    assert stats(con)["documents"] == 1


def test_second_writer_gets_a_clear_message(tmp_path):
    path = tmp_path / "locked.duckdb"
    open_store(path).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import duckdb, sys, time
            con = duckdb.connect({str(path)!r})
            print("ready", flush=True)
            sys.stdin.readline()
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(StoreLockedError, match=rf"in use by process {holder.pid}.*--db"):
            open_store(path)
    finally:
        holder.communicate("\n", timeout=30)


def test_a_damaged_store_says_how_to_recover(tmp_path):
    from curation.errors import StoreDamagedError

    path = tmp_path / "damaged.duckdb"
    open_store(path).close()
    with open(path, "r+b") as handle:  # the file's headers overwritten
        handle.write(b"\0" * 12288)
    before = path.read_bytes()
    with pytest.raises(StoreDamagedError, match=r"cannot be opened .*python -m curation recover --db"):
        open_store(path)
    assert path.read_bytes() == before  # nothing was changed


def test_a_leftover_wal_is_copied_before_it_is_replayed(tmp_path):
    path = tmp_path / "s.duckdb"
    open_store(path).close()
    wal = tmp_path / "s.duckdb.wal"
    for n in range(5):
        wal.write_bytes(b"left by a killed process %d" % n)
        try:
            open_store(path).close()
        except CurationError:
            pass  # whether DuckDB replays, ignores or refuses this WAL, the raw copy is kept
    copies = sorted(tmp_path.glob("s.duckdb.wal.at-open-*"))
    assert len(copies) == 3  # the newest three
    assert copies[-1].read_bytes() == b"left by a killed process 4"
