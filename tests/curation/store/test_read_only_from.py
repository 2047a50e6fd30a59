"""A read-only open that needs a schema version: what is not a store, or an older one, is refused in words."""

from __future__ import annotations

import duckdb
import pytest

from curation.errors import CurationError
from curation.store.base import schema_version
from curation.store.opening import open_read_only_from, open_store


def test_a_read_only_open_refuses_a_missing_file_a_plain_database_and_an_older_store(tmp_path):
    with pytest.raises(CurationError, match="none.duckdb: no store here"):
        open_read_only_from(tmp_path / "none.duckdb", 1, "older")
    plain = tmp_path / "plain.duckdb"
    duckdb.connect(str(plain)).close()
    with pytest.raises(CurationError, match="not a curation store"):
        open_read_only_from(plain, 1, "older")
    store = tmp_path / "s.duckdb"
    open_store(store).close()
    with pytest.raises(CurationError, match="^run the newer command$"):
        open_read_only_from(store, 10**6, "run the newer command")
    con = open_read_only_from(store, 1, "older")
    try:
        assert schema_version(con) >= 1
    finally:
        con.close()
