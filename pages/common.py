"""App-side shared resources: the one place st.cache_resource creates long-lived objects."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import duckdb
import streamlit as st

from curation import store
from curation.config import load_settings
from curation.errors import CurationError


@st.cache_resource(show_spinner=False)
def _connection(db_path: str) -> duckdb.DuckDBPyConnection:
    return store.open_store(db_path)


def connection() -> duckdb.DuckDBPyConnection | None:
    """A cursor on the app's store (one per script run), or None with the reason shown."""
    db_path = str(load_settings().db_path)
    try:
        return _connection(db_path).cursor()
    except CurationError as exc:
        st.error(str(exc))
        return None


def safe_upload_name(name: str) -> str:
    """An uploaded file's name reduced to a plain file name (no folders, no traversal)."""
    base = Path(name.replace("\\", "/")).name
    base = re.sub(r"[^A-Za-z0-9._-]", "_", base).lstrip(".")
    return base or "upload"


def save_upload(upload) -> Path:
    """Write an uploaded file to a private temporary folder and return its path."""
    folder = Path(tempfile.mkdtemp(prefix="curation-upload-"))
    path = folder / safe_upload_name(upload.name)
    path.write_bytes(upload.getvalue())
    return path


def sidebar(con: duckdb.DuckDBPyConnection | None) -> None:
    """Curator, schema and store counts, shown on every page."""
    with st.sidebar:
        st.text_input("Curator", key="curator", placeholder="your name (needed to record decisions)")
        if con is None:
            return
        schemas = [s.name for s in store.list_schemas(con)]
        st.selectbox("Relation schema", schemas, key="schema")
        counts = store.stats(con)
        st.caption(
            f"Store: {counts['kb_records']} KB records · {counts['documents']} abstracts · "
            f"{counts['decisions']} decisions"
        )
