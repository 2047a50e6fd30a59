"""Training the relation scorer: fit it on the corpora's pairs and the curators' decisions, and describe it.

:func:`train_with_manifest` is the one path the command line (``train-relations``) and the background job
(:mod:`curation.jobs.relations`) train a scorer by; the manifest it returns is written next to the scorer
(:func:`curation.relations.scorer_folder.write_scorer`).
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
from curation.relations.direction import DirectionModel, train_direction
from curation.relations.evaluation import describe_dev, dev_pair_f1
from curation.relations.features import feature_matrix
from curation.relations.pairs import Pair, RelationError
from curation.relations.scorer import FORMAT_VERSION, RelationScorer
from curation.relations.training_data import CORPORA, TrainingSet, corpus_training_set, decision_training_pairs
from curation.schemas import RelationSchema


def train_scorer(training: TrainingSet, extra: Sequence[Pair] = (),
                 extra_documents: Mapping[str, Document] | None = None, c: float = 1.0) -> RelationScorer:
    """A scorer fitted on ``training``'s pairs plus ``extra`` (curators' decisions, with their documents: a
    document of both keeps the corpus's gold mentions for the corpus's pairs and the stored ones for the
    decisions' — the decisions' pairs are computed first)."""
    extra_features = feature_matrix(dict(extra_documents or {}), extra)
    features = np.vstack([feature_matrix(training.documents, training.pairs), extra_features])
    labels = np.array([p.label for p in training.pairs] + [p.label for p in extra])
    return RelationScorer.fit(features, labels, c=c)


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
    scorer = train_scorer(training, extra, extra_documents)
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
        "dev_pair_f1_mean": round(sum(dev.values()) / len(dev), 4) if dev else None,
        "seconds": round(time.time() - started, 1),
    }
    return scorer, manifest


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
