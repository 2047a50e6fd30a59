"""Dictionaries of concept names: :class:`~curation.records.Synonym` records and a :class:`Lexicon`.

Builders turn each source into ``Synonym`` records (DrugBank, HGNC, KB records, gold corpus
mentions, the built-in PTM types); a :class:`Lexicon` indexes them by kind, concept and
normalised name, so that "Vemurafenib", "PLX4032" and "vemurafenib" all lead to the same
set of names. Concept ids are those of the source (``DB08881``, a gene symbol, a MeSH or
NCBI Gene id, a variant key); sources are joined through the names they share, one hop.

Names that would only add noise when matched in text (one letter, digits only, common
English words) are dropped by :func:`junk_reason`; what counts as junk was decided by
measuring ``bench/matching.py`` on BioRED Dev (see the comments next to the lists).
"""

from __future__ import annotations

import csv
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path

from curation.errors import InputError
from curation.ptm import PTM_TYPES
from curation.records import KBRecord, Mention, Synonym
from curation.schemas import RelationSchema
from curation.variants import normalise_variant, variant_keys

PUBTATOR_KINDS: dict[str, str] = {
    "GeneOrGeneProduct": "gene",
    "Gene": "gene",
    "ChemicalEntity": "chemical",
    "Chemical": "chemical",
    "DiseaseOrPhenotypicFeature": "disease",
    "Disease": "disease",
    "SequenceVariant": "variant",
}

# English words that are also names of something in the sources (DrugBank brand names and
# synonyms, corpus mentions such as "lead" or "ITD"). A name is dropped when its lower-case
# form is in this set, in spaCy's stop words, or in the kind's own set below.
COMMON_WORDS = frozenset(
    """
    able about above act action active add age agent aid aim air all also alpha amber and any
    area arm art as at back bad balance base basic beta big black blue body bond bone box brain
    bright care case cell center central chance change chronic clear close cold color common
    control cool core cross cure cut dark day dead deep delta digest direct dose double down
    drive dry early ease easy edge effect end energy entire even exact express eye face fact
    fast fate feel field fine fire first fit flat flow focus food form free fresh front full
    gain gamma general gentle gift gold good grade great green ground growth guard half hand
    hard head heal health heart heavy help high hit hold home hope hot human ideal image
    impact index joint just key kind lead left level life light line link live long loss low
    main major male mark mass match max may mean medium member mid mild mind minor mode model
    more most motor move must name natural near neck net new next night normal note novel
    now number open order origin out over pace pack pain part pass peak phase pilot place
    plain plan plus point positive post power prime pro profile pure rapid rate ready real
    record red relief rest result rich right rise risk rock root round safe salt same scale
    score sea second secure sense set shape sharp shield short side sign simple single site
    size skin slow smart soft sole solo solution sound source space spark special speed spirit
    spot spring square stable stage standard star start state step stop strong sun super
    support sure sweet switch system target team test therapy thin time tip top total touch
    track trial true trust type ultra unit up urgent use value via vital wave way well white
    whole wide will win wise work yellow young zero
    """.split()
)
_KIND_WORDS: dict[str, frozenset[str]] = {
    # Chemical names that are common words in abstracts about everything else.
    "chemical": frozenset({"water", "air", "oxygen", "hydrogen", "nitrogen", "carbon", "protein", "dextran"}),
    "gene": frozenset({"cell", "cells", "type", "was", "can", "has", "not", "all", "via"}),
}
MIN_LENGTH = 2


def normalise_name(name: str) -> str:
    """The lookup form of a name: NFKC, case-folded, one kind of dash and of space.

    Example:
        >>> normalise_name("  Interleukin–6 ")
        'interleukin-6'
    """
    text = unicodedata.normalize("NFKC", name)
    text = re.sub(r"[\u2010-\u2015\u2212\u00ad]", "-", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text.casefold()


def junk_reason(name: str, kind: str) -> str | None:
    """Why a name should not be in a dictionary of ``kind`` (None when it is fine)."""
    clean = name.strip()
    if len(clean) < MIN_LENGTH:
        return "too short"
    if not re.search(r"[A-Za-z]", clean):
        return "no letters"
    low = normalise_name(clean)
    if low in COMMON_WORDS or low in _KIND_WORDS.get(kind, ()):
        return "common English word"
    if low in _stop_words():
        return "stop word"
    if kind != "variant" and len(clean) == 2 and clean.islower():
        return "two lower-case letters"
    return None


_STOP_WORDS: frozenset[str] | None = None


def _stop_words() -> frozenset[str]:
    global _STOP_WORDS
    if _STOP_WORDS is None:  # imported lazily: nothing happens at import time
        from spacy.lang.en.stop_words import STOP_WORDS

        _STOP_WORDS = frozenset(STOP_WORDS)
    return _STOP_WORDS


class Lexicon:
    """Names of concepts by kind, with case- and dash-insensitive lookup.

    Args:
        synonyms: the records to index; junk names (see :func:`junk_reason`) are dropped,
            duplicates merged. A record marked ``canonical`` gives its concept's display name;
            otherwise the first name seen does.

    Example:
        >>> lex = Lexicon([Synonym("DB08881", "chemical", "Vemurafenib", "drugbank", True),
        ...                Synonym("DB08881", "chemical", "PLX4032", "drugbank")])
        >>> lex.expand("plx4032", "chemical")
        ('plx4032', 'Vemurafenib', 'PLX4032')
    """

    def __init__(self, synonyms: Iterable[Synonym] = ()) -> None:
        self._names: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        self._canonical: dict[tuple[str, str], str] = {}
        self._fixed: set[tuple[str, str]] = set()  # concepts whose display name a source marked
        self._index: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        self._weight: Counter[tuple[str, str]] = Counter()
        self.dropped: Counter[str] = Counter()
        for synonym in synonyms:
            self._add(synonym)

    def _add(self, synonym: Synonym) -> None:
        name = " ".join(synonym.name.split())
        kind, concept = synonym.entity_type, synonym.concept_id
        reason = junk_reason(name, kind)
        if reason or not concept:
            self.dropped[reason or "no concept id"] += 1
            return
        key = normalise_name(name)
        self._weight[(key, kind)] += 1
        concepts = self._index[key][kind]
        names = self._names[kind][concept]
        if concept not in concepts:
            concepts.append(concept)
        if name not in names:
            names.append(name)
        if (kind, concept) not in self._canonical or (synonym.canonical and (kind, concept) not in self._fixed):
            self._canonical[(kind, concept)] = name
            if synonym.canonical:
                self._fixed.add((kind, concept))

    # --- reading ----------------------------------------------------------------------

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(sorted(self._names))

    def __len__(self) -> int:
        """Number of (kind, concept, name) entries."""
        return sum(len(names) for per_kind in self._names.values() for names in per_kind.values())

    def concepts(self, kind: str) -> tuple[str, ...]:
        """All concept ids of a kind."""
        return tuple(self._names.get(kind, {}))

    def names(self, kind: str, concept: str) -> tuple[str, ...]:
        """The names of one concept, as written in the sources."""
        return tuple(self._names.get(kind, {}).get(concept, ()))

    def canonical(self, kind: str, concept: str) -> str:
        """The display name of a concept ("" when unknown)."""
        return self._canonical.get((kind, concept), "")

    def lookup(self, name: str, kind: str | None = None) -> list[tuple[str, str]]:
        """(kind, concept) pairs a name denotes, most used first; exact after normalisation."""
        per_kind = self._index.get(normalise_name(name), {})
        kinds = [kind] if kind is not None else sorted(per_kind, key=lambda k: -self.weight(name, k))
        return [(k, c) for k in kinds for c in per_kind.get(k, ())]

    def weight(self, name: str, kind: str) -> int:
        """How many source records gave this name to this kind (a tie-breaker between kinds)."""
        return self._weight.get((normalise_name(name), kind), 0)

    def expand(self, name: str, kind: str) -> tuple[str, ...]:
        """The name itself and every name of every concept it denotes in ``kind`` (one hop)."""
        out = [name.strip()]
        for _, concept in self.lookup(name, kind):
            out.extend(self.names(kind, concept))
        return tuple(dict.fromkeys(out))

    def entries(self, kind: str | None = None) -> Iterator[Synonym]:
        """Every kept entry as a Synonym (canonical flag on the display name)."""
        for k in [kind] if kind else self.kinds:
            for concept, names in self._names.get(k, {}).items():
                display = self._canonical.get((k, concept))
                for name in names:
                    yield Synonym(concept, k, name, "", name == display)

    def sizes(self) -> dict[str, dict[str, int]]:
        """Per kind: number of concepts and of names."""
        return {
            k: {"concepts": len(per_kind), "names": sum(len(v) for v in per_kind.values())}
            for k, per_kind in sorted(self._names.items())
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
                            str(path), line, "DrugBank ID", "no DrugBank header in the first two lines; "
                            "expected 'DrugBank ID;Accession Numbers;Common name;...'"
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
    ("Dabrafenib,Trametinib", "BCR::ABL1", "EGFR T790M AND EGFR C797S"); a variant's concept
    id is its key from :func:`curation.variants.normalise_variant` when it has one.
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
                    if bare and variant_keys(bare["rest"]):  # "EGFR T790M": "T790M" names it too
                        names.append(bare["rest"])
                for each in names:
                    if (kind, concept, each) not in seen:
                        seen.add((kind, concept, each))
                        out.append(Synonym(concept, kind, each, record.source or "kb", each == name))
    return out


def mention_synonyms(mentions: Iterable[Mention]) -> list[Synonym]:
    """Names from gold corpus mentions, grouped by concept id.

    PubTator types map to kinds by :data:`PUBTATOR_KINDS` (other types are skipped);
    mentions without an id ("-") or with several ids are skipped, since their text names
    no single concept. Variants use their normalised key as concept id when they have one.
    One Synonym per mention is returned (so :meth:`Lexicon.weight` counts uses); the most
    frequent text of a concept is marked canonical.
    """
    grouped: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    sources: dict[tuple[str, str], str] = {}
    for mention in mentions:
        kind = PUBTATOR_KINDS.get(mention.type)
        concept = mention.concept_id.strip()
        if kind is None or not concept or concept == "-" or re.search(r"[,|;]", concept):
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


def ptm_synonyms() -> list[Synonym]:
    """The built-in PTM types (curation.ptm.PTM_TYPES) and their common forms."""
    out = []
    for ptm in PTM_TYPES:
        out.append(Synonym(ptm, "ptm", ptm, "builtin", True))
        out.extend(Synonym(ptm, "ptm", form, "builtin") for form in _PTM_FORMS.get(ptm, ()))
    return out
