"""Training the relation scorer: fit it on the corpora's pairs and the curators' decisions, and describe it.

:func:`train_with_manifest` is the one path the command line (``train-relations``) and the background job
(:mod:`curation.learning.relation_scorer`, the scorer's learner the generic training job runs) train a scorer by;
the manifest it returns is written next to the scorer (:func:`curation.relations.scorer_folder.write_scorer`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from curation.entities.lexicon import Lexicon
from curation.records import Document, Mention
from curation.relations.direction import CIVIC_FILE, DirectionModel, civic_examples, train_direction
from curation.relations.evaluation import describe_dev, dev_pair_f1
from curation.relations.features import feature_matrix
from curation.relations.pair_text import PairText, out_of_fold, text_items
from curation.relations.pairs import Pair, RelationError, group_by_concept
from curation.relations.scorer import FORMAT_VERSION, RelationScorer
from curation.relations.training_data import CORPORA, TrainingSet, corpus_training_set, decision_training_pairs
from curation.schemas import RelationSchema


def train_scorer(training: TrainingSet, extra: Sequence[Pair] = (),
                 extra_documents: Mapping[str, Document] | None = None, c: float = 1.0,
                 civic: Sequence[str] = ()) -> RelationScorer:
    """A scorer fitted on ``training``'s pairs plus ``extra`` (curators' decisions, with their documents: a
    document of both keeps the corpus's gold mentions for the corpus's pairs and the stored ones for the
    decisions' — the decisions' pairs are computed first), with its pair text model (:mod:`pair_text`, learned
    from ``training``'s pairs and ``civic``'s masked statements; the scorer's own training pairs read it out of
    fold). Pairs too few to learn words from train a scorer without one."""
    text, oof = pair_text_model(training, civic)
    extra_features = feature_matrix(dict(extra_documents or {}), extra, text_model=text)
    features = np.vstack([feature_matrix(training.documents, training.pairs, text_probabilities=oof),
                          extra_features])
    labels = np.array([p.label for p in training.pairs] + [p.label for p in extra])
    return replace(RelationScorer.fit(features, labels, c=c), text=text)


def pair_text_model(training: TrainingSet, civic: Sequence[str] = ()) -> tuple[PairText | None, np.ndarray | None]:
    """The pair text model of ``training``'s pairs and ``civic``, and its out-of-fold probability of each pair
    (None, None when the pairs one sentence holds lack related or unrelated ones, in a fold or in all)."""
    grouped = {pmid: group_by_concept(d.mentions) for pmid, d in training.documents.items()}
    items = text_items(training.documents, training.pairs, grouped)
    labels = [p.label for p in training.pairs]
    try:
        return out_of_fold(items, labels, [p.pmid for p in training.pairs], civic)
    except (RelationError, ValueError):
        return None, None


def train_with_manifest(data_dir: Path, decisions: Sequence | None, schemas: Mapping[str, RelationSchema],
                        documents: Mapping[str, Document], mentions: Mapping[str, Sequence[Mention]], lexicon: Lexicon,
                        name: str) -> tuple[RelationScorer, dict]:
    """A scorer trained on the corpora and (unless ``decisions`` is None) the curators' decisions, and its
    manifest (what it was trained on, what was held out, its Dev pair F1 on the Dev files the data folder holds;
    ``dev_pair_f1_mean`` None when it holds none): what the CLI and the background job both call.

    Raises:
        RelationError: no Train file in the data folder, or the pairs cannot train a scorer (named).
    """
    started = time.time()
    training = corpus_training_set(data_dir)
    extra, extra_documents = ([], {}) if decisions is None else decision_training_pairs(
        decisions, schemas, documents, mentions, lexicon, training.held_out)
    scorer = train_scorer(training, extra, extra_documents, civic=civic_statements(Path(data_dir), training))
    direction = direction_model(Path(data_dir), training)
    scorer = replace(scorer, direction=direction)
    dev = dev_pair_f1(scorer, data_dir)
    manifest = {
        "name": name, "format_version": FORMAT_VERSION, "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "data_dir": str(data_dir), "corpus_documents": training.per_corpus, "corpus_pairs": len(training.pairs),
        "corpus_positives": sum(p.label for p in training.pairs), "held_out_pmids": len(training.held_out),
        "held_out_files": training.held_out_from, "missing_files": list(training.missing),
        "held_out": training.held_out_note(),
        "decision_pairs": len(extra), "decision_positives": sum(p.label for p in extra),
        "threshold": round(scorer.threshold, 6), "dev_pair_f1": dev,
        "direction": dict(direction.figures) if direction is not None else None,
        "pair_text": dict(scorer.text.figures) if scorer.text is not None else None,
        "dev_pair_f1_mean": round(sum(dev.values()) / len(dev), 4) if dev else None,
        "seconds": round(time.time() - started, 1),
    }
    return scorer, manifest


def civic_statements(data_dir: Path, training: TrainingSet) -> list[str]:
    """CIViC's supporting Predictive statements of a therapy, masked (gene and variant ``@a``, therapy ``@b``),
    those of ``training``'s held-out PMIDs left out; none without the export in the data folder."""
    path = data_dir / CIVIC_FILE
    if not path.is_file():
        return []
    return [e.text for e in civic_examples(path, training.held_out) if e.head == "therapy"]


def direction_model(data_dir: Path, training: TrainingSet) -> DirectionModel | None:
    """The direction model (:mod:`curation.relations.direction`) from CIViC's statements and the Train corpora's
    relations, every Dev/Test PMID held out, with its dev figures on the Dev files the data folder holds (None
    when the data folder has nothing to learn a direction from)."""
    from curation.ingest.problems import Problems
    from curation.ingest.pubtator import read_pubtator

    dev = [d for _, _, name, _, _ in CORPORA if (data_dir / name).is_file()
           for d in read_pubtator(data_dir / name, Problems(data_dir / name, lenient=True))]
    try:
        return train_direction(data_dir, training.held_out, training.documents.values(), dev)
    except RelationError:
        return None


def describe_training(manifest: Mapping[str, object]) -> str:
    """A trained scorer's Dev figures and what was held out of its training, for a person."""
    dev = manifest.get("dev_pair_f1")
    line = describe_dev(dev if isinstance(dev, Mapping) else {})
    return f"{line}; {manifest['held_out']}" if manifest.get("held_out") else line
