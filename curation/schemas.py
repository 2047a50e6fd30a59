"""Relation schemas: which entity types a relation has, which is the answer, how queries read.

PO and PTM are built in (EDEL §3). Every store also starts with :data:`STARTER`, the relations the sample's
corpora annotate (a disease's treatments, a chemical's induced diseases, a gene's diseases), which curators may
edit or remove like their own; other schemas come from TOML files (``add-schemas``, ``CURATION_SCHEMAS``) or the
Knowledge base page. Nothing downstream hard-codes an entity type: it asks the schema.

A TOML file holds one or more ``[[schema]]`` tables::

    [[schema]]
    name = "GDC"
    entity_types = ["Gene", "Disease", "Chemical"]
    answer = "Chemical"
    templates = ["Treatment for gene {Gene} and disease {Disease}?", "Treatment for gene {Gene}?"]
    kinds = { Gene = "gene", Disease = "disease", Chemical = "chemical" }
    columns = { Gene = "gene", Disease = "disease", Chemical = "drug", pmid = "pmid" }

``templates`` are tried in order; the first whose placeholders are all filled is used, so a
partial relation with only a gene still gets a query. ``kinds`` names the dictionary / matcher
each entity type uses (gene, variant, chemical, disease, ptm, residue; default "generic").
``columns`` maps entity types (and ``pmid``) to TSV columns for ``ingest-kb tsv``.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from curation.errors import SchemaError

KINDS = ("gene", "variant", "chemical", "disease", "ptm", "residue", "generic")
_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")

SPECIES = ("human", "mouse", "")  # the species the gene vocabularies carry; "" is every one


@dataclass(frozen=True)
class RelationSchema:
    """An n-ary relation schema.

    Attributes:
        name: short name, unique in a store ("PO").
        entity_types: the entity types in display order, answer included.
        answer: the entity type a curator is looking for.
        templates: query templates, most specific first, with ``{Entity type}`` placeholders.
        kinds: (entity type, matcher kind) pairs.
        columns: (entity type or "pmid", TSV column) pairs for the generic TSV loader.
        description: one line for the UI.
        species: the organism a typed gene name means when several species share it ("human", the default;
            "mouse" for a mouse KB; "" links every species' gene).
    """

    name: str
    entity_types: tuple[str, ...]
    answer: str
    templates: tuple[str, ...]
    kinds: tuple[tuple[str, str], ...] = ()
    columns: tuple[tuple[str, str], ...] = ()
    description: str = ""
    species: str = "human"
    builtin: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        where = f"schema '{self.name}'"
        if not self.name or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", self.name):
            raise SchemaError(f"{where}: name must be letters, digits, '_' or '-', starting with a letter")
        if len(self.entity_types) < 2:
            raise SchemaError(f"{where}: needs at least two entity types, got {list(self.entity_types)}")
        if len(set(self.entity_types)) != len(self.entity_types):
            raise SchemaError(f"{where}: entity types repeat: {list(self.entity_types)}")
        if self.answer not in self.entity_types:
            raise SchemaError(f"{where}: answer '{self.answer}' is not one of {list(self.entity_types)}")
        if not self.templates:
            raise SchemaError(f"{where}: needs at least one query template")
        if self.species not in SPECIES:
            raise SchemaError(f"{where}: species '{self.species}' is not one of {', '.join(map(repr, SPECIES))}")
        for template in self.templates:
            for slot in _PLACEHOLDER.findall(template):
                if slot not in self.query_types:
                    raise SchemaError(
                        f"{where}: template '{template}' uses {{{slot}}}, which is not a query entity "
                        f"type ({list(self.query_types)})"
                    )
        for entity_type, kind in self.kinds:
            if entity_type not in self.entity_types:
                raise SchemaError(f"{where}: kinds names unknown entity type '{entity_type}'")
            if kind not in KINDS:
                raise SchemaError(f"{where}: kind '{kind}' of '{entity_type}' is not one of {list(KINDS)}")

    @property
    def query_types(self) -> tuple[str, ...]:
        """The entity types a curator fills in (all but the answer)."""
        return tuple(t for t in self.entity_types if t != self.answer)

    def kind(self, entity_type: str) -> str:
        """The matcher kind of an entity type ("generic" when not configured)."""
        for name, kind in self.kinds:
            if name == entity_type:
                return kind
        return "generic"

    def column(self, key: str) -> str:
        for name, column in self.columns:
            if name == key:
                return column
        return key.lower()

    def render_query(self, values: Mapping[str, str]) -> str:
        """The query text for a partial relation.

        Uses the first template whose placeholders all have a non-empty value.

        Raises:
            SchemaError: no query entity is filled in, or no template fits what is.
        """
        filled = {k: v.strip() for k, v in values.items() if k in self.query_types and v and v.strip()}
        if not filled:
            raise SchemaError(
                f"schema '{self.name}': fill in at least one of {list(self.query_types)} to build a query"
            )
        for template in self.templates:
            slots = _PLACEHOLDER.findall(template)
            if slots and all(s in filled for s in slots):
                return _PLACEHOLDER.sub(lambda m: filled[m.group(1)], template)
        raise SchemaError(
            f"schema '{self.name}': no query template uses only {sorted(filled)}; templates: {list(self.templates)}"
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "entity_types": list(self.entity_types),
            "answer": self.answer,
            "templates": list(self.templates),
            "kinds": dict(self.kinds),
            "columns": dict(self.columns),
            "description": self.description,
            "species": self.species,
        }


PO = RelationSchema(
    name="PO",
    entity_types=("Gene", "Variant", "Treatment"),
    answer="Treatment",
    templates=(
        "Treatment for gene {Gene} and variant {Variant}?",
        "Treatment for gene {Gene}?",
        "Treatment for variant {Variant}?",
    ),
    kinds=(("Gene", "gene"), ("Variant", "variant"), ("Treatment", "chemical")),
    columns=(("Gene", "gene"), ("Variant", "variant"), ("Treatment", "treatment"), ("pmid", "pmid")),
    description="Precision oncology: treatments for a gene variant (CIViC).",
    builtin=True,
)

PTM = RelationSchema(
    name="PTM",
    entity_types=("Protein", "PTM type", "Residue", "Catalyst"),
    answer="Catalyst",
    templates=(
        "Catalysts for the {PTM type} of {Protein} at {Residue}?",
        "Catalysts for the {PTM type} of {Protein}?",
        "Catalysts for {Protein} at {Residue}?",
        "Catalysts for {Protein}?",
    ),
    kinds=(("Protein", "gene"), ("PTM type", "ptm"), ("Residue", "residue"), ("Catalyst", "gene")),
    columns=(
        ("Protein", "protein"),
        ("PTM type", "ptm_type"),
        ("Residue", "residue"),
        ("Catalyst", "catalyst"),
        ("pmid", "pmid"),
    ),
    description="Post-translational modifications: catalysts of a PTM at a residue (UniProtKB).",
    builtin=True,
)

BUILTIN: dict[str, RelationSchema] = {PO.name: PO, PTM.name: PTM}

# The relations BioRED and BC5CDR annotate, ready in every new store (saved as ordinary, editable schemas).
STARTER: tuple[RelationSchema, ...] = (
    RelationSchema(
        name="Disease-Treatment", entity_types=("Disease", "Treatment"), answer="Treatment",
        templates=("Treatment for disease {Disease}?",),
        kinds=(("Disease", "disease"), ("Treatment", "chemical")),
        columns=(("Disease", "disease"), ("Treatment", "treatment"), ("pmid", "pmid")),
        description="Drugs and chemicals that treat a disease (BioRED's negative correlations, CTD).",
    ),
    RelationSchema(
        name="Chemical-Disease", entity_types=("Chemical", "Disease"), answer="Disease",
        templates=("Diseases induced by chemical {Chemical}?",),
        kinds=(("Chemical", "chemical"), ("Disease", "disease")),
        columns=(("Chemical", "chemical"), ("Disease", "disease"), ("pmid", "pmid")),
        description="Diseases a drug or chemical induces (BC5CDR's chemical-induced disease relations).",
    ),
    RelationSchema(
        name="Gene-Disease", entity_types=("Gene", "Disease"), answer="Disease",
        templates=("Diseases associated with gene {Gene}?",),
        kinds=(("Gene", "gene"), ("Disease", "disease")),
        columns=(("Gene", "gene"), ("Disease", "disease"), ("pmid", "pmid")),
        description="Diseases a gene or its variants are associated with (BioRED's gene-disease relations).",
    ),
)


def schema_from_dict(data: Mapping[str, object], where: str = "schema") -> RelationSchema:
    """Build a schema from a TOML table / JSON object, with messages naming the field."""

    def need(key: str, kind: type) -> object:
        if key not in data:
            raise SchemaError(f"{where}: missing required field '{key}'")
        value = data[key]
        if not isinstance(value, kind):
            raise SchemaError(f"{where}: field '{key}' must be a {kind.__name__}, got {type(value).__name__}")
        return value

    name = str(need("name", str))
    entity_types = need("entity_types", list)
    templates = data.get("templates", data.get("template"))
    if isinstance(templates, str):
        templates = [templates]
    if not isinstance(templates, list) or not all(isinstance(t, str) for t in templates):
        raise SchemaError(f"{where}: field 'templates' must be a list of strings")
    kinds = data.get("kinds", {})
    columns = data.get("columns", {})
    if not isinstance(kinds, Mapping) or not isinstance(columns, Mapping):
        raise SchemaError(f"{where}: fields 'kinds' and 'columns' must be tables")
    answer = str(need("answer", str))
    try:
        return RelationSchema(
            name=name,
            entity_types=tuple(str(t) for t in entity_types),  # type: ignore[union-attr]
            answer=answer,
            templates=tuple(templates),
            kinds=tuple((str(k), str(v)) for k, v in kinds.items()),
            columns=tuple((str(k), str(v)) for k, v in columns.items()),
            description=str(data.get("description", "")),
            species=str(data.get("species", "human")),
        )
    except SchemaError as exc:
        raise SchemaError(f"{where}: {exc}") from None


def read_toml(path: str | Path, what: str) -> dict:
    """A TOML file's tables, or SchemaError naming the file (``what`` says which kind of file)."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise SchemaError(f"{path}: {what} file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise SchemaError(f"{path}: not valid TOML: {exc}") from None


def load_schemas(path: str | Path) -> list[RelationSchema]:
    """Read user-defined schemas from a TOML file.

    Raises:
        SchemaError: the file is not valid TOML or a schema is malformed (message names the file).
    """
    path = Path(path)
    tables = read_toml(path, "schema").get("schema")
    if not isinstance(tables, list) or not tables:
        raise SchemaError(f"{path}: expected one or more [[schema]] tables")
    schemas = [schema_from_dict(t, where=f"{path}, schema #{i + 1}") for i, t in enumerate(tables)]
    for schema in schemas:
        if schema.name in BUILTIN:
            raise SchemaError(f"{path}: schema name '{schema.name}' is built in; choose another name")
    return schemas


def resolve_schema(name: str, extra: Iterable[RelationSchema] = ()) -> RelationSchema:
    """Find a schema by name among the built-in ones and ``extra``.

    Raises:
        SchemaError: unknown name; the message lists the known ones.
    """
    known = dict(BUILTIN)
    known.update({s.name: s for s in extra})
    if name in known:
        return known[name]
    for key, schema in known.items():
        if key.lower() == name.lower():
            return schema
    raise SchemaError(
        f"unknown schema '{name}'; known schemas: {', '.join(sorted(known))}. Use one of them, or add yours "
        "on the Knowledge base page or from a TOML file with `python -m curation add-schemas FILE`"
    )
