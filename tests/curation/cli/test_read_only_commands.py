"""Commands that write nothing open the store read-only, so they run beside each other.

DuckDB's file lock: any number of processes may hold a store read-only at once, while a process that opens it
read-write needs it alone (no reader, no other writer). So ``annotate``, ``stats``, ``normalise`` and
``roles list`` run while a ``search``/``suggest``/``export`` holds the store; a command that writes waits for
them and says who holds the store.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from curation.cli import main
from curation.store.opening import open_store
from curation.workflows.ingestion import ingest_corpus, ingest_kb


@pytest.fixture
def db(tmp_path, fixtures):
    path = tmp_path / "store.duckdb"
    con = open_store(path)
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    con.close()
    return path


@pytest.fixture
def reader(db):
    """Another process holding the store read-only, as ``search`` does while it runs; yields its PID."""
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import duckdb, sys
            con = duckdb.connect({str(db)!r}, read_only=True)
            print("ready", flush=True)
            sys.stdin.readline()
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        yield holder.pid
    finally:
        holder.communicate("\n", timeout=30)


def test_commands_that_write_nothing_run_while_a_search_holds_the_store(db, reader, fixtures, tmp_path, capsys):
    out = tmp_path / "mentions.pubtator"
    assert main(["annotate", str(fixtures / "annotate" / "abstracts.txt"), "--db", str(db), "--out", str(out)]) == 0
    assert out.read_text().strip()
    assert main(["stats", "--json", "--db", str(db)]) == 0
    assert '"documents"' in capsys.readouterr().out
    assert main(["normalise", "BRAF", "--db", str(db)]) in (0, 1)  # found or not: it ran, no lock error
    assert main(["roles", "list", "--db", str(db)]) == 0
    assert main(["search", "--db", str(db), "--schema", "PO", "--entity", "Gene=BRAF"]) == 0
    assert "in use by" not in capsys.readouterr().err


def test_a_command_that_writes_names_the_reader_it_waits_for(db, reader, fixtures, capsys):
    # DuckDB lets no process open a file read-write while another holds it, even read-only: the writer is told.
    assert main(["ingest-corpus", "pubtator", str(fixtures / "pubtator" / "small.PubTator"), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert f"in use by process {reader}" in err and "Traceback" not in err
