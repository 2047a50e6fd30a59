"""A cross-encoder re-ranker trained on EDEL's graded pairs (seed 004's second stage).

Data: the same :class:`~curation.learning.training.TrainingPair` s as EDEL (KB pairs from
:mod:`curation.learning.sampling`, curators' decisions from :mod:`curation.learning.feedback`), each
given a graded relevance label (:func:`graded_label`):

- **complete evidence** (a KB positive whose abstract mentions every entity, EDEL's margin-0 class, or a
  curator's "complete evidence") → 1.0;
- **partial evidence** (a curator's "partial evidence") → 0.5: the grades' ordinal code
  (``curation.grades.ORDINAL_GRADES``: not relevant 0 < partial 1 < complete 2) scaled to [0, 1], so
  the re-ranker learns the same order the curators grade in and the evaluation's graded gains use;
- **noisy KB positives** (the KB says the abstract is evidence, the text match misses an entity) →
  ``1 - margin / 2``, never below partial: EDEL's cosine-distance margin in [0, 2] read as how far from
  full relevance the pair may sit, so the classes keep EDEL's order;
- **negatives** (KB-matched hard negatives, BM25 hard negatives, curators' "not relevant", random) → 0.0.

Training: a sentence-transformers ``CrossEncoder`` (one output) with its ``BinaryCrossEntropyLoss`` (soft
labels), AdamW with linear warm-up and decay, CUDA with bf16 autocast when present. The library's
``CrossEncoderTrainer`` (and ``CrossEncoder.fit``, which wraps it) needs ``datasets`` and ``accelerate``,
which this project does not install, so it runs through the shared loop of :mod:`curation.training_loop`,
as :mod:`curation.learning.training` does: the same progress file and cancel file. The base model is the
offline MiniLM (a BERT encoder: the classification head starts untrained) or a hub cross-encoder such as
``ncbi/MedCPT-Cross-Encoder`` when it is cached or reachable.

Publishing: the model is saved into a temporary sibling of the caller's folder and renamed into place
last, so a crash or a cancel leaves no half-written folder.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from curation.errors import CurationError
from curation.files import fsync_path, write_atomic
from curation.learning.feedback import PARTIAL_CLASS
from curation.learning.training import TrainingPair
from curation.training_loop import (
    EpochBatches,
    LoopConfig,
    UsesLoop,
    check_cancel,
    fit,
    progress_writer,
    write_progress,
)

COMPLETE_LABEL = 1.0
PARTIAL_LABEL = 0.5  # ordinal code of "partial" (1) over that of "complete" (2)
NEGATIVE_LABEL = 0.0
RANDOM_CLASS = "random"
MANIFEST = "cross_encoder.json"
STATE = "training the cross-encoder"  # the progress file's state while the loop runs
MEDCPT = "ncbi/MedCPT-Cross-Encoder"  # a biomedical cross-encoder (PubMed search logs), used when reachable


class CrossEncoderUnavailable(CurationError):
    """The base model for the cross-encoder cannot be loaded here."""


#: The cross-encoder's loop: one epoch of 16 pairs per step at 5e-5 (higher than EDEL's 2e-5: the
#: classification head is new), a tenth of the steps warming up; minutes on a CPU.
CROSS_ENCODER_LOOP = LoopConfig(epochs=1, batch_size=16, learning_rate=5e-5, weight_decay=0.01, warmup_ratio=0.1)


@dataclass(frozen=True)
class CrossEncoderConfig(UsesLoop):
    """Cross-encoder training settings; the defaults finish in minutes on a CPU.

    Attributes:
        loop: the one loop's settings (epochs, batch size in (query, document) pairs, learning rate, warm-up,
            weight decay, seed, device, mixed precision, max steps): :data:`CROSS_ENCODER_LOOP` by default;
            change some with :meth:`~curation.training_loop.UsesLoop.with_loop`.
        base_model: "" for the offline MiniLM, a local folder, or a hub name (e.g. :data:`MEDCPT`).
        max_length: token limit of query + document.
        max_pairs: keep at most this many examples, whole queries at a time (0: all).
        random_negatives: extra random negatives per query, added on top of the training set's own.
    """

    loop: LoopConfig = CROSS_ENCODER_LOOP
    base_model: str = ""
    max_length: int = 256
    max_pairs: int = 0
    random_negatives: int = 0

    def __post_init__(self) -> None:
        if self.max_length < 1:
            raise CurationError(f"cross-encoder max_length must be at least 1, got {self.max_length}")
        if self.max_pairs < 0 or self.random_negatives < 0:
            raise CurationError("cross-encoder max_pairs and random_negatives must be 0 or more")


@dataclass(frozen=True)
class CrossEncoderExample:
    """One (query, document) pair with its graded label in [0, 1]."""

    query: str
    pmid: str
    label: float
    margin_class: str
    source: str = "kb"


@dataclass
class CrossEncoderResult:
    """What training did.

    Attributes:
        path: the published folder.
        steps: optimiser steps taken.
        seconds: training time (loading and saving excluded).
        device: where it trained.
        examples: training examples used.
        base_model: the model it started from.
        losses: the loss of every step.
    """

    path: str
    steps: int
    seconds: float
    device: str
    examples: int
    base_model: str
    losses: list[float] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


# --- data ------------------------------------------------------------------------------------


def graded_label(pair: TrainingPair) -> float:
    """The relevance label of an EDEL pair (see the module docstring for the grades and why)."""
    if not pair.positive:
        return NEGATIVE_LABEL
    if pair.margin_class == PARTIAL_CLASS:
        return PARTIAL_LABEL
    if pair.margin <= 0.0:
        return COMPLETE_LABEL
    return max(PARTIAL_LABEL, COMPLETE_LABEL - pair.margin / 2)


def cross_encoder_examples(
    pairs: Iterable[TrainingPair],
    corpus: Sequence[str] = (),
    config: CrossEncoderConfig = CrossEncoderConfig(),
) -> list[CrossEncoderExample]:
    """Graded examples from EDEL pairs, plus random negatives, capped at ``config.max_pairs``.

    Args:
        pairs: KB and decision pairs (a (query, document) seen twice keeps its first label).
        corpus: the pmids random negatives are drawn from (a query's positives are never drawn).
        config: ``random_negatives``, ``max_pairs`` and the loop's ``seed``.
    """
    rng = random.Random(config.loop.seed)
    by_query: dict[str, list[CrossEncoderExample]] = defaultdict(list)
    seen: set[tuple[str, str]] = set()
    positives: dict[str, set[str]] = defaultdict(set)
    for pair in pairs:
        if (pair.query, pair.pmid) in seen:
            continue
        seen.add((pair.query, pair.pmid))
        by_query[pair.query].append(CrossEncoderExample(pair.query, pair.pmid, graded_label(pair),
                                                        pair.margin_class, pair.source))
        if pair.positive:
            positives[pair.query].add(pair.pmid)
    pool = sorted(corpus)
    if config.random_negatives and pool:
        for query, examples in by_query.items():
            taken = {e.pmid for e in examples} | positives[query]
            for _ in range(config.random_negatives * 20):  # bounded: a tiny corpus may run out of candidates
                if sum(e.margin_class == RANDOM_CLASS and e.source == "cross-encoder" for e in examples) \
                        >= config.random_negatives:
                    break
                pmid = pool[rng.randrange(len(pool))]
                if pmid not in taken:
                    taken.add(pmid)
                    examples.append(CrossEncoderExample(query, pmid, NEGATIVE_LABEL, RANDOM_CLASS, "cross-encoder"))
    queries = sorted(by_query)
    if config.max_pairs:
        # Whole queries: a positive keeps the negatives it was sampled with, so the model learns to separate them.
        rng.shuffle(queries)
    out: list[CrossEncoderExample] = []
    for query in queries:
        if config.max_pairs and len(out) + len(by_query[query]) > config.max_pairs:
            if out:
                continue
        out.extend(by_query[query])
    return out


def label_counts(examples: Iterable[CrossEncoderExample]) -> dict[str, int]:
    """{label: count}, labels as text ("1.0", "0.5", ...): what the training JSON reports."""
    counts: dict[str, int] = defaultdict(int)
    for e in examples:
        counts[f"{e.label:.2f}"] += 1
    return dict(sorted(counts.items(), reverse=True))


# --- the model -------------------------------------------------------------------------------


def load_base_model(name: str = "", device: str = "", max_length: int = 256):
    """A ``CrossEncoder`` with one output to start training from.

    Args:
        name: "" for the offline MiniLM (its classification head is new), a local folder, or a hub name.
        device: "cuda", "cpu" or "" (CUDA when present).
        max_length: token limit of query + document.

    Raises:
        CrossEncoderUnavailable: the folder is missing, or the hub name is neither cached nor reachable.
    """
    from sentence_transformers import CrossEncoder

    from index.encoder import HUB_HOST, _hub_reachable, pick_device, resolve_model

    target = resolve_model(name)
    kwargs = {"num_labels": 1, "max_length": max_length, "device": pick_device(device)}
    if Path(target).exists():
        return _quiet_load(CrossEncoder, target, local_files_only=True, **kwargs)
    if target.startswith((".", "/")):
        raise CrossEncoderUnavailable(f"cross-encoder base model folder '{target}' does not exist")
    try:
        return _quiet_load(CrossEncoder, target, local_files_only=True, **kwargs)
    except Exception:  # not in the local cache: only then try the network
        reachable, reason = _hub_reachable()
        if not reachable:
            raise CrossEncoderUnavailable(
                f"cannot load the cross-encoder base model '{target}': it is not in the local model cache and "
                f"{HUB_HOST} is unreachable ({reason}). Copy the model folder here and give its path, or use the "
                "offline default (base_model '')."
            ) from None
    try:
        return _quiet_load(CrossEncoder, target, **kwargs)
    except Exception as exc:
        raise CrossEncoderUnavailable(f"cannot load the cross-encoder base model '{target}': {exc}") from None


def _quiet_load(cls, target: str, **kwargs):
    """Load without transformers' "newly initialised weights" warning: a new head is expected here."""
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        return cls(target, **kwargs)
    finally:
        hf_logging.set_verbosity(level)


# --- training --------------------------------------------------------------------------------


def train_cross_encoder(
    examples: Sequence[CrossEncoderExample],
    doc_texts: Mapping[str, str],
    out_dir: Path,
    config: CrossEncoderConfig = CrossEncoderConfig(),
    progress_file: Path | None = None,
    cancel_file: Path | None = None,
    model=None,
) -> CrossEncoderResult:
    """Train a cross-encoder on ``examples`` and publish it as ``out_dir``.

    Args:
        examples: graded examples (:func:`cross_encoder_examples`).
        doc_texts: pmid -> the text the model reads (title and abstract, as the re-ranker will be given).
        out_dir: the folder to publish; it must not exist yet (a published model is never overwritten).
        config: hyper-parameters and the base model.
        progress_file: JSON progress for the app (state, step, total, loss, eta_s, epoch).
        cancel_file: when this file appears, training stops with ``TrainingCancelled`` and nothing is published.
        model: a ``CrossEncoder`` to train instead of loading ``config.base_model`` (tests).

    Raises:
        CurationError: no examples, a document missing, or ``out_dir`` already exists.
        CrossEncoderUnavailable: the base model cannot be loaded.
        TrainingCancelled: the cancel file appeared.
    """
    out_dir = Path(out_dir)
    if not examples:
        raise CurationError("no cross-encoder training examples: the knowledge base has no records whose "
                            "abstracts are in the corpus")
    missing = sorted({e.pmid for e in examples} - set(doc_texts))
    if missing:
        raise CurationError(f"{len(missing)} cross-encoder training documents are not in the corpus, "
                            f"e.g. PMID {missing[0]}")
    if out_dir.exists():
        raise CurationError(f"cross-encoder folder '{out_dir}' already exists: publish into a new folder")
    import torch
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

    torch.manual_seed(config.loop.seed)
    if model is None:
        model = load_base_model(config.base_model, config.loop.device, config.max_length)
    device = str(model.device)
    loss_fn = BinaryCrossEntropyLoss(model)
    batches = EpochBatches(examples, config.loop.batch_size, random.Random(config.loop.seed))

    def loss_of(batch: list[CrossEncoderExample]) -> torch.Tensor:
        inputs = [[e.query for e in batch], [doc_texts[e.pmid] for e in batch]]
        labels = torch.tensor([e.label for e in batch], dtype=torch.float32, device=device)
        return loss_fn(inputs, labels)

    # no dev evaluator here: the stage is judged on dev after training (curation.learning.cross_encoder.stage)
    loop = config.loop.with_steps(len(batches))
    done = fit(model, batches, loss_of, loop, device=device, on_event=progress_writer(progress_file, STATE),
               cancel_file=cancel_file, label="cross-encoder training")
    result = CrossEncoderResult(str(out_dir), done.steps, done.seconds, device, len(examples),
                                config.base_model or "all-MiniLM-L6-v2", done.losses)
    check_cancel(cancel_file, "cross-encoder training cancelled before publishing")
    _publish(model, out_dir, {"base_model": result.base_model, "config": config.recorded(), "examples": len(examples),
                              "labels": label_counts(examples), "steps": result.steps, "device": device,
                              "seconds": round(result.seconds, 1), "created_at": time.time()})
    write_progress(progress_file, state="cross-encoder trained", step=result.steps, total=loop.total_steps,
                   loss=result.losses[-1] if result.losses else None, eta_s=0, epoch=config.loop.epochs)
    return result


def _publish(model, out_dir: Path, manifest: Mapping[str, object]) -> None:
    """Save into a temporary sibling folder, then rename it to ``out_dir`` (removed on any failure)."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = out_dir.with_name(f".{out_dir.name}.{os.getpid()}.tmp")
    shutil.rmtree(staging, ignore_errors=True)  # a leftover of a crashed run with the same pid
    try:
        model.save(str(staging))
        write_atomic(staging / MANIFEST, json.dumps(manifest, indent=2))
        fsync_path(staging)
        staging.rename(out_dir)
        fsync_path(out_dir.parent)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
