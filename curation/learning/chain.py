"""The one build chain: a snapshot in, a published model version out.

snapshot → lexicon and matcher → KB split (dev by gene, stable) → dev set (the KB's dev genes, else held-out
decisions: :mod:`curation.learning.holdout`) → training set (KB pairs + the decisions training may read) →
(baseline evaluation of the active version) → :func:`~curation.learning.build.build_version` (train →
encode → index → fusion on dev → manifest) → the activation check's evidence in the manifest
(:mod:`curation.learning.gate`). The KB pairs and the baseline evaluation are kept between jobs
(:mod:`curation.learning.cache`). ``python -m curation train``, the retraining worker and the benchmarks
all call :func:`build_from_snapshot`; each keeps only its own way of reporting. A run's inputs travel as one
:class:`ChainRun` (its :class:`ChainOptions` inside), what it prepared as one :class:`Prepared`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from curation.entities.concepts import ConceptIndex
from curation.entities.dictionaries import snapshot_lexicon
from curation.entities.matching import Matcher
from curation.errors import USER_ERRORS, CurationError
from curation.learning import gate, holdout
from curation.learning.build import BuildRequest, build_version, evaluate_retriever
from curation.learning.cache import BuildCache, SnapshotDigests, digest
from curation.learning.cross_encoder.stage import served_chooser
from curation.learning.encoder_data import kb_training_set, with_decisions
from curation.learning.feedback import FeedbackReport
from curation.learning.sampling import TrainingSet
from curation.learning.served_fusion import ServedSearch, served_search_for
from curation.learning.snapshot import Snapshot
from curation.learning.splits import EvalSet, KBSplit, kb_split
from curation.learning.training import TrainingPair
from curation.records import Decision
from curation.training_loop import write_progress
from curation.versions import registry
from curation.versions.manifest import Baseline, DevMetrics, GateEvidence, write_manifest
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
    dev_set: EvalSet | None = None  # the dev set used (None: the KB split's)
    dev_source: str = holdout.KB
    gate: GateEvidence | None = None
    cache: dict[str, str] = field(default_factory=dict)  # kind -> "hit" / "miss"

    @property
    def dev(self) -> EvalSet:
        """The dev set the version was chosen and judged on: the KB's dev genes, or held-out decisions."""
        return self.dev_set if self.dev_set is not None else self.split.dev


@dataclass(frozen=True)
class ChainOptions:
    """How one run of the chain goes, beyond what to build (the :class:`~curation.learning.build.BuildRequest`).

    Attributes:
        seed: the KB split's seed (genes to train / dev / test).
        decisions: curators' decisions turned into graded positives and hard negatives (None: not used).
        use_kb: whether the KB's records give training pairs too.
        require_pairs: fail when there is nothing to train on (a retraining job), instead of training on nothing.
        baseline: the active version's folder, evaluated on the same dev split for the activation check.
        progress_file, cancel_file: the job protocol's files (progress written, cancel polled).
        before_training: called with the version name before any training (the worker records it so the app can
            clear a staging folder left by a worker that died).
        log: where progress lines go.
        use_cache: reuse (and keep) the KB pairs and the baseline evaluation under ``models_dir/.cache``.
    """

    seed: int = 13
    decisions: Sequence[Decision] | None = None
    use_kb: bool = True
    require_pairs: bool = False
    baseline: Path | None = None
    progress_file: Path | None = None
    cancel_file: Path | None = None
    before_training: Callable[[str], None] | None = None
    log: Callable[[str], None] = print
    use_cache: bool = True


@dataclass(frozen=True)
class ChainRun:
    """One run's inputs as the chain's steps read them: the snapshot, the request, the registry, the options, and
    what is derived once from them (the cache under the registry, the snapshot's digests), and when it began
    (``time.time()``: the preparation's timings count from there)."""

    snapshot: Snapshot
    request: BuildRequest
    models_dir: Path
    options: ChainOptions
    cache: BuildCache
    digests: SnapshotDigests
    started: float


@dataclass(frozen=True)
class Prepared:
    """What the chain knows before it builds: g(e, d), the KB split, the dev set chosen, the training set."""

    matcher: ConceptIndex
    split: KBSplit
    choice: holdout.DevChoice
    training: TrainingSet | None = None
    feedback: FeedbackReport | None = None


def build_from_snapshot(snapshot: Snapshot, request: BuildRequest, models_dir: Path,
                        options: ChainOptions | None = None, **changes: object) -> ChainResult:
    """Build and publish one model version from a snapshot of the store.

    Args:
        snapshot: the store's KB records, documents, synonyms and decisions as plain files (never the store).
        request: what to build (schema, base model, version name, training and sampling settings).
        models_dir: the registry folder the version is published under.
        options: how the run goes (:class:`ChainOptions`; None: its defaults).
        **changes: fields of ``options`` given by name instead (``seed=…, log=…``, as callers wrote them before
            :class:`ChainOptions`); an unknown name is a ``TypeError``.

    Raises:
        CurationError: nothing to train on (with ``require_pairs``), or the base model cannot be loaded.
        TrainingCancelled: ``cancel_file`` appeared.
        OSError: the disk is full or the models folder is not writable.
    """
    options = replace(options or ChainOptions(), **changes)
    timings: dict[str, float] = {}
    clock = time.time()
    run = ChainRun(snapshot, request, Path(models_dir), options,
                   BuildCache.under(models_dir, enabled=options.use_cache), SnapshotDigests.of(snapshot), clock)
    timings["digests"] = round(time.time() - clock, 1)
    prepared = _prepare(run, timings)
    dev, source, log = prepared.choice.dev, prepared.choice.source, options.log
    made: list[ServedSearch] = []

    def search() -> ServedSearch:  # built once per job, when first needed (a linker takes seconds)
        if not made:
            made.append(served_search_for(prepared.matcher.matcher, snapshot.annotations, snapshot.documents,
                                          request.schema))
        return made[0]

    measured = old_scores = None
    if options.baseline is not None and dev.queries:
        clock = time.time()
        write_progress(options.progress_file, state="evaluating the active version", step=None, total=None,
                       loss=None, eta_s=None, epoch=None)
        measured, old_scores = _baseline(options.baseline, dev, run.digests, search, len(snapshot.documents),
                                         run.cache, log)
        timings["baseline_eval"] = round(time.time() - clock, 1)
    clock = time.time()
    # The Curate page serves the concept search: its dense share is chosen on the same dev queries.
    version = build_version(request, snapshot.documents, run.models_dir, training=prepared.training, dev=dev,
                            snapshot_digest=snapshot.digest, progress_file=options.progress_file,
                            cancel_file=options.cancel_file, served=served_chooser(search, dev_source=source))
    timings["build"] = round(time.time() - clock, 1)
    evidence = None
    if dev.queries and gate.judged(dev)[0]:
        clock = time.time()
        evidence = _gate(version, dev, source, search, measured, old_scores, options.seed, log)
        version = registry.read_version(version.path)
        timings["gate"] = round(time.time() - clock, 1)
    return ChainResult(version, prepared.split, prepared.training, prepared.feedback, measured, timings, dev, source,
                       evidence, dict(run.cache.report))


def _prepare(run: ChainRun, timings: dict[str, float]) -> Prepared:
    """g(e, d), the KB split, the dev set (the KB's dev genes, else held-out decisions) and, for a training build,
    the training set (KB pairs + the decisions training may read); ``timings`` gets each step's seconds."""
    clock = run.started
    snapshot, request, options = run.snapshot, run.request, run.options
    schema, documents, decisions, seed = request.schema, snapshot.documents, options.decisions, options.seed
    # g(e, d): the text matcher, plus the concepts of the snapshot's stored annotations (recogniser + linker).
    matcher = ConceptIndex(Matcher(snapshot_lexicon(snapshot)), snapshot.annotations)
    split = kb_split(schema, snapshot.records, documents, matcher, seed=seed)
    choice = holdout.choose_dev(schema, split, decisions or (), documents, seed=seed,
                                conflicts=request.feedback.conflicts)
    options.log(f"genes per split: {split.genes}; dev queries: {len(choice.dev.queries)} ({choice.source})")
    timings["corpus_analysis"] = round(time.time() - clock, 1)
    if options.before_training is not None:
        options.before_training(request.version)
    if not request.train:
        timings["prepare"] = round(time.time() - clock, 1)
        return Prepared(matcher, split, choice)
    started = time.time()
    kept, held_out = holdout.trainable(schema, decisions or (), choice, seed)
    kb = _kb_pairs(request, split, snapshot, run.digests, matcher, seed, run.cache) if options.use_kb \
        else TrainingSet((), {})
    # the decisions' pairs need no BM25: a new decision recomputes only these, over the cached KB pairs
    training, feedback = with_decisions(kb, request, kept, documents, matcher)
    feedback = replace(feedback, held_out=held_out)
    if options.require_pairs and not training.pairs:
        raise CurationError(
            "nothing to train on: no KB record of this schema has its abstract in the corpus"
            + (" and no decision was recorded" if decisions is not None else "")
        )
    if held_out:
        options.log(f"{held_out} decisions on dev, test or held-out genes are not trained on")
    options.log(f"training pairs by margin class ({schema.name}):\n{training.format_report()}")
    timings["training_set"] = round(time.time() - started, 1)
    timings["prepare"] = round(time.time() - clock, 1)
    return Prepared(matcher, split, choice, training, feedback)


def _kb_pairs(request: BuildRequest, split: KBSplit, snapshot: Snapshot, digests: SnapshotDigests,
              matcher: ConceptIndex, seed: int, cache: BuildCache) -> TrainingSet:
    """The KB's EDEL pairs, from the cache when nothing they depend on changed."""
    key = digest("kb_pairs", digests.corpus, digests.records, request.schema.to_dict(), asdict(request.sampling),
                 str(request.sampling.ablation), seed)
    kept = cache.get("kb_pairs", key)
    if kept is not None:
        return TrainingSet(tuple(TrainingPair(**p) for p in kept["pairs"]), dict(kept["margins"]))
    lexical = LexicalIndex.build(list(snapshot.documents.values()))
    kb = kb_training_set(request, split.train, snapshot.documents, matcher, lexical)
    cache.put("kb_pairs", key, {"pairs": [asdict(p) for p in kb.pairs], "margins": dict(kb.margins)})
    return kb


def _baseline(path: Path, dev: EvalSet, digests: SnapshotDigests, search: Callable[[], ServedSearch],
              documents: int, cache: BuildCache, log: Callable[[str], None]
              ) -> tuple[Baseline | None, dict[str, float] | None]:
    """The active version's dev metrics and per-query served scores, from the cache when nothing changed."""
    try:
        manifest_text = (Path(path) / "manifest.json").read_text(encoding="utf-8")
    except OSError:
        manifest_text = ""
    key = digest("baseline", Path(path).name, manifest_text, _dev_digest(dev), digests.corpus, gate.METRIC)
    kept = cache.get("baseline_eval", key)
    if kept is not None:
        if not kept.get("usable"):
            return None, None
        return (Baseline(kept["version"], DevMetrics(dense=kept["dense"], hybrid=kept["hybrid"])),
                dict(kept["scores"]))
    measured, scores = evaluate_baseline_scores(path, dev, documents, search, log)
    if measured is not None:
        cache.put("baseline_eval", key, {"usable": True, "version": measured.version,
                                         "dense": dict(measured.metrics.dense),
                                         "hybrid": dict(measured.metrics.hybrid), "scores": scores or {}})
    return measured, scores


def _dev_digest(dev: EvalSet) -> str:
    return digest(dict(dev.queries), {q: dict(d) for q, d in dev.qrels.items()},
                  {q: dict(v) for q, v in dev.values.items()})


def _gate(version: registry.ModelVersion, dev: EvalSet, source: str, search: Callable[[], ServedSearch],
          baseline: Baseline | None, old_scores: Mapping[str, float] | None, seed: int,
          log: Callable[[str], None]) -> GateEvidence | None:
    """Evaluate the published version as it will be served, and record the gate's evidence in its manifest."""
    from curation.versions.serving import open_version as open_retriever

    try:
        engine = open_retriever(version.path)
        try:
            new_scores = gate.served_scores(engine, search(), dev)
        finally:
            engine.close()  # a Milvus Lite file is then free for the app to open
    except USER_ERRORS as exc:
        log(f"the new version could not be evaluated as served: {exc}")
        return None
    evidence = gate.evidence(new_scores, old_scores, baseline.version if baseline else "", source, seed=seed)
    log(f"activation check: {evidence.describe()}")
    # Published a moment ago and not yet registered: the app reads the manifest only once the job's result exists.
    write_manifest(version.path / registry.MANIFEST, replace(version.manifest, gate=evidence))
    return evidence


def evaluate_baseline(path: Path, dev: EvalSet, documents: int, log: Callable[[str], None] = print) -> Baseline | None:
    """The dev metrics of the version in ``path`` (None when it does not load or indexes another corpus)."""
    return evaluate_baseline_scores(path, dev, documents, None, log)[0]


def evaluate_baseline_scores(path: Path, dev: EvalSet, documents: int, search: Callable[[], ServedSearch] | None,
                             log: Callable[[str], None] = print) -> tuple[Baseline | None, dict[str, float] | None]:
    """The dev metrics of the version in ``path`` and, with ``search``, its per-query served scores
    (None, None when it does not load or indexes another corpus)."""
    from curation.versions.serving import open_version as open_retriever

    try:
        current = open_retriever(path)
        try:
            if len(current.dense) != documents:
                return None, None
            metrics = DevMetrics(dense=evaluate_retriever(current, dev, Mode.DENSE),
                                 hybrid=evaluate_retriever(current, dev, Mode.HYBRID))
            scores = gate.served_scores(current, search(), dev) if search is not None else None
        finally:
            current.close()
        return Baseline(Path(path).name, metrics), scores
    except USER_ERRORS as exc:  # an unusable active version: the app decides without a baseline
        log(f"the active version could not be evaluated: {exc}")
        return None, None
