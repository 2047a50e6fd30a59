"""The entity recogniser's data: the annotated corpora of the data directory, split for training.

Used by ``python -m curation train-recogniser`` (``--kind cnn`` or ``--kind transformer``), the background
recogniser job (:mod:`curation.jobs.recogniser`) and bench/entities.py: one split for all three.

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
from curation.records import Document

BIORED = ("biored/Train.PubTator", "biored/Dev.PubTator", "biored/Test.PubTator")
BC5CDR = (
    "bc5cdr/CDR_TrainingSet.PubTator.txt",
    "bc5cdr/CDR_DevelopmentSet.PubTator.txt",
    "bc5cdr/CDR_TestSet.PubTator.txt",
)


@dataclass(frozen=True)
class Corpora:
    """The recogniser's train, dev and held-out parts."""

    train: tuple[CorpusPart, ...]
    dev: CorpusPart
    bc5cdr_dev: CorpusPart
    biored_test: CorpusPart
    bc5cdr_test: CorpusPart


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


def load_corpora(data_dir: Path) -> Corpora:
    """The standard split of the data directory (module docstring)."""
    data_dir = Path(data_dir)
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
    )


def gene_variant_spans(documents: Iterable[Document]) -> Callable[[str], list[tuple[int, int]]]:
    """Where a text names a gene or variant, by dictionary (names from ``documents``) and notation rule.

    Used to mark those tokens as missing in BC5CDR documents, which do not annotate genes.
    """
    from curation.entities.lexicon import Lexicon
    from curation.entities.matching import Matcher
    from curation.entities.synonyms import mention_synonyms

    mentions = [m for d in documents for m in d.mentions]
    lexicon = Lexicon(s for s in mention_synonyms(mentions) if s.entity_type in ("gene", "variant"))
    matcher = Matcher(lexicon, shapes=False)

    def spans(text: str) -> list[tuple[int, int]]:
        return [(s.start, s.end) for s in matcher.find_all(text, kinds=("gene", "variant"))]

    return spans


def check_data_dir(data_dir: Path) -> None:
    """Fail early, naming the first corpus file the standard split needs and the data directory lacks."""
    for relative in (*BIORED, *BC5CDR):
        if not (Path(data_dir) / relative).is_file():
            raise RecogniserError(f"{Path(data_dir) / relative}: training corpus file not found; the recogniser "
                                  "trains on BioRED and BC5CDR (set CURATION_DATA_DIR or --data-dir)")


def train_standard_recogniser(data_dir: Path, out: Path, **settings) -> RecogniserManifest:
    """Train on the data directory's corpora and publish the recogniser folder at ``out``.

    ``settings`` go to :func:`~curation.entities.recogniser.train_recogniser` (width, max_epochs,
    use_gpu, overrides...).
    """
    from curation.entities.recogniser import train_recogniser

    corpora = load_corpora(data_dir)
    unlabelled = gene_variant_spans(corpora.train[0].documents)
    return train_recogniser(corpora.train, corpora.dev, out, unlabelled=unlabelled, **settings)


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
