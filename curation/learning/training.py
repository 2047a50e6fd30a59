"""Training a shared query/document encoder with the MultiMargin loss.

One encoder embeds both queries and documents (title [SEP] abstract). AdamW at 2e-5 with a
linear warm-up then linear decay, as in EDEL's appendix B, run by the shared loop of
:mod:`curation.training_loop`. CUDA with bf16 autocast when present; on a CPU the defaults
(short sequences, one epoch, small batches) finish in minutes.
:func:`device_defaults` is the one place that says how long to train on which device.

With a dev evaluator (:class:`DevPool` + :func:`pool_evaluator`), every epoch ends with a dev
evaluation; the best epoch's weights are kept and training stops after ``patience`` epochs
without improvement.

Progress goes to tqdm in a terminal and to a JSON file (step, total, loss, eta) that the app
polls; a cancel file next to it stops training between steps.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from curation.errors import CurationError
from curation.training_loop import EpochBatches, LoopConfig, UsesLoop, fit, progress_writer, write_progress

if TYPE_CHECKING:
    import torch

    from index.documents import TextDocument
    from index.hits import Ranking


@dataclass(frozen=True)
class TrainingPair:
    """One (query, document) pair with its label and margin.

    Attributes:
        query: query text from the schema's template.
        pmid: the document.
        positive: True to pull within the margin, False to push beyond it.
        margin: the pair's margin (its class's).
        margin_class: class name ("pos-1", "neg-3", "bm25", "random", "decision-partial", ...).
        source: where the pair came from ("kb", "decision", ...).
    """

    query: str
    pmid: str
    positive: bool
    margin: float
    margin_class: str
    source: str = "kb"


#: The EDEL encoder's loop: AdamW at 2e-5 with a tenth of the steps warming up (EDEL's appendix B), one epoch
#: of 16 pairs per step by default (minutes on a CPU), early stopping after 2 epochs without a better dev score.
ENCODER_LOOP = LoopConfig(epochs=1, batch_size=16, learning_rate=2e-5, weight_decay=0.01, warmup_ratio=0.1,
                          patience=2)


@dataclass(frozen=True)
class TrainConfig(UsesLoop):
    """The EDEL encoder's training settings. CPU defaults are small enough to finish in minutes.

    Attributes:
        loop: the one loop's settings (epochs, batch size in pairs, learning rate, warm-up, weight decay, seed,
            device, mixed precision, max steps, patience, the dev metric that ranks epochs): :data:`ENCODER_LOOP`
            by default; change some with :meth:`~curation.training_loop.UsesLoop.with_loop`.
        max_seq_length: token limit for documents and queries.
    """

    loop: LoopConfig = ENCODER_LOOP
    max_seq_length: int = 256


@dataclass(frozen=True)
class DeviceDefaults:
    """How long and how wide training runs on a device when nobody said otherwise.

    Attributes:
        epochs: passes over the pairs. On the GPU enough for hard negatives to pay off: on an H100
            (issue 16) EDEL beat random negatives only with longer training (5 epochs: NDCG@10 0.603 vs
            0.622; 10 epochs: 0.651 vs 0.637). Early stopping on dev cuts it short when dev stops improving.
        batch_size: pairs per step.
        max_seq_length: token limit.
    """

    epochs: int
    batch_size: int
    max_seq_length: int


GPU_DEFAULTS = DeviceDefaults(epochs=10, batch_size=32, max_seq_length=256)
# One short epoch: a retrain on a 2-core CPU must finish in minutes (and one epoch needs no dev pass).
CPU_DEFAULTS = DeviceDefaults(epochs=1, batch_size=16, max_seq_length=128)


def device_defaults(cuda: bool) -> DeviceDefaults:
    """The training defaults for a CUDA device (``cuda``) or a CPU."""
    return GPU_DEFAULTS if cuda else CPU_DEFAULTS


@dataclass
class TrainResult:
    """What a training run did.

    Attributes:
        steps: optimiser steps taken.
        seconds: wall time, dev evaluations included.
        device: where it ran.
        losses: the loss of every step.
        epoch_metrics: with a dev evaluator, its metrics after each epoch run (the per-epoch dev scores).
        best_epoch: the epoch (from 1) whose weights the model holds at the end; 0 without a dev evaluator.
        epochs_run: epochs trained (fewer than asked when stopped early or by ``max_steps``).
        stopped_early: True when ``patience`` epochs in a row brought no better dev score.
    """

    steps: int
    seconds: float
    device: str
    losses: list[float] = field(default_factory=list)
    epoch_metrics: list[dict[str, float]] = field(default_factory=list)
    best_epoch: int = 0
    epochs_run: int = 0
    stopped_early: bool = False

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def train(
    model,
    pairs: Sequence[TrainingPair],
    doc_texts: dict[str, str],
    config: TrainConfig = TrainConfig(),
    progress_file: Path | None = None,
    cancel_file: Path | None = None,
    evaluate_epoch: Callable[[object], dict[str, float]] | None = None,
) -> TrainResult:
    """Fine-tune ``model`` (a SentenceTransformer) in place on ``pairs``.

    Args:
        model: the encoder; it is modified.
        pairs: training pairs; their documents must be in ``doc_texts``.
        doc_texts: pmid → the text to encode (title [SEP] abstract).
        config: hyper-parameters.
        progress_file: JSON progress for the app (step, total, loss, eta_s, epoch).
        cancel_file: when this file appears, training stops with TrainingCancelled.
        evaluate_epoch: called after each epoch with the model (in eval mode); returns metrics (dev split),
            e.g. :func:`pool_evaluator`. With it, the weights of the best epoch by ``config.loop.primary_metric``
            are kept (a copy in CPU memory) and training stops after ``config.loop.patience`` epochs without a
            better score. A metric missing from the result counts as no improvement.

    Raises:
        CurationError: no pairs, or a pair's document is missing.
        TrainingCancelled: the cancel file appeared.
    """
    if not pairs:
        raise CurationError("no training pairs: the knowledge base has no records whose abstracts are in the corpus")
    missing = sorted({p.pmid for p in pairs} - set(doc_texts))
    if missing:
        raise CurationError(f"{len(missing)} training documents are not in the corpus, e.g. PMID {missing[0]}")
    import torch  # imported when training starts: the app imports this module for its records only

    from curation.learning.loss import MultiMarginContrastiveLoss

    torch.manual_seed(config.loop.seed)
    device = config.loop.device or ("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device)
    model.max_seq_length = config.max_seq_length
    loss_fn = MultiMarginContrastiveLoss(model)
    tokenize = getattr(model, "preprocess", None) or model.tokenize  # renamed in sentence-transformers 6
    batches = EpochBatches(pairs, config.loop.batch_size, random.Random(config.loop.seed))

    def loss_of(batch: list[TrainingPair]) -> torch.Tensor:
        features = [
            _to(tokenize([p.query for p in batch]), device),
            _to(tokenize([doc_texts[p.pmid] for p in batch]), device),
        ]
        labels = torch.tensor([[float(p.positive), p.margin] for p in batch], device=device)
        return loss_fn(features, labels)

    loop = config.loop.with_steps(len(batches))
    done = fit(model, batches, loss_of, loop, device=device, evaluate_epoch=evaluate_epoch,
               on_event=progress_writer(progress_file, "running"), cancel_file=cancel_file, bar=True)
    write_progress(progress_file, state="trained", step=done.steps, total=loop.total_steps,
                   loss=done.losses[-1] if done.losses else None, eta_s=0, epoch=done.epochs_run)
    return TrainResult(steps=done.steps, seconds=done.seconds, device=device, losses=done.losses,
                       epoch_metrics=done.epoch_metrics, best_epoch=done.best_epoch, epochs_run=done.epochs_run,
                       stopped_early=done.stopped_early)


# --- per-epoch dev evaluation on a fixed candidate pool ------------------------------------------


@dataclass(frozen=True)
class DevPool:
    """Dev queries, each with a fixed set of candidate documents that every epoch re-ranks.

    Scoring dev over the whole corpus would mean encoding the corpus after every epoch, which costs
    as much as the final indexing each time; the pool is the first stage's top ``depth`` per query
    plus its relevant documents, so an epoch's evaluation encodes only the pool's documents. The
    relevant documents are always in the pool, so pool scores run higher than full-corpus ones:
    they rank epochs against each other, they are not the version's dev metrics.

    Attributes:
        queries: query id → text.
        qrels: query id → relevant doc id → grade (only documents in the corpus).
        candidates: query id → candidate doc ids, in first-stage order, relevant ones appended.
        answer_key: EntityRecall's key (see :mod:`curation.learning.evaluation`), or None.
    """

    queries: Mapping[str, str]
    qrels: Mapping[str, Mapping[str, int]]
    candidates: Mapping[str, tuple[str, ...]]
    answer_key: object | None = None

    @classmethod
    def from_first_stage(
        cls,
        queries: Mapping[str, str],
        qrels: Mapping[str, Mapping[str, int]],
        search: Callable[[Sequence[str], int], list[Ranking]],
        corpus: Collection[str],
        depth: int = 100,
        answer_key: object | None = None,
    ) -> DevPool:
        """The pool of ``search`` (e.g. ``LexicalIndex.search``)'s top ``depth`` plus each query's relevant documents.

        Queries without a relevant document in ``corpus`` are left out: they cannot rank epochs.
        """
        judged = {q: {d: g for d, g in qrels.get(q, {}).items() if g > 0 and d in corpus} for q in queries}
        qids = [q for q in queries if judged[q]]
        rankings = search([queries[q] for q in qids], depth) if qids else []
        candidates = {}
        for qid, ranking in zip(qids, rankings, strict=True):
            first = [doc for doc, _ in ranking]
            candidates[qid] = tuple(dict.fromkeys(first + sorted(judged[qid])))
        return cls({q: queries[q] for q in qids}, {q: judged[q] for q in qids}, candidates, answer_key)

    def documents(self) -> list[str]:
        """Every candidate once, sorted."""
        return sorted({d for docs in self.candidates.values() for d in docs})


def pool_evaluator(
    pool: DevPool, documents: Mapping[str, TextDocument], batch_size: int = 64
) -> Callable[[object], dict[str, float]]:
    """An ``evaluate_epoch`` for :func:`train`: dense scores of the pool, then NDCG / MAP / EntityRecall.

    Each call encodes the pool's documents and queries with the model as it is (as the served dense
    retriever would: :func:`index.encoder.encode_documents`, unit vectors, cosine) and scores every
    query's candidates only.
    """
    pmids = pool.documents()
    docs = [documents[p] for p in pmids]
    qids = list(pool.queries)

    def evaluate_epoch(model) -> dict[str, float]:
        from curation.learning.evaluation import evaluate
        from index.encoder import encode_documents, encode_queries

        row = {p: i for i, p in enumerate(pmids)}
        doc_vectors = encode_documents(model, docs, batch_size=batch_size)  # (n_pool, dim)
        query_vectors = encode_queries(model, [pool.queries[q] for q in qids], batch_size=batch_size)  # (n_q, dim)
        run = {}
        for qid, vector in zip(qids, query_vectors, strict=True):
            candidates = pool.candidates[qid]
            scores = doc_vectors[[row[d] for d in candidates]] @ vector  # (n_candidates,)
            run[qid] = {d: float(s) for d, s in zip(candidates, scores, strict=True)}
        return evaluate(run, pool.qrels, pool.answer_key)

    return evaluate_epoch


def _to(features: dict[str, torch.Tensor], device: str) -> dict[str, torch.Tensor]:
    return {k: v.to(device) if hasattr(v, "to") else v for k, v in features.items()}
