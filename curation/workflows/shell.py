"""The command line's side of the facade: who a command acts as and the store it opens.

Every write of a command goes through a workflow function that checks the role first, as the pages' do.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from curation.access import Identity, local_operator
from curation.config import load_settings
from curation.store.opening import open_store
from curation.workflows.schemas import apply_schema_file


def operator() -> Identity:
    """Who a command acts as: the machine account running it (every role; see curation.access.identity)."""
    return local_operator()


def open_command_store(db: str | Path, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """The store at ``db``; opened for writing, it takes in ``CURATION_SCHEMAS``'s schemas first
    (:func:`curation.workflows.schemas.apply_schema_file`), and is closed again if they cannot be saved."""
    con = open_store(db, read_only=read_only)
    if read_only:
        return con
    path = load_settings().schema_file
    if path is not None:
        try:
            apply_schema_file(con, path)
        except Exception:
            con.close()
            raise
    return con
