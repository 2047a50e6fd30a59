"""Building model versions: snapshot → (training) → corpus embeddings → indexes → evaluation.

The same functions serve ``python -m curation train``, the benchmarks and the background
worker. They read a :class:`~curation.learning.snapshot.Snapshot` (never the store) and write only
under the model registry.
"""

from __future__ import annotations

import platform
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from curation.errors import USER_ERRORS, CurationError
from curation.learning.cross_encoder import stage as rerank_stage
from curation.learning.cross_encoder.training import CrossEncoderConfig
from curation.learning.evaluation import evaluate
from curation.learning.feedback import FeedbackConfig
from curation.learning.sampling import SamplingConfig, TrainingSet
from curation.learning.splits import EvalSet
from curation.learning.training import DevPool, TrainConfig, TrainResult, pool_evaluator, train
from curation.records import Document
from curation.schemas import RelationSchema
from curation.training_loop import check_cancel, write_progress
from curation.versions import registry
from curation.versions.manifest import Fusion, Manifest, Served, pair_counts, training_report
from index.dense import DenseConfig, DenseIndex, choose_config
from index.encoder import (
    EncoderConfig,
    document_text,
    embedding_dimension,
    encode_documents,
    load_encoder,
    separator_of,
)
from index.lexical import LexicalIndex
from index.search import FusionConfig, FusionMethod, Mode, Retriever

# (the new retriever, the dev set[, a trained cross-encoder's folder, the served fusion chosen without it]) -> the
# served fusion chosen on dev (see curation.learning.cross_encoder.stage.served_chooser)
ServedChooser = Callable[..., "Served | None"]


def retriever_for(model, documents: Sequence[Document], dense_config: DenseConfig = DenseConfig(),
                  fusion: FusionConfig = FusionConfig(), batch_size: int = 32, version: str = "",
                  lexical: LexicalIndex | None = None, progress_file: Path | None = None,
                  cancel_file: Path | None = None, build_dense=None) -> tuple[Retriever, dict[str, float]]:
    """Encode the corpus with ``model`` and build both indexes; returns the retriever and timings.

    With ``progress_file``, encoding reports documents done and an ETA (state ``indexing``);
    with ``cancel_file``, it stops between chunks when that file appears. ``build_dense``: makes the dense
    index from ``(vectors, ids, model, config)`` (default: FAISS, :meth:`index.dense.DenseIndex.build`).
    """
    timings = {}
    started = time.time()
    if progress_file is None and cancel_file is None:
        vectors = encode_documents(model, documents, batch_size=batch_size, progress=True)  # (n_docs, dim)
    else:
        chunks = []
        for begin in range(0, len(documents), ENCODE_CHUNK):
            check_cancel(cancel_file, f"indexing cancelled after {begin} of {len(documents)} abstracts")
            chunks.append(encode_documents(model, documents[begin : begin + ENCODE_CHUNK], batch_size=batch_size))
            done = min(begin + ENCODE_CHUNK, len(documents))
            elapsed = time.time() - started
            write_progress(progress_file, state="indexing", step=done, total=len(documents), loss=None,
                           eta_s=round(elapsed / done * (len(documents) - done), 1), epoch=None)
        vectors = np.concatenate(chunks) if chunks else encode_documents(model, [], batch_size=batch_size)
    timings["encode_corpus_s"] = time.time() - started
    started = time.time()
    dense = (build_dense or DenseIndex.build)(vectors, [d.pmid for d in documents], version or "model", dense_config)
    timings["dense_build_s"] = time.time() - started
    if lexical is None:
        started = time.time()
        lexical = LexicalIndex.build(documents)
        timings["lexical_build_s"] = time.time() - started
    return Retriever(lexical=lexical, dense=dense, encoder=model, fusion=fusion, version=version), timings


ENCODE_CHUNK = 256  # abstracts encoded between progress reports and cancel checks


def evaluate_retriever(retriever: Retriever, eval_set: EvalSet, mode: Mode | str, k: int = 50) -> dict[str, float]:
    run = retriever.run(dict(eval_set.queries), mode=mode, k=k)
    return evaluate(run, eval_set.qrels, eval_set.answer_key)


@dataclass(frozen=True)
class IndexChoice:
    """Which dense index a build makes and where it keeps it.

    Attributes:
        kind: auto (:func:`index.dense.choose_config`: from the corpus size and this machine's memory), flat,
            hnsw or ivfpq.
        backend: faiss (files in the version folder) or milvus (a collection; ``milvus_uri`` "" = a Milvus
            Lite file in the version folder, else the server, e.g. ``http://milvus:19530``).
        milvus_token: the server's token (never written to the manifest).
    """

    kind: str = "auto"
    backend: str = "faiss"
    milvus_uri: str = ""
    milvus_token: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        if self.kind not in ("auto", "flat", "hnsw", "ivfpq"):
            raise CurationError(f"index kind '{self.kind}' is not one of auto, flat, hnsw, ivfpq")
        if self.backend not in ("faiss", "milvus"):
            raise CurationError(f"index backend '{self.backend}' is not one of faiss, milvus")

    @classmethod
    def from_settings(cls, settings, kind: str = "", backend: str = "") -> IndexChoice:
        """The choice of the ``CURATION_INDEX_*`` / ``CURATION_MILVUS_*`` settings, ``kind`` / ``backend`` winning."""
        return cls(kind=kind or settings.index_kind, backend=backend or settings.index_backend,
                   milvus_uri=settings.milvus_uri, milvus_token=settings.milvus_token)

    def dense_builder(self, version: str, staged: Path, documents: Sequence[Document]):
        """``(vectors, ids, model, config) -> dense index`` for this backend."""
        if self.backend == "faiss":
            return DenseIndex.build
        from index.milvus import LITE_FILE, MilvusIndex
        from index.milvus_schema import collection_name

        uri = self.milvus_uri or str(staged / "dense" / LITE_FILE)
        texts = {d.pmid: f"{d.title}\n{d.abstract}" for d in documents}

        def build(vectors, ids, model, config):
            return MilvusIndex.build(vectors, ids, model, config, uri=uri, collection=collection_name(version),
                                     texts=[texts[i] for i in ids], token=self.milvus_token,
                                     replace_existing=True)

        return build


@dataclass(frozen=True)
class BuildRequest:
    """What to build.

    Attributes:
        schema: the relation schema trained for.
        base_model: encoder to start from ("" = offline MiniLM).
        version: the registry name of the new version.
        train: train the encoder (False: a zero-shot version of the base model).
        feedback: how curators' decisions become pairs.
        choose_fusion: pick the hybrid fusion on the dev split (else keep ``fusion``).
        cross_encoder: also train a cross-encoder re-ranker on the same pairs (None: none); it is served only
            when it helps on dev within the latency budget (:mod:`curation.learning.cross_encoder.stage`).
        dense: the dense index's parameters (None: chosen by ``index``).
        index: which index kind and backend (:class:`IndexChoice`).
        dev_pool_depth: with a dev split and more than one epoch, each epoch is evaluated on dev (the
            best epoch kept, early stopping after ``train_config.loop.patience`` epochs): dense scores over a
            fixed pool of BM25's top ``dev_pool_depth`` per dev query plus its relevant documents
            (:class:`~curation.learning.training.DevPool`), so an epoch's evaluation encodes the pool,
            not the corpus. 0: no per-epoch evaluation.
    """

    schema: RelationSchema
    base_model: str = ""
    version: str = ""
    train: bool = True
    train_config: TrainConfig = field(default_factory=TrainConfig)
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    dense: DenseConfig | None = None
    index: IndexChoice = field(default_factory=lambda: IndexChoice())
    fusion: FusionConfig = field(default_factory=FusionConfig)
    feedback: FeedbackConfig = field(default_factory=FeedbackConfig)
    choose_fusion: bool = True
    cross_encoder: CrossEncoderConfig | None = None
    dev_pool_depth: int = 100


# Fusions tried on dev when a version is built; the best on the primary metric is kept in its
# manifest. BM25's order (mix 0) comes first, so a tie keeps it (bench/edel.py: fusions that let
# a zero-shot encoder reorder fell below BM25; a trained one gains from mix 0.2–0.5).
FUSION_CANDIDATES: dict[str, FusionConfig] = {
    "bm25_order": FusionConfig(method=FusionMethod.RERANK, depth=100, mix=0.0),
    "rerank_mix0.2": FusionConfig(method=FusionMethod.RERANK, depth=50, mix=0.2),
    "rerank_mix0.5": FusionConfig(method=FusionMethod.RERANK, depth=50, mix=0.5),
    "weighted_0.3": FusionConfig(method=FusionMethod.WEIGHTED, weights=(0.7, 0.3)),
}


def choose_fusion(retriever: Retriever, dev: EvalSet, metric: str = "ndcg@10") -> tuple[str, dict[str, float]]:
    """The candidate fusion with the best dev ``metric`` (first listed wins ties); sets it on ``retriever``."""
    scores = {}
    for name, config in FUSION_CANDIDATES.items():
        retriever.fusion = config
        scores[name] = evaluate_retriever(retriever, dev, Mode.HYBRID).get(metric, 0.0)
    best = max(scores, key=lambda n: (round(scores[n], 6), -list(FUSION_CANDIDATES).index(n)))
    retriever.fusion = FUSION_CANDIDATES[best]
    return best, scores


@dataclass(frozen=True)
class BuildInputs:
    """What one build reads: the request, the corpus, the registry, its training and dev sets, the job's files.

    Attributes:
        request: what to build.
        documents: pmid → document, the corpus the version indexes.
        models_dir: the registry folder the version is published under.
        training: the training set (needed when ``request.train``).
        dev: the dev set the fusion and the served dense share are chosen on, and the metrics measured on.
        snapshot_digest: the snapshot's digest, recorded in the manifest.
        progress_file, cancel_file: the job protocol's files (progress written, cancel polled).
        served: chooses the concept search's dense share on ``dev`` (None: not chosen).
    """

    request: BuildRequest
    documents: Mapping[str, Document]
    models_dir: Path
    training: TrainingSet | None = None
    dev: EvalSet | None = None
    snapshot_digest: str = ""
    progress_file: Path | None = None
    cancel_file: Path | None = None
    served: ServedChooser | None = None


@dataclass(frozen=True)
class Indexed:
    """A build once trained and indexed, before its dev evaluation and publishing.

    Attributes:
        version: the registry name; staged: its staging folder (renamed into place when published).
        model: the encoder, trained or not; result: the training run (None: a zero-shot build).
        retriever: the new indexes over ``corpus``; timings: seconds per step so far.
        dense_config, why: the dense index's parameters and why they were chosen.
        corpus: the documents in index order; started: when the build began (``time.time()``).
    """

    version: str
    staged: Path
    model: object
    result: TrainResult | None
    retriever: Retriever
    timings: dict[str, float]
    dense_config: DenseConfig
    why: str
    corpus: list[Document]
    started: float


def build_version(
    request: BuildRequest,
    documents: Mapping[str, Document],
    models_dir: Path,
    training: TrainingSet | None = None,
    dev: EvalSet | None = None,
    snapshot_digest: str = "",
    progress_file: Path | None = None,
    cancel_file: Path | None = None,
    served: ServedChooser | None = None,
) -> registry.ModelVersion:
    """Train (when asked) and publish a model version with its indexes and dev metrics.

    The arguments are :class:`BuildInputs`' fields (read there); the build passes them on as one.
    ``served`` chooses the concept search's dense share on ``dev`` (its typed values) for the new
    retriever (:func:`curation.learning.served_fusion.choose_dense_share`); None: not chosen.

    Nothing is left behind on failure or cancellation: the staged folder is removed, and the
    version is published (renamed into place) only when complete.

    Raises:
        TrainingCancelled: ``cancel_file`` appeared (between training steps or indexing chunks).
        CurationError: the base model cannot be loaded, or the training set is empty.
        OSError: the disk is full or the models folder is not writable.
    """
    inputs = BuildInputs(request, documents, models_dir, training, dev, snapshot_digest, progress_file, cancel_file,
                         served)
    version = request.version or registry.new_version_name(request.schema.name, "edel" if request.train else "base")
    staged = registry.staging(models_dir, version)
    try:
        return _build(inputs, version, staged)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise


def _build(inputs: BuildInputs, version: str, staged: Path) -> registry.ModelVersion:
    """Train (when asked) and index; then :func:`_evaluate_and_publish`."""
    request, progress_file, cancel_file = inputs.request, inputs.progress_file, inputs.cancel_file
    started = time.time()
    write_progress(progress_file, state="loading", step=None, total=None, loss=None, eta_s=None, epoch=None)
    model = load_encoder(EncoderConfig(model=request.base_model, device=request.train_config.loop.device,
                                       max_seq_length=request.train_config.max_seq_length))
    corpus = list(inputs.documents.values())
    result: TrainResult | None = None
    lexical: LexicalIndex | None = None
    if request.train:
        if inputs.training is None:
            raise ValueError("a training build needs its training set")
        separator = separator_of(model)
        texts = {d.pmid: document_text(d, separator) for d in corpus}
        evaluate_epoch = None
        dev = inputs.dev
        if dev is not None and dev.queries and request.train_config.loop.epochs > 1 and request.dev_pool_depth:
            lexical = LexicalIndex.build(corpus)  # reused by retriever_for below
            pool = DevPool.from_first_stage(dev.queries, dev.qrels, lexical.search, inputs.documents,
                                            request.dev_pool_depth, dev.answer_key)
            evaluate_epoch = pool_evaluator(pool, inputs.documents) if pool.queries else None
        result = train(model, inputs.training.pairs, texts, request.train_config, progress_file=progress_file,
                       cancel_file=cancel_file, evaluate_epoch=evaluate_epoch)
    check_cancel(cancel_file, "cancelled after training, before indexing")
    write_progress(progress_file, state="indexing", step=0, total=len(corpus), loss=None, eta_s=None, epoch=None)
    model.save(str(staged / "model"))
    dense_config, why = (request.dense, "as asked") if request.dense is not None else \
        choose_config(len(corpus), embedding_dimension(model), kind=request.index.kind)
    retriever, timings = retriever_for(model, corpus, dense_config, request.fusion, version=version,
                                       lexical=lexical, progress_file=progress_file, cancel_file=cancel_file,
                                       build_dense=request.index.dense_builder(version, staged, corpus))
    try:
        return _evaluate_and_publish(inputs, Indexed(version, staged, model, result, retriever, timings, dense_config,
                                                     why, corpus, started))
    except BaseException:
        if retriever.dense.backend == "milvus" and request.index.milvus_uri:
            try:  # a server keeps collections after the staged folder is removed: drop the unfinished one
                retriever.dense.drop()
            except USER_ERRORS:
                pass
        retriever.dense.close()
        raise


def _evaluate_and_publish(inputs: BuildInputs, built: Indexed) -> registry.ModelVersion:
    """Save the indexes, choose the fusion and the served dense share on dev, train the cross-encoder stage when
    asked, and publish the version with its manifest."""
    request, dev, training, served = inputs.request, inputs.dev, inputs.training, inputs.served
    progress_file, cancel_file = inputs.progress_file, inputs.cancel_file
    retriever, staged = built.retriever, built.staged
    retriever.dense.save(staged / "dense")
    retriever.lexical.save(staged / "lexical")
    metrics: dict[str, dict[str, float]] = {}
    fusion_scores: dict[str, float] = {}
    fusion_name = ""
    served_choice = None
    if dev is not None and dev.queries:
        check_cancel(cancel_file, "cancelled before the dev evaluation")
        write_progress(progress_file, state="evaluating", step=None, total=None, loss=None, eta_s=None, epoch=None)
        if request.choose_fusion:
            fusion_name, fusion_scores = choose_fusion(retriever, dev)
        metrics = {mode.value: evaluate_retriever(retriever, dev, mode) for mode in (Mode.DENSE, Mode.HYBRID)}
        if served is not None and dev.values:
            write_progress(progress_file, state="choosing the served fusion", step=None, total=None, loss=None,
                           eta_s=None, epoch=None)
            served_choice = served(retriever, dev)
    cross_result = None
    if request.cross_encoder is not None and request.train and training is not None and training.pairs:
        check_cancel(cancel_file, "cancelled before training the cross-encoder")
        cross_result = rerank_stage.train_stage(training.pairs, inputs.documents, staged, request.cross_encoder,
                                                progress_file, cancel_file)
        if served is not None and served_choice is not None:
            served_choice = served(retriever, dev, staged / rerank_stage.FOLDER, served_choice)
    check_cancel(cancel_file, "cancelled before publishing")
    result, dense_config = built.result, built.dense_config
    manifest = Manifest(
        schema=request.schema.name,
        base_model=request.base_model or "all-MiniLM-L6-v2",
        trained=request.train,
        train_config={**request.train_config.recorded(),
                      **({"cross_encoder": {**request.cross_encoder.recorded(), "steps": cross_result.steps,
                                            "seconds": round(cross_result.seconds, 1), "device": cross_result.device,
                                            "examples": cross_result.examples}} if cross_result else {})},
        sampling={**asdict(request.sampling), "ablation": str(request.sampling.ablation)},
        dense={**asdict(dense_config), "backend": request.index.backend, "chosen": built.why,
               **({"milvus_uri": request.index.milvus_uri or "lite"} if request.index.backend == "milvus" else {})},
        fusion=Fusion.of(retriever.fusion),
        fusion_chosen_on_dev=fusion_name,
        fusion_dev_scores=fusion_scores,
        served=served_choice,
        feedback={**asdict(request.feedback), "conflicts": str(request.feedback.conflicts)},
        snapshot=inputs.snapshot_digest,
        training_pairs=len(training.pairs) if training else 0,
        training_classes=pair_counts(training.counts()) if training else {},
        training_sources=training.sources() if training else {},
        training_report=training_report(training.report()) if training else {},
        device=result.device if result else str(built.model.device),  # where it ran (untrained: where it encoded)
        train_seconds=round(result.seconds, 1) if result else 0.0,
        train_steps=result.steps if result else 0,
        loss_curve=tuple(result.losses) if result else (),
        timings_s={k: round(v, 2) for k, v in built.timings.items()},
        total_seconds=round(time.time() - built.started, 1),
        metrics=metrics.get("dense", {}),
        metrics_hybrid=metrics.get("hybrid", {}),
        documents=len(built.corpus),
        python=platform.python_version(),
    )
    retriever.dense.close()  # before publishing: a Milvus Lite file is then free for the app to open
    return registry.publish(inputs.models_dir, built.version, manifest)
