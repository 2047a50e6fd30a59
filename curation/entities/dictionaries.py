"""Assembling the lexicon the matcher and the normaliser use, from what the store holds.

Sources: dictionary files ingested into the store (DrugBank, HGNC), the knowledge base's own
entity values (every schema), the corpus's gold annotations (names grouped by concept id),
and the built-in PTM and element vocabularies. Names that the store's annotated abstracts
show to be usually wrong when matched (``curation.entities.name_filter``) are left out, the rule the
matching benchmark measures.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace

import duckdb

from curation import store
from curation.entities.lexicon import Lexicon, normalise_name
from curation.entities.matching import Matcher
from curation.entities.name_filter import measure_names, merge_stats, unreliable_names
from curation.entities.synonyms import (
    PUBTATOR_KINDS,
    drugbank_synonyms,
    element_synonyms,
    hgnc_synonyms,
    kb_synonyms,
    mention_synonyms,
    ptm_synonyms,
)
from curation.errors import InputError
from curation.records import Document, KBRecord, Mention, Synonym
from curation.schemas import RelationSchema

DICTIONARY_FORMATS = ("drugbank", "hgnc")


def read_dictionary(kind: str, path) -> list[Synonym]:
    """Synonyms of a dictionary file (drugbank vocabulary CSV, HGNC complete set TSV)."""
    if kind == "drugbank":
        return drugbank_synonyms(path)
    if kind == "hgnc":
        return hgnc_synonyms(path)
    raise InputError(str(path), None, None, f"unknown dictionary format '{kind}'; use one of {DICTIONARY_FORMATS}")


def ingest_dictionary(con: duckdb.DuckDBPyConnection, kind: str, path) -> tuple[int, int]:
    """Add a dictionary file's synonyms to the store (one transaction). Returns (read, new)."""
    synonyms = read_dictionary(kind, path)
    with store.transaction(con):
        added = store.add_synonyms(con, synonyms)
        store.record_ingest(con, f"dict:{kind}", str(path), added, len(synonyms) - added, 0)
    return len(synonyms), added


def merged_synonyms(
    dictionary: Sequence[Synonym], records: Iterable[tuple[RelationSchema, Sequence[KBRecord]]],
    mentions: Iterable[Mention],
) -> list[Synonym]:
    """Every synonym source, unfiltered.

    KB values and annotation names that are exactly a name of one dictionary concept are
    filed under that concept, so "Vemurafenib" from CIViC and DrugBank's DB08881 are one.
    """
    owners: dict[tuple[str, str], set[str]] = defaultdict(set)
    for synonym in dictionary:
        owners[(synonym.entity_type, normalise_name(synonym.name))].add(synonym.concept_id)
    derived: list[Synonym] = []
    for schema, schema_records in records:
        if schema_records:
            derived += kb_synonyms(schema_records, schema)
    derived += mention_synonyms(mentions)
    aliases: dict[tuple[str, str], str] = {}
    for synonym in derived:
        found = owners.get((synonym.entity_type, normalise_name(synonym.name)), set())
        if len(found) == 1:
            aliases[(synonym.entity_type, synonym.concept_id)] = next(iter(found))
    merged = [
        replace(s, concept_id=aliases[(s.entity_type, s.concept_id)], canonical=False)
        if (s.entity_type, s.concept_id) in aliases else s
        for s in derived
    ]
    return list(dictionary) + merged + ptm_synonyms() + element_synonyms()


def assemble_lexicon(synonyms: list[Synonym], annotated: Iterable[Document], filter_names: bool = True) -> Lexicon:
    """A lexicon of ``synonyms`` without the names ``annotated`` abstracts show to be usually wrong.

    Abstracts with gene annotations are judged on every kind; the others (BC5CDR-like) on
    chemicals and diseases only.
    """
    full, partial = [], []
    for doc in annotated:
        kinds = {PUBTATOR_KINDS.get(m.type) for m in doc.mentions}
        if kinds - {None}:
            (full if "gene" in kinds else partial).append(doc)
    if not filter_names or not (full or partial):
        return Lexicon(synonyms)
    probe = Matcher(Lexicon(synonyms), abbreviations=False, veto=False, shapes=False)
    stats = merge_stats(
        measure_names(probe, full, ("gene", "chemical", "disease", "variant")),
        measure_names(probe, partial, ("chemical", "disease")),
    )
    return Lexicon(synonyms, exclude=unreliable_names(stats))


def build_lexicon(con: duckdb.DuckDBPyConnection, filter_names: bool = True) -> Lexicon:
    """The lexicon for matching and normalisation, built from the store."""
    mentions = store.list_mentions(con)
    records = [(schema, store.list_kb_records(con, schema.name)) for schema in store.list_schemas(con)]
    synonyms = merged_synonyms(store.list_synonyms(con), records, mentions)
    by_doc: dict[str, list[Mention]] = defaultdict(list)
    for mention in mentions:
        by_doc[mention.pmid].append(mention)
    annotated = [replace(d, mentions=tuple(by_doc[d.pmid])) for d in store.get_documents(con, sorted(by_doc))]
    return assemble_lexicon(synonyms, annotated, filter_names)


def snapshot_lexicon(snapshot, filter_names: bool = True) -> Lexicon:
    """The same lexicon, built from a training snapshot (the worker never opens the store)."""
    records = [(schema, [r for r in snapshot.records if r.schema == schema.name]) for schema in snapshot.schemas]
    mentions = [m for d in snapshot.documents.values() for m in d.mentions]
    synonyms = merged_synonyms(snapshot.synonyms, records, mentions)
    annotated = [d for d in snapshot.documents.values() if d.mentions]
    return assemble_lexicon(synonyms, annotated, filter_names)
