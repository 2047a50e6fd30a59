"""Gene names learned from annotated corpora: each written name under the NCBI Gene ids its gold gives it.

GNormPlus Train and NLM-Gene Train (``ner_corpora/`` of the shared data, read in place) annotate gene mentions
with NCBI Gene ids of whatever organism the abstract studies, and gene families apart ("FamilyName": "PKC",
"insulin-like peptides"). :func:`corpus_gene_synonyms` turns one such PubTator file into
:class:`~curation.records.Synonym` records, the ``corpus-genes`` dictionary kind:

* one record per gold gene mention with a single numeric id (so the lexicon's use counts say how often a name
  means each gene), source ``corpus:<folder>``, the gene's species read from the abstracts that mention it
  (:mod:`curation.entities.species`): the organism most of its texts about another organism than human study,
  "" when they disagree; never "human" (the human vocabularies say which ids are human, and their species
  replaces a corpus's in the lexicon);
* a name the file uses as a family at least as often as as a gene becomes a family concept ``family:<name>``
  (:func:`family_id`), species "": a curator or a highlight is offered the family, never one of its genes.

The dev split (:func:`is_dev`) is left out: a fixed fifth of each file's documents, by a digest of the PMID,
on which the gene-normalisation choices are made (``bench/gene_norm.py``).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path

from curation.entities.lexicon import CORPUS_SOURCE, normalise_name
from curation.entities.species import HUMAN, dominant_species, text_species
from curation.errors import InputError
from curation.records import Document, Mention, Synonym

KIND = "corpus-genes"
GENE_TYPES = frozenset({"Gene", "GeneOrGeneProduct"})
FAMILY_TYPES = frozenset({"FamilyName"})
FAMILY_PREFIX = "family:"
DEV_BUCKETS = 5  # one document in five (by PMID digest) is the dev split
MIN_FAMILY_USES = 2  # a name once tagged a family is not yet a family name
# The files whose dev split is held out (BioRED has its own Dev).
SPLIT_CORPORA = ("gnormplus", "nlmgene")
_TEXT_LINE = re.compile(r"^(?P<pmid>[^|\t]+)\|[ta]\|(?P<text>.*)$")


def is_dev(pmid: str) -> bool:
    """Whether a document is in the fixed dev split of GNormPlus / NLM-Gene Train: the first byte of the
    SHA-256 of its PMID, modulo 5, is 0 (document-disjoint, about a fifth, the same on every machine)."""
    return hashlib.sha256(pmid.strip().encode()).digest()[0] % DEV_BUCKETS == 0


def family_id(name: str) -> str:
    """The concept id of a gene family named ``name``: ``family:`` and its lookup form ("family:pkc")."""
    return FAMILY_PREFIX + normalise_name(name)


def is_family(concept_id: str) -> bool:
    """Whether a gene concept id is a family's (:func:`family_id`)."""
    return concept_id.startswith(FAMILY_PREFIX)


def _single_id(concept_id: str) -> str:
    concept = concept_id.strip()
    return concept if concept.isdigit() else ""


def gene_synonyms(documents: Iterable[Document], source: str) -> Iterator[Synonym]:
    """Gene and family names of annotated ``documents`` (see the module docstring), all of them."""
    documents = list(documents)
    gene_uses: Counter[str] = Counter()  # lookup form -> gene mentions
    family_uses: dict[str, Counter[str]] = defaultdict(Counter)  # lookup form -> written form -> family mentions
    species_of: dict[str, Counter[str]] = defaultdict(Counter)  # gene id -> species of the texts naming it
    for document in documents:
        species = dominant_species(text_species(document.text), share=0.5)
        for mention in document.mentions:
            key = normalise_name(mention.text)
            if mention.type in FAMILY_TYPES:
                family_uses[key][mention.text.strip()] += 1
            elif mention.type in GENE_TYPES and (concept := _single_id(mention.concept_id)):
                gene_uses[key] += 1
                species_of[concept][species] += 1
    # A human gene's species comes from the human vocabularies, which know every human NCBI id (and replace a
    # corpus's guess: Lexicon, CORPUS_SOURCE); texts about another organism often name humans too ("leptin" in a
    # rat paper citing patients), so a corpus never makes a gene human: the species is the one most of the
    # texts naming another organism are about.
    species = {}
    for concept, counts in species_of.items():
        other = Counter({k: n for k, n in counts.items() if k and k != HUMAN})
        if other and (top := other.most_common(1)[0])[1] * 3 >= 2 * sum(other.values()):
            species[concept] = top[0]
    for document in documents:
        for mention in document.mentions:
            if mention.type in GENE_TYPES and (concept := _single_id(mention.concept_id)):
                yield Synonym(concept, "gene", mention.text.strip(), source, False, species.get(concept, ""))
    for key, written in family_uses.items():
        uses = sum(written.values())
        if uses >= max(MIN_FAMILY_USES, gene_uses[key]):
            display = written.most_common(1)[0][0]
            for name, count in written.items():
                for _ in range(count):
                    yield Synonym(family_id(key), "gene", name, f"{source}:family", name == display, "")


def read_annotated(path: str | Path) -> list[Document]:
    """Documents and gene / family mentions of a PubTator file, including the mention lines with no id column
    (GNormPlus writes its families so; the project's PubTator reader takes six fields).

    Raises:
        InputError: the file is missing or holds no PubTator document.
    """
    path = Path(path)
    texts: dict[str, list[str]] = defaultdict(list)
    mentions: dict[str, list[Mention]] = defaultdict(list)
    try:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                line = line.rstrip("\n")
                if (head := _TEXT_LINE.match(line)) is not None:
                    texts[head["pmid"]].append(head["text"])
                    continue
                fields = line.split("\t")
                if len(fields) >= 5 and fields[1].isdigit() and fields[2].isdigit():
                    concept = fields[5] if len(fields) > 5 else ""
                    mentions[fields[0]].append(Mention(fields[0], int(fields[1]), int(fields[2]), fields[3],
                                                       fields[4], concept, path.stem))
    except FileNotFoundError:
        raise InputError(str(path), None, None, "file not found; point to a PubTator file of ner_corpora/") from None
    except UnicodeDecodeError as exc:
        raise InputError(str(path), None, None, f"not UTF-8 text ({exc.reason})") from None
    if not texts:
        raise InputError(str(path), None, None, "no 'PMID|t|title' line: is this a PubTator file?")
    return [Document(pmid, parts[0], " ".join(parts[1:]), path.stem, tuple(mentions[pmid]))
            for pmid, parts in texts.items()]


def corpus_gene_synonyms(path: str | Path) -> Iterator[Synonym]:
    """The ``corpus-genes`` kind: gene names of one PubTator file (GNormPlus or NLM-Gene Train; its dev split
    left out when the file is one of :data:`SPLIT_CORPORA`'s folders).

    Raises:
        InputError: the file is missing or not PubTator.
    """
    path = Path(path)
    corpus = path.parent.name.lower()
    documents = read_annotated(path)
    if corpus in SPLIT_CORPORA:
        documents = [d for d in documents if not is_dev(d.pmid)]
    return gene_synonyms(documents, f"{CORPUS_SOURCE}{corpus}")
