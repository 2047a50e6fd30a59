"""Assembling the lexicon the matcher and the normaliser use, from what the store holds.

Sources: dictionary files ingested into the store (DrugBank, HGNC), the knowledge base's own
entity values (every schema), the corpus's gold annotations (names grouped by concept id),
and the built-in PTM and element vocabularies. Names that the store's annotated abstracts
show to be usually wrong when matched (``curation.name_filter``) are left out, the rule the
matching benchmark measures.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import duckdb

from curation import store
from curation.errors import InputError
from curation.lexicon import Lexicon, normalise_name
from curation.matching import Matcher
from curation.name_filter import measure_names, merge_stats, unreliable_names
from curation.records import Document, Mention, Synonym
from curation.synonyms import (
    PUBTATOR_KINDS,
    drugbank_synonyms,
    element_synonyms,
    hgnc_synonyms,
    kb_synonyms,
    mention_synonyms,
    ptm_synonyms,
)

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


def store_synonyms(con: duckdb.DuckDBPyConnection) -> list[Synonym]:
    """Every synonym source in the store, unfiltered.

    KB values and annotation names that are exactly a name of one dictionary concept are
    filed under that concept, so "Vemurafenib" from CIViC and DrugBank's DB08881 are one.
    """
    dictionary = list(store.list_synonyms(con))
    owners: dict[tuple[str, str], set[str]] = defaultdict(set)
    for synonym in dictionary:
        owners[(synonym.entity_type, normalise_name(synonym.name))].add(synonym.concept_id)
    derived: list[Synonym] = []
    for schema in store.list_schemas(con):
        records = store.list_kb_records(con, schema.name)
        if records:
            derived += kb_synonyms(records, schema)
    derived += mention_synonyms(store.list_mentions(con))
    aliases: dict[tuple[str, str], str] = {}
    for synonym in derived:
        found = owners.get((synonym.entity_type, normalise_name(synonym.name)), set())
        if len(found) == 1:
            aliases[(synonym.entity_type, synonym.concept_id)] = next(iter(found))
    merged = [
        replace(s, concept_id=aliases.get((s.entity_type, s.concept_id), s.concept_id), canonical=False)
        if (s.entity_type, s.concept_id) in aliases else s
        for s in derived
    ]
    return dictionary + merged + ptm_synonyms() + element_synonyms()


def _annotated(con: duckdb.DuckDBPyConnection) -> tuple[list[Document], list[Document]]:
    """Annotated abstracts: those with gene annotations (all kinds judged) and the rest (chemical, disease)."""
    by_doc: dict[str, list[Mention]] = defaultdict(list)
    for mention in store.list_mentions(con):
        by_doc[mention.pmid].append(mention)
    full, partial = [], []
    for doc in store.get_documents(con, sorted(by_doc)):
        doc = Document(doc.pmid, doc.title, doc.abstract, doc.source, tuple(by_doc[doc.pmid]))
        kinds = {PUBTATOR_KINDS.get(m.type) for m in doc.mentions}
        (full if "gene" in kinds else partial).append(doc)
    return full, partial


def build_lexicon(con: duckdb.DuckDBPyConnection, filter_names: bool = True) -> Lexicon:
    """The lexicon for matching and normalisation, built from the store."""
    synonyms = store_synonyms(con)
    if not filter_names:
        return Lexicon(synonyms)
    full, partial = _annotated(con)
    if not full and not partial:
        return Lexicon(synonyms)
    probe = Matcher(Lexicon(synonyms), abbreviations=False, veto=False, shapes=False)
    stats = merge_stats(
        measure_names(probe, full, ("gene", "chemical", "disease", "variant")),
        measure_names(probe, partial, ("chemical", "disease")),
    )
    return Lexicon(synonyms, exclude=unreliable_names(stats))
