"""A digest of what the store's lexicon is built from, computed in DuckDB without reading the rows out.

The lexicon (``curation.entities.dictionaries.build_lexicon``) reads the synonyms, the gold mentions, the KB
records of every schema, the schemas and the abstracts that carry mentions. Per table, the row count and the sum
of a 64-bit hash of every column the lexicon reads change with any added, removed or edited row (the sum, not a
combination in row order: the lexicon's own queries order the rows by content). The kept copy of the matcher
(``curation.entities.matcher_cache``) is named by it; a few tens of milliseconds on 430k synonyms.
"""

from __future__ import annotations

import hashlib

import duckdb

# Every column a Document is read with (curation.store.corpus.SQL_DOCUMENT_COLUMNS), lists as text.
_DOCUMENT = "pmid, title, abstract, journal, year, sources::VARCHAR, authors::VARCHAR, pub_types::VARCHAR"
_ROWS = "count(*) || ':' || coalesce(sum(hash({columns})::HUGEINT), 0)"
SQL_LEXICON_INPUTS = f"""
SELECT
  (SELECT {_ROWS.format(columns="kind, concept_id, name, source, canonical, species")} FROM synonyms),
  (SELECT {_ROWS.format(columns="pmid, start_offset, end_offset, text, mention_type, concept_id, source")}
   FROM mentions),
  (SELECT {_ROWS.format(columns="schema_name, entities::VARCHAR, pmid, source, source_id, attributes::VARCHAR")}
   FROM kb_records),
  (SELECT {_ROWS.format(columns="name, definition::VARCHAR, builtin")} FROM relation_schemas),
  (SELECT {_ROWS.format(columns=_DOCUMENT)} FROM documents WHERE pmid IN (SELECT pmid FROM mentions))
"""
TABLES = ("synonyms", "mentions", "kb_records", "relation_schemas", "annotated documents")


def lexicon_inputs_digest(con: duckdb.DuckDBPyConnection) -> str:
    """A hex digest that changes whenever a row the lexicon is built from changes (see the module docstring).

    DuckDB's ``hash`` may change between DuckDB versions: its version is part of the digest.
    """
    parts = con.execute(SQL_LEXICON_INPUTS).fetchone()
    hasher = hashlib.sha256(f"duckdb {duckdb.__version__}\n".encode())
    for table, part in zip(TABLES, parts, strict=True):
        hasher.update(f"{table} {part}\n".encode())
    return hasher.hexdigest()
