"""The entity recogniser's data: the annotated corpora of the data directory, split for training.

Used by ``python -m curation train-recogniser`` (``--kind cnn`` or ``--kind transformer``), the background
recogniser job (:mod:`curation.learning.recogniser.learner`) and bench/entities.py: one split for all three.

Which documents train and which select (see :mod:`curation.entities.recogniser`):

* train: BioRED ``Train.PubTator`` (every type) and BC5CDR Train (``CDR_TrainingSet`` minus the
  documents of ``CDR_DevelopmentSet``, which that file also holds; chemicals and diseases only);
* select: BioRED ``Dev.PubTator``;
* never trained on: any document of BioRED Dev/Test or BC5CDR Dev/Test (BC5CDR and BioRED share
  some PubMed abstracts, so a BC5CDR Train document that is in a BioRED Dev or Test file is left out).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from curation.entities.recogniser import PARTIAL_TYPES, CorpusPart, RecogniserError, RecogniserManifest
from curation.entities.transformer_recogniser import TransformerManifest, TransformerSettings
from curation.errors import InputError
from curation.ingest.problems import Problems
from curation.ingest.pubtator import read_pubtator
from curation.learning.recogniser.ncbi_corpora import Guidelines
from curation.records import Document

BIORED = ("biored/Train.PubTator", "biored/Dev.PubTator", "biored/Test.PubTator")
BC5CDR = (
    "bc5cdr/CDR_TrainingSet.PubTator.txt",
    "bc5cdr/CDR_DevelopmentSet.PubTator.txt",
    "bc5cdr/CDR_TestSet.PubTator.txt",
)


#: which corpora train: BioRED + BC5CDR, or those and the four NCBI corpora (:mod:`.ncbi_corpora`)
STANDARD, ALL = "standard", "all"
CORPORA = (STANDARD, ALL)


@dataclass(frozen=True)
class Corpora:
    """The recogniser's train, dev and held-out parts.

    ``corpus_dev``: each NCBI corpus's dev split (with ``ALL``); ``unlabelled``: the spans of each partially
    annotated training document's text to leave missing (None: BC5CDR's, found by :func:`gene_variant_spans`);
    ``held_out``: every PMID of the Dev/Test files, never trained on.
    """

    train: tuple[CorpusPart, ...]
    dev: CorpusPart
    bc5cdr_dev: CorpusPart
    biored_test: CorpusPart
    bc5cdr_test: CorpusPart
    corpus_dev: tuple[CorpusPart, ...] = ()
    unlabelled: Callable[[str], list[tuple[int, int]]] | None = None
    held_out: frozenset[str] = frozenset()  # every PMID of the BioRED and BC5CDR Dev/Test files

    def unlabelled_spans(self) -> Callable[[str], list[tuple[int, int]]]:
        """The ``unlabelled`` callable the recogniser trains with."""
        if self.unlabelled is not None:
            return self.unlabelled
        return gene_variant_spans(self.train[0].documents)


def read_corpus(path: Path) -> list[Document]:
    """A PubTator file through the strict loader; a clear error when missing or empty."""
    path = Path(path)
    if not path.is_file():
        raise RecogniserError(f"{path}: training corpus file not found (set CURATION_DATA_DIR or --data-dir)")
    try:
        documents = list(read_pubtator(path, Problems(path)))
    except InputError as exc:
        raise RecogniserError(f"training corpus: {exc}") from None
    if not documents:
        raise RecogniserError(f"{path}: no documents in this training corpus file")
    return documents


def load_corpora(data_dir: Path, corpora: str = STANDARD, guidelines: Guidelines | None = None) -> Corpora:
    """The split of the data directory (module docstring); with ``ALL`` the four NCBI corpora train too, each
    partially annotated (:mod:`curation.learning.recogniser.ncbi_corpora`, under ``guidelines``)."""
    if corpora not in CORPORA:
        raise RecogniserError(f"corpora must be one of {', '.join(CORPORA)}, not {corpora!r}")
    standard = _standard_corpora(Path(data_dir))
    if corpora == STANDARD:
        return standard
    from curation.learning.recogniser.ncbi_corpora import kind_dictionary, load_ncbi_parts

    held_out = set(standard.held_out)
    biored_train = standard.train[0].documents
    dictionary = kind_dictionary([*biored_train, *standard.train[1].documents])
    ncbi = load_ncbi_parts(Path(data_dir), held_out, {d.pmid for d in biored_train}, dictionary, read_corpus,
                           guidelines or Guidelines())
    bc5cdr = standard.unlabelled_spans()
    bc5cdr_texts = {d.text for d in standard.train[1].documents}
    fallback = lambda text: bc5cdr(text) if text in bc5cdr_texts else []  # noqa: E731 - BioRED: nothing missing
    return replace(standard, train=(*standard.train, *ncbi.train), corpus_dev=ncbi.dev,
                   unlabelled=ncbi.unlabelled(fallback))


def _standard_corpora(data_dir: Path) -> Corpora:
    b_train, b_dev, b_test = (read_corpus(data_dir / p) for p in BIORED)
    c_all, c_dev, c_test = (read_corpus(data_dir / p) for p in BC5CDR)
    held_out = {d.pmid for d in b_dev + b_test + c_dev + c_test}
    seen = {d.pmid for d in b_train}
    c_train = [d for d in c_all if d.pmid not in held_out and d.pmid not in seen]
    b_trained = {d.pmid for d in b_train}
    labels = PARTIAL_TYPES["bc5cdr"]
    return Corpora(
        train=(CorpusPart("biored_train", tuple(b_train)), CorpusPart("bc5cdr_train", tuple(c_train), labels)),
        dev=CorpusPart("biored_dev", tuple(b_dev)),
        # BC5CDR Dev/Test documents that BioRED Train holds were trained on: left out of their figures.
        bc5cdr_dev=CorpusPart("bc5cdr_dev", tuple(d for d in c_dev if d.pmid not in b_trained), labels),
        biored_test=CorpusPart("biored_test", tuple(b_test)),
        bc5cdr_test=CorpusPart("bc5cdr_test", tuple(d for d in c_test if d.pmid not in b_trained), labels),
        held_out=frozenset(held_out),
    )


def gene_variant_spans(documents: Iterable[Document]) -> Callable[[str], list[tuple[int, int]]]:
    """Where a text names a gene or variant, by dictionary (names from ``documents``) and notation rule.

    Used to mark those tokens as missing in BC5CDR documents, which do not annotate genes.
    """
    from curation.learning.recogniser.ncbi_corpora import kind_dictionary

    found = kind_dictionary(documents, ("gene", "variant"))
    return lambda text: [(start, end) for start, end, _ in found(text)]


def check_data_dir(data_dir: Path) -> None:
    """Fail early, naming the first corpus file the standard split needs and the data directory lacks."""
    for relative in (*BIORED, *BC5CDR):
        if not (Path(data_dir) / relative).is_file():
            raise RecogniserError(f"{Path(data_dir) / relative}: training corpus file not found; the recogniser "
                                  "trains on BioRED and BC5CDR (set CURATION_DATA_DIR or --data-dir)")


def train_standard_recogniser(data_dir: Path, out: Path, **settings) -> RecogniserManifest:
    """Train on the data directory's corpora and publish the recogniser folder at ``out``.

    ``settings``: ``corpora`` (:data:`STANDARD` or :data:`ALL`) and ``guidelines`` choose the training parts
    (:func:`load_corpora`); the others go to :func:`~curation.entities.recogniser.train_recogniser` (width, max_epochs,
    use_gpu, overrides...).
    """
    from curation.entities.recogniser import train_recogniser

    corpora = load_corpora(data_dir, settings.pop("corpora", STANDARD), settings.pop("guidelines", None))
    return train_recogniser(corpora.train, corpora.dev, out, unlabelled=corpora.unlabelled_spans(), **settings)


def train_standard_transformer(
    data_dir: Path, out: Path, settings: TransformerSettings, max_documents: int = 0, **options
) -> TransformerManifest:
    """The transformer recogniser on the same split and unlabelled genes/variants as the CNN, published at ``out``.

    Args:
        max_documents: train on the first this many documents of each training part and select on the first
            this many of BioRED Dev (0: all; a quick check that it learns, not a model to serve).
        options: ``progress_file``, ``cancel_file``, ``bar`` of
            :func:`~curation.entities.transformer_recogniser.train_transformer_recogniser`.
    """
    from curation.entities.transformer_recogniser import train_transformer_recogniser

    corpora = load_corpora(data_dir)
    unlabelled = gene_variant_spans(corpora.train[0].documents)
    train, dev = corpora.train, corpora.dev
    if max_documents:
        train = tuple(replace(p, documents=p.documents[:max_documents]) for p in train)
        dev = replace(dev, documents=dev.documents[:max_documents])
    return train_transformer_recogniser(train, dev, out, unlabelled=unlabelled, settings=settings, **options)
