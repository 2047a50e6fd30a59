"""The one build chain: a snapshot in, a published model version out.

snapshot → lexicon and matcher → KB split (dev by gene) → training set (KB pairs + decision pairs) →
(baseline evaluation of the active version) → :func:`~curation.learning.build.build_version` (train →
encode → index → fusion on dev → manifest). ``python -m curation train``, the retraining worker and the
benchmarks all call :func:`build_from_snapshot`; each keeps only its own way of reporting.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from curation.entities.concepts import ConceptIndex
from curation.entities.dictionaries import snapshot_lexicon
from curation.entities.matching import Matcher
from curation.errors import USER_ERRORS, CurationError
from curation.learning.build import (
    BuildRequest,
    EvalSet,
    KBSplit,
    build_version,
    evaluate_retriever,
    kb_split,
    training_set_for,
)
from curation.learning.feedback import FeedbackReport
from curation.learning.rerank_stage import served_chooser
from curation.learning.sampling import TrainingSet
from curation.learning.served_fusion import served_search_for
from curation.learning.snapshot import Snapshot
from curation.learning.training import write_progress
from curation.records import Decision
from curation.versions import registry
from curation.versions.manifest import Baseline, DevMetrics
from index.lexical import LexicalIndex
from index.search import Mode


@dataclass(frozen=True)
class ChainResult:
    """What one run of the chain made, and what it was made from."""

    version: registry.ModelVersion
    split: KBSplit
    training: TrainingSet | None
    feedback: FeedbackReport | None
    baseline: Baseline | None = None
    timings_s: dict[str, float] = field(default_factory=dict)

    @property
    def dev(self) -> EvalSet:
        return self.split.dev


def build_from_snapshot(
    snapshot: Snapshot,
    request: BuildRequest,
    models_dir: Path,
    *,
    seed: int = 13,
    decisions: Sequence[Decision] | None = None,
    use_kb: bool = True,
    require_pairs: bool = False,
    baseline: Path | None = None,
    progress_file: Path | None = None,
    cancel_file: Path | None = None,
    before_training: Callable[[str], None] | None = None,
    log: Callable[[str], None] = print,
) -> ChainResult:
    """Build and publish one model version from a snapshot of the store.

    Args:
        snapshot: the store's KB records, documents, synonyms and decisions as plain files (never the store).
        request: what to build (schema, base model, version name, training and sampling settings).
        models_dir: the registry folder the version is published under.
        seed: the KB split's seed (genes to train / dev / test).
        decisions: curators' decisions turned into graded positives and hard negatives (None: not used).
        use_kb: whether the KB's records give training pairs too.
        require_pairs: fail when there is nothing to train on (a retraining job), instead of training on nothing.
        baseline: the active version's folder, evaluated on the same dev split for the activation check.
        progress_file, cancel_file: the job protocol's files (progress written, cancel polled).
        before_training: called with the version name before any training (the worker records it so the app can
            clear a staging folder left by a worker that died).
        log: where progress lines go.

    Raises:
        CurationError: nothing to train on (with ``require_pairs``), or the base model cannot be loaded.
        TrainingCancelled: ``cancel_file`` appeared.
        OSError: the disk is full or the models folder is not writable.
    """
    timings: dict[str, float] = {}
    clock = time.time()
    schema = request.schema
    documents = snapshot.documents
    # g(e, d): the text matcher, plus the concepts of the snapshot's stored annotations (recogniser + linker).
    matcher = ConceptIndex(Matcher(snapshot_lexicon(snapshot)), snapshot.annotations)
    split = kb_split(schema, snapshot.records, documents, matcher, seed=seed)
    log(f"genes per split: {split.genes}; dev queries: {len(split.dev.queries)}")
    if before_training is not None:
        before_training(request.version)
    training = feedback = None
    if request.train:
        lexical = LexicalIndex.build(list(documents.values()))
        training, feedback = training_set_for(request, split.train, documents, matcher, lexical,
                                              decisions=decisions or (), use_kb=use_kb)
        if require_pairs and not training.pairs:
            raise CurationError(
                "nothing to train on: no KB record of this schema has its abstract in the corpus"
                + (" and no decision was recorded" if decisions is not None else "")
            )
        log(f"training pairs by margin class ({schema.name}):\n{training.format_report()}")
    timings["prepare"] = round(time.time() - clock, 1)
    measured = None
    if baseline is not None and split.dev.queries:
        clock = time.time()
        write_progress(progress_file, state="evaluating the active version", step=None, total=None, loss=None,
                       eta_s=None, epoch=None)
        measured = evaluate_baseline(baseline, split.dev, len(documents), log)
        timings["baseline_eval"] = round(time.time() - clock, 1)
    clock = time.time()
    # The Curate page serves the concept search: its dense share is chosen on the same dev queries.
    served = served_chooser(lambda: served_search_for(matcher.matcher, snapshot.annotations, documents, schema))
    version = build_version(request, documents, models_dir, training=training, dev=split.dev,
                            snapshot_digest=snapshot.digest, progress_file=progress_file, cancel_file=cancel_file,
                            served=served)
    timings["build"] = round(time.time() - clock, 1)
    return ChainResult(version, split, training, feedback, measured, timings)


def evaluate_baseline(path: Path, dev: EvalSet, documents: int, log: Callable[[str], None] = print) -> Baseline | None:
    """The dev metrics of the version in ``path`` (None when it does not load or indexes another corpus)."""
    from index.loading import open_retriever

    try:
        current = open_retriever(path)
        if len(current.dense) != documents:
            return None
        return Baseline(Path(path).name, DevMetrics(dense=evaluate_retriever(current, dev, Mode.DENSE),
                                                    hybrid=evaluate_retriever(current, dev, Mode.HYBRID)))
    except USER_ERRORS as exc:  # an unusable active version: the app decides without a baseline
        log(f"the active version could not be evaluated: {exc}")
        return None
