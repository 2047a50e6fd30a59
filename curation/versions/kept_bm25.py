"""BM25 alone (no model version serves yet), kept between processes instead of built by each.

Building the lexical index tokenizes every abstract: 1-3 s for the sample's 3,476 on 2 cores, paid by every app
start and every CLI command on a store without a version, and competing for the CPU with the first search. It is
kept as :meth:`index.lexical.LexicalIndex.save` writes it (bm25s's own files, memory-mapped on load; never a
pickle) in ``<cache_dir>/bm25/bm25-<digest>/``. The digest covers the documents as the index reads them (each
one's PMID, title and abstract, hashed by DuckDB), the index's settings and format, and bm25s's version: any
ingest makes another digest, hence a build. The folder is written beside its final name and renamed into place,
so a reader sees a whole copy or none.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

import duckdb

from curation.store.corpus import iter_documents
from index.lexical import FORMAT_VERSION, LexicalConfig, LexicalIndex, LexicalIndexError

KEEP = 2  # kept folders (the store as it is, and one state back)


def documents_digest(con: duckdb.DuckDBPyConnection, config: LexicalConfig = LexicalConfig()) -> str:
    """The digest a kept index is named by (see the module docstring)."""
    from importlib.metadata import version

    count, total = con.execute(
        "SELECT count(*), coalesce(sum(hash(pmid, coalesce(title, ''), coalesce(abstract, ''))), 0) FROM documents"
    ).fetchall()[0]  # fetched whole: a half-read result blocks the connection
    return hashlib.sha256(f"{FORMAT_VERSION}\n{version('bm25s')}\n{asdict(config)}\n{count}\n{total}".encode()
                          ).hexdigest()


def bm25_alone(con: duckdb.DuckDBPyConnection, cache_dir: Path | None) -> LexicalIndex:
    """The store's BM25 index: read from ``cache_dir`` when kept for the documents as they are, else built (and kept
    there). ``cache_dir`` None: built, never kept; a folder that cannot be written only costs the next start the
    build."""
    if cache_dir is None:
        return LexicalIndex.build(list(iter_documents(con)))
    folder = Path(cache_dir) / "bm25" / f"bm25-{documents_digest(con)[:32]}"
    if folder.exists():
        try:
            return LexicalIndex.load(folder)
        except LexicalIndexError as exc:
            print(f"the kept BM25 index {folder} is not used ({exc}): building it again", file=sys.stderr)
    index = LexicalIndex.build(list(iter_documents(con)))
    try:
        _keep(folder, index)
    except OSError as exc:
        print(f"the BM25 index could not be kept in {folder} ({exc})", file=sys.stderr)
    return index


def _keep(folder: Path, index: LexicalIndex) -> None:
    folder.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        index.save(stage)
        if folder.exists():  # damaged under the same name: replaced
            shutil.rmtree(folder, ignore_errors=True)
        stage.rename(folder)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    kept = sorted((p for p in folder.parent.glob("bm25-*") if p.is_dir()), key=lambda p: p.stat().st_mtime)
    for old in kept[:-KEEP]:
        shutil.rmtree(old, ignore_errors=True)  # a process reading one keeps its memory map (POSIX)
