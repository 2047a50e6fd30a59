"""Assembling the lexicon the matcher and the normaliser use, from what the store holds.

Sources: dictionaries ingested into the store (DrugBank and HGNC files, the vocabularies of installed
packages: MeSH, a drug vocabulary, gene aliases; drug code names mined from the store's own text;
:data:`DICTIONARY_FORMATS`), the knowledge base's own
entity values (every schema), the corpus's gold annotations (names grouped by concept id),
and the built-in PTM and element vocabularies. Names that the store's annotated abstracts
show to be usually wrong when matched (``curation.entities.name_filter``) are left out, the rule the
matching benchmark measures.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from itertools import islice
from pathlib import Path

import duckdb

from curation.entities import corpus_genes, drug_codes
from curation.entities.gene_vocabularies import GENE_PACKAGES, GENE_VOCABULARIES
from curation.entities.gene_vocabularies import package_version as distribution_version
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
from curation.entities.vocabularies import VOCABULARIES, package_version, read_vocabulary
from curation.errors import InputError
from curation.files import write_atomic
from curation.records import Document, KBRecord, Mention, Synonym
from curation.schemas import RelationSchema
from curation.store.base import list_schemas, record_ingest, transaction
from curation.store.corpus import add_synonyms, get_documents, list_mentions, list_synonyms
from curation.store.kb import list_kb_records

# dictionaries read from a file the user gives (corpus-genes: a GNormPlus / NLM-Gene PubTator file's gene names)
FILE_FORMATS = ("drugbank", "hgnc", corpus_genes.KIND)
MINED_FORMATS = (drug_codes.KIND,)  # dictionaries mined from the store's own text (no file, no package)
# Every kind ``ingest-dict`` takes: files, the vocabularies of installed packages (no file needed), mined ones.
DICTIONARY_FORMATS = (*FILE_FORMATS, *VOCABULARIES, *GENE_VOCABULARIES, *MINED_FORMATS)
INGEST_CHUNK = 50_000  # synonyms written per statement: a large vocabulary is never held whole
# Bump when what :func:`assemble_lexicon` excludes, or how, changes: older files in the cache then miss.
EXCLUDED_FORMAT = 1
EXCLUDED_KEEP = 4  # cached exclusion files kept (a few store states back)


def read_dictionary(kind: str, path=None, mentions: Iterable[Mention] = ()) -> Iterable[Synonym]:
    """Synonyms of a dictionary: a file (drugbank vocabulary CSV, HGNC complete set TSV, an annotated gene corpus
    in PubTator) or an installed
    vocabulary (``path`` None: the package's own data). ``mentions``: gold mentions whose ids' kinds
    the MeSH reader trusts and whose ids mouse genes take.

    Raises:
        InputError: an unknown kind, a file kind without a file, or a vocabulary whose package is missing.
    """
    if kind in FILE_FORMATS and path is None:
        raise InputError(kind, None, None, f"'{kind}' is read from a file: give its path")
    if kind in MINED_FORMATS:
        raise InputError(str(path or kind), None, None, f"'{kind}' is mined from the store's text: give no file")
    if kind == "drugbank":
        return drugbank_synonyms(path)
    if kind == "hgnc":
        return hgnc_synonyms(path)
    if kind == corpus_genes.KIND:
        return corpus_genes.corpus_gene_synonyms(path)
    if kind in VOCABULARIES:
        return read_vocabulary(kind, path, mentions)
    if kind in GENE_VOCABULARIES:
        return GENE_VOCABULARIES[kind](path, mentions=mentions)
    raise InputError(str(path or kind), None, None,
                     f"unknown dictionary format '{kind}'; use one of {', '.join(DICTIONARY_FORMATS)}")


def vocabulary_kinds() -> tuple[str, ...]:
    """The kinds read from installed packages rather than a file, in loading order (drugs before MeSH,
    whose chemicals the drug vocabulary joins to DrugBank; the mined code names last: they pair a code with a
    drug name the others give)."""
    return ("drug-ner", "mesh", *GENE_VOCABULARIES, *MINED_FORMATS)


def dictionary_label(kind: str, path=None) -> str:
    """What the ingest log records as a dictionary's path: the file, and the package with its version."""
    if kind in VOCABULARIES:
        return f"{VOCABULARIES[kind].package}=={package_version(kind)}" + (f" {path}" if path is not None else "")
    if kind in GENE_VOCABULARIES:
        package = GENE_PACKAGES[kind]
        return f"{path if path is not None else 'installed package'} ({package} {distribution_version(package)})"
    if kind in MINED_FORMATS:
        if path is not None:
            raise InputError(str(path), None, None, f"'{kind}' is mined from the store's text: give no file")
        return "mined from the store's abstracts and KB text"
    return str(path)


def ingest_dictionary(con: duckdb.DuckDBPyConnection, kind: str, path=None) -> tuple[int, int]:
    """Add a dictionary's synonyms to the store (one transaction, written in chunks). Returns (read, new).

    Idempotent: a second ingest adds nothing. The ingest log records the file, or the package and its version.
    """
    label = dictionary_label(kind, path)
    if kind in MINED_FORMATS:
        synonyms: Iterable[Synonym] = drug_codes.mined_code_synonyms(con)
    else:
        gold = list_mentions(con) if kind == "mesh" or kind in GENE_VOCABULARIES else ()
        synonyms = read_dictionary(kind, path, gold)
    read = added = 0
    with transaction(con):
        for chunk in _chunks(iter(synonyms), INGEST_CHUNK):
            read += len(chunk)
            added += add_synonyms(con, chunk)
        record_ingest(con, f"dict:{kind}", label, added, read - added, 0)
    return read, added


def _chunks(items: Iterator[Synonym], size: int) -> Iterator[list[Synonym]]:
    while chunk := list(islice(items, size)):
        yield chunk


def merged_synonyms(
    dictionary: Sequence[Synonym], records: Iterable[tuple[RelationSchema, Sequence[KBRecord]]],
    mentions: Iterable[Mention],
) -> list[Synonym]:
    """Every synonym source, unfiltered.

    KB values and annotation names that are exactly a name of one dictionary concept are
    filed under that concept, so "Vemurafenib" from CIViC and DrugBank's DB08881 are one. A name
    several dictionary genes share joins the human one when exactly one of them is human (CIViC's
    "ERBB2" is human ERBB2, not mouse Erbb2). A concept the dictionaries hold under its own id (a gold
    NCBI Gene id) stays itself.
    """
    owners: dict[tuple[str, str], set[str]] = defaultdict(set)
    human: set[tuple[str, str]] = set()
    for synonym in dictionary:
        owners[(synonym.entity_type, normalise_name(synonym.name))].add(synonym.concept_id)
        if synonym.species == "human":
            human.add((synonym.entity_type, synonym.concept_id))
    known = {(s.entity_type, s.concept_id) for s in dictionary}
    derived: list[Synonym] = []
    for schema, schema_records in records:
        if schema_records:
            derived += kb_synonyms(schema_records, schema)
    derived += mention_synonyms(mentions)
    aliases: dict[tuple[str, str], str] = {}
    for synonym in derived:
        if (synonym.entity_type, synonym.concept_id) in known:
            continue
        found = owners.get((synonym.entity_type, normalise_name(synonym.name)), set())
        if len(found) > 1:
            found = {c for c in found if (synonym.entity_type, c) in human}
        if len(found) == 1:
            aliases[(synonym.entity_type, synonym.concept_id)] = next(iter(found))
    merged = [
        replace(s, concept_id=aliases[(s.entity_type, s.concept_id)], canonical=False)
        if (s.entity_type, s.concept_id) in aliases else s
        for s in derived
    ]
    return list(dictionary) + merged + ptm_synonyms() + element_synonyms()


def excluded_names(synonyms: list[Synonym], annotated: Iterable[Document]) -> dict[str, frozenset[str]]:
    """Per kind, the names of ``synonyms`` that ``annotated`` abstracts show to be usually wrong in text.

    Abstracts with gene annotations are judged on every kind; the others (BC5CDR-like) on
    chemicals and diseases only. Runs a matcher over every annotated abstract: ~12 s on the real data.
    """
    full, partial = [], []
    for doc in annotated:
        kinds = {PUBTATOR_KINDS.get(m.type) for m in doc.mentions}
        if kinds - {None}:
            (full if "gene" in kinds else partial).append(doc)
    if not (full or partial):
        return {}
    probe = Matcher(Lexicon(synonyms), abbreviations=False, veto=False, shapes=False)
    stats = merge_stats(
        measure_names(probe, full, ("gene", "chemical", "disease", "variant")),
        measure_names(probe, partial, ("chemical", "disease")),
    )
    return unreliable_names(stats)


def assemble_lexicon(synonyms: list[Synonym], annotated: Iterable[Document], filter_names: bool = True,
                     cache_dir: Path | None = None) -> Lexicon:
    """A lexicon of ``synonyms`` without the names ``annotated`` abstracts show to be usually wrong.

    Args:
        cache_dir: where the excluded names are kept between processes, as JSON named by a digest of
            ``synonyms`` and ``annotated`` (what they are computed from): an app restarted on the same
            store reads them instead of measuring again. A missing or unreadable file is measured anew.
    """
    if not filter_names:
        return Lexicon(synonyms)
    return Lexicon(synonyms, exclude=measured_exclusions(synonyms, annotated, cache_dir))


def measured_exclusions(synonyms: list[Synonym], annotated: Iterable[Document],
                        cache_dir: Path | None = None) -> dict[str, frozenset[str]]:
    """:func:`excluded_names`, read from ``cache_dir`` when measured before on the same inputs (see
    :func:`assemble_lexicon`)."""
    annotated = list(annotated)
    if cache_dir is None:
        return excluded_names(synonyms, annotated)
    path = Path(cache_dir) / f"excluded-{_inputs_digest(synonyms, annotated)}.json"
    exclude = _read_excluded(path)
    if exclude is None:
        exclude = excluded_names(synonyms, annotated)
        _write_excluded(path, exclude)
    return exclude


def _inputs_digest(synonyms: Sequence[Synonym], annotated: Sequence[Document]) -> str:
    # The records are frozen dataclasses of strings, numbers and tuples: their repr is a stable, exact text.
    hasher = hashlib.sha256(f"format {EXCLUDED_FORMAT}\n".encode())
    for source in sorted(Path(__file__).parent.glob("*.py")):  # the matching code too: a change there is a miss
        hasher.update(source.read_bytes())
    for row in (*synonyms, *annotated):
        hasher.update(repr(row).encode())
        hasher.update(b"\n")
    return hasher.hexdigest()[:32]


def _read_excluded(path: Path) -> dict[str, frozenset[str]] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != EXCLUDED_FORMAT:
            return None
        return {str(kind): frozenset(str(n) for n in names) for kind, names in data["excluded"].items()}
    except (OSError, ValueError, KeyError, AttributeError, TypeError):
        return None  # a miss: measured again and written anew


def _write_excluded(path: Path, exclude: dict[str, frozenset[str]]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps({"format": EXCLUDED_FORMAT,
                                       "excluded": {k: sorted(v) for k, v in sorted(exclude.items())}}))
        # Keep the newest few: each ingest makes a new digest.
        for old in sorted(path.parent.glob("excluded-*.json"), key=lambda p: p.stat().st_mtime)[:-EXCLUDED_KEEP]:
            old.unlink(missing_ok=True)
    except OSError:
        pass  # a read-only or full cache folder only costs the next start the measurement


def build_lexicon(con: duckdb.DuckDBPyConnection, filter_names: bool = True, cache_dir: Path | None = None) -> Lexicon:
    """The lexicon for matching and normalisation, built from the store.

    ``cache_dir``: where the measured name exclusions are kept between processes (see :func:`assemble_lexicon`).
    """
    return assemble_lexicon(*lexicon_sources(con), filter_names, cache_dir)


def lexicon_sources(con: duckdb.DuckDBPyConnection) -> tuple[list[Synonym], list[Document]]:
    """What the store's lexicon is built from: every synonym (:func:`merged_synonyms`) and the abstracts with
    gold mentions, which measure the names (:func:`excluded_names`)."""
    mentions = list_mentions(con)
    records = [(schema, list_kb_records(con, schema.name)) for schema in list_schemas(con)]
    synonyms = merged_synonyms(list_synonyms(con), records, mentions)
    by_doc: dict[str, list[Mention]] = defaultdict(list)
    for mention in mentions:
        by_doc[mention.pmid].append(mention)
    annotated = [replace(d, mentions=tuple(by_doc[d.pmid])) for d in get_documents(con, sorted(by_doc))]
    return synonyms, annotated


def snapshot_lexicon(snapshot, filter_names: bool = True) -> Lexicon:
    """The same lexicon, built from a training snapshot (the worker never opens the store)."""
    records = [(schema, [r for r in snapshot.records if r.schema == schema.name]) for schema in snapshot.schemas]
    mentions = [m for d in snapshot.documents.values() for m in d.mentions]
    synonyms = merged_synonyms(snapshot.synonyms, records, mentions)
    annotated = [d for d in snapshot.documents.values() if d.mentions]
    return assemble_lexicon(synonyms, annotated, filter_names)
