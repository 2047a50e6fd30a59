"""Dictionaries of concept names as :class:`~curation.records.Synonym` records.

Builders turn each source into ``Synonym`` records: DrugBank, HGNC, KB records (CIViC
therapies, genes, variants), gold corpus mentions, the built-in PTM types and chemical
elements. A :class:`~curation.entities.lexicon.Lexicon` (re-exported here) indexes them. Concept
ids are those of the source (``DB08881``, a gene symbol, a MeSH or NCBI Gene id, a variant
key); sources are joined through the names they share, one hop.

Example:
    >>> lexicon = Lexicon(drugbank_synonyms(path) + kb_synonyms(records, PO) + ptm_synonyms())
"""

from __future__ import annotations

import csv
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path

from curation.entities.lexicon import COMMON_WORDS, Lexicon, is_placeholder_id, junk_reason, normalise_name
from curation.entities.ptm import PTM_TYPES, normalise_ptm, normalise_residue
from curation.entities.variants import normalise_variant, variant_keys
from curation.errors import InputError
from curation.records import KBRecord, Mention, Synonym
from curation.schemas import RelationSchema

__all__ = [
    "COMMON_WORDS", "ELEMENTS", "PUBTATOR_KINDS", "Lexicon", "drugbank_synonyms", "element_synonyms",
    "hgnc_synonyms", "junk_reason", "kb_synonyms", "mention_synonyms", "normalise_name", "ptm_synonyms",
]  # fmt: skip

PUBTATOR_KINDS: dict[str, str] = {
    "GeneOrGeneProduct": "gene",
    "Gene": "gene",
    "ChemicalEntity": "chemical",
    "Chemical": "chemical",
    "DiseaseOrPhenotypicFeature": "disease",
    "Disease": "disease",
    "SequenceVariant": "variant",
}


# --- builders -------------------------------------------------------------------------------

DRUGBANK_COLUMNS = ("DrugBank ID", "Common name", "Synonyms")


def drugbank_synonyms(path: str | Path) -> list[Synonym]:
    """Chemical names from the DrugBank open vocabulary CSV (``;``-separated).

    The file starts with a dummy ``Column1;...`` line, then the real header; synonyms are
    `` | ``-separated. Concept ids are DrugBank ids; the common name is canonical.

    Raises:
        InputError: the file is missing, has no DrugBank header, or a row has no valid id.
    """
    path = Path(path)
    out: list[Synonym] = []
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            rows = csv.reader(handle, delimiter=";")
            header: list[str] | None = None
            for line, row in enumerate(rows, start=1):
                if header is None:
                    if "DrugBank ID" in row:
                        header = row
                        missing = [c for c in DRUGBANK_COLUMNS if c not in header]
                        if missing:
                            raise InputError(str(path), line, missing[0], "column missing from the DrugBank header")
                    elif line > 2:
                        raise InputError(
                            str(path),
                            line,
                            "DrugBank ID",
                            "no DrugBank header in the first two lines; "
                            "expected 'DrugBank ID;Accession Numbers;Common name;...'",
                        )
                    continue
                if not any(cell.strip() for cell in row):
                    continue
                record = dict(zip(header, row, strict=False))
                drug_id = record.get("DrugBank ID", "").strip()
                if not re.fullmatch(r"DB\d{5}", drug_id):
                    raise InputError(str(path), line, "DrugBank ID", f"not a DrugBank id: {drug_id!r}")
                common = record.get("Common name", "").strip()
                if common:
                    out.append(Synonym(drug_id, "chemical", common, "drugbank", True))
                for name in record.get("Synonyms", "").split(" | "):
                    if name.strip() and name.strip() != common:
                        out.append(Synonym(drug_id, "chemical", name.strip(), "drugbank"))
    except FileNotFoundError:
        raise InputError(str(path), None, None, "file not found; point to the DrugBank vocabulary CSV") from None
    except UnicodeDecodeError as exc:
        raise InputError(str(path), None, None, f"not UTF-8 text ({exc.reason})") from None
    if header is None:
        raise InputError(str(path), None, "DrugBank ID", "empty file or no DrugBank header")
    return out


HGNC_COLUMNS = ("hgnc_id", "symbol", "name", "alias_symbol", "prev_symbol")


def hgnc_synonyms(path: str | Path) -> list[Synonym]:
    """Gene names from an HGNC complete-set TSV; the approved symbol is the concept id.

    Reads ``symbol`` (canonical), ``name``, ``alias_symbol`` and ``prev_symbol`` (``|``-
    separated, optionally quoted).

    Raises:
        InputError: the file is missing or lacks the ``hgnc_id`` / ``symbol`` columns.
    """
    path = Path(path)
    out: list[Synonym] = []
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle, delimiter="\t")
            for column in ("hgnc_id", "symbol"):
                if column not in (reader.fieldnames or []):
                    raise InputError(str(path), 1, column, "column missing; is this the HGNC complete set TSV?")
            for line, row in enumerate(reader, start=2):
                symbol = (row.get("symbol") or "").strip()
                if not symbol:
                    raise InputError(str(path), line, "symbol", "empty approved symbol")
                out.append(Synonym(symbol, "gene", symbol, "hgnc", True))
                for column in ("name", "alias_symbol", "prev_symbol"):
                    for name in (row.get(column) or "").strip('"').split("|"):
                        if name.strip():
                            out.append(Synonym(symbol, "gene", name.strip(), "hgnc"))
    except FileNotFoundError:
        raise InputError(str(path), None, None, "file not found; set CURATION_HGNC_FILE to the HGNC TSV") from None
    return out


_SPLIT_VALUES = {
    "chemical": re.compile(r"\s*(?:,|\+| and | AND |;)\s*"),
    "gene": re.compile(r"\s*(?:::|,|;| AND | OR )\s*"),
    "variant": re.compile(r"\s+(?:AND|OR|AND NOT)\s+|[()]\s*(?=[A-Z])"),
}


_GENE_THEN_VARIANT = re.compile(r"^[A-Z][A-Z0-9-]{1,15}\s+(?P<rest>.+)$")


def kb_synonyms(records: Iterable[KBRecord], schema: RelationSchema) -> list[Synonym]:
    """Names of the entities in KB records (CIViC therapies, genes, variants).

    Each slot's kind comes from ``schema.kind(entity_type)``. Combination values are split
    ("Dabrafenib,Trametinib", "BCR::ABL1", "EGFR T790M AND EGFR C797S"). Variants, residues
    and PTM types use their normalised key as concept id when they have one ("V600E",
    "S473", "phosphorylation"); other kinds use the value itself.
    """
    seen: set[tuple[str, str, str]] = set()
    out: list[Synonym] = []
    for record in records:
        if record.schema != schema.name:
            continue
        for entity_type, value in record.entities:
            kind = schema.kind(entity_type)
            for part in _SPLIT_VALUES.get(kind, re.compile(r"$^")).split(value) if value else ():
                name = part.strip(" ()")
                if not name:
                    continue
                names, concept = [name], name
                if kind == "variant":
                    keys = variant_keys(name)
                    concept = keys[0] if keys else name
                    bare = _GENE_THEN_VARIANT.match(name)
                    # "EGFR T790M": "T790M" names it too; but "V600E AMPLIFICATION" and "T17 DELETION" are not
                    # named by "AMPLIFICATION" and "DELETION" (the rest is another key, a category).
                    if bare and keys and variant_keys(bare["rest"]) == keys:
                        names.append(bare["rest"])
                elif kind == "residue":
                    concept = normalise_residue(name) or name
                elif kind == "ptm":
                    concept = normalise_ptm(name) or name
                for each in names:
                    if (kind, concept, each) not in seen:
                        seen.add((kind, concept, each))
                        out.append(Synonym(concept, kind, each, record.source or "kb", each == name))
    return out


def mention_synonyms(mentions: Iterable[Mention]) -> list[Synonym]:
    """Names from gold corpus mentions, grouped by concept id.

    PubTator types map to kinds by :data:`PUBTATOR_KINDS` (other types are skipped);
    mentions without an id (placeholders: "-", "-1", empty) or with several ids are skipped, since their text names
    no single concept. Variants use their normalised key as concept id when they have one.
    One Synonym per mention is returned (so :meth:`Lexicon.weight` counts uses); the most
    frequent text of a concept is marked canonical.
    """
    grouped: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    sources: dict[tuple[str, str], str] = {}
    for mention in mentions:
        kind = PUBTATOR_KINDS.get(mention.type)
        concept = mention.concept_id.strip()
        if kind is None or is_placeholder_id(concept) or re.search(r"[,|;]", concept):
            continue
        if kind == "variant":
            concept = normalise_variant(mention.text) or concept
        grouped[(kind, concept)][mention.text.strip()] += 1
        sources.setdefault((kind, concept), mention.source or "corpus")
    out: list[Synonym] = []
    for (kind, concept), counts in grouped.items():
        top = counts.most_common(1)[0][0]
        for name, count in counts.items():
            out.extend(Synonym(concept, kind, name, sources[(kind, concept)], name == top) for _ in range(count))
    return out


# A few surface forms per type beyond the canonical noun, for lookup and the TF-IDF index.
_PTM_FORMS = {
    "phosphorylation": ("phosphorylated", "phospho", "phosphorylates", "phosphosite"),
    "acetylation": ("acetylated",), "methylation": ("methylated",),
    "ubiquitination": ("ubiquitylation", "ubiquitinated", "ubiquitylated"),
    "sumoylation": ("SUMOylation", "sumoylated"), "glycosylation": ("glycosylated", "O-GlcNAcylation"),
    "dephosphorylation": ("dephosphorylated",),
}  # fmt: skip


# Chemical elements as written in abstracts. Left out: symbols that are words or common
# abbreviations ("As", "In", "At", "Be", "He", "No", "Ag" antigen), one-letter symbols
# and names that are English words ("lead", "tin", "gold").
ELEMENTS = {
    "Li": "lithium", "Na": "sodium", "Mg": "magnesium", "Al": "aluminium", "Si": "silicon",
    "Cl": "chlorine", "Ca": "calcium", "Cr": "chromium", "Mn": "manganese", "Fe": "iron",
    "Co": "cobalt", "Ni": "nickel", "Cu": "copper", "Zn": "zinc", "Se": "selenium",
    "Br": "bromine", "Sr": "strontium", "Mo": "molybdenum", "Cd": "cadmium", "Sn": "",
    "Ba": "barium", "Pt": "platinum", "Au": "", "Hg": "mercury", "Tl": "thallium",
    "Pb": "", "Bi": "bismuth", "Gd": "gadolinium", "Cs": "caesium", "Rb": "rubidium",
    "": "arsenic", "Ti": "titanium", "Va": "vanadium",
}  # fmt: skip


def element_synonyms() -> list[Synonym]:
    """Chemical elements (symbol and name) as chemicals, concept id ``element:<symbol or name>``."""
    out = []
    for symbol, name in ELEMENTS.items():
        concept = f"element:{symbol or name}"
        for each, canonical in ((name, True), (symbol, not name)):
            if each:
                out.append(Synonym(concept, "chemical", each, "builtin", canonical))
    return out


def ptm_synonyms() -> list[Synonym]:
    """The built-in PTM types (curation.entities.ptm.PTM_TYPES) and their common forms."""
    out = []
    for ptm in PTM_TYPES:
        out.append(Synonym(ptm, "ptm", ptm, "builtin", True))
        out.extend(Synonym(ptm, "ptm", form, "builtin") for form in _PTM_FORMS.get(ptm, ()))
    return out
