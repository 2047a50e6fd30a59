"""Training a shared query/document encoder with the MultiMargin loss.

One encoder embeds both queries and documents (title [SEP] abstract). AdamW at 2e-5 with a
linear warm-up then linear decay, as in EDEL's appendix B. CUDA with mixed precision when
present; on a CPU the defaults (short sequences, one epoch, small batches) finish in minutes.

Progress goes to tqdm in a terminal and to a JSON file (step, total, loss, eta) that the app
polls; a cancel file next to it stops training between steps.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tqdm import tqdm

from curation.errors import CurationError
from curation.files import write_atomic

if TYPE_CHECKING:
    import torch


class TrainingCancelled(CurationError):
    """Training was stopped by a cancel request."""


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


@dataclass(frozen=True)
class TrainConfig:
    """Training hyper-parameters. CPU defaults are small enough to finish in minutes.

    Attributes:
        epochs: passes over the training pairs.
        batch_size: pairs per step.
        learning_rate: AdamW peak learning rate.
        warmup_ratio: share of steps spent warming up.
        max_seq_length: token limit for documents and queries.
        weight_decay: AdamW weight decay.
        seed: shuffling and initialisation seed.
        device: "cuda", "cpu" or "" (CUDA when present).
        mixed_precision: use autocast on CUDA.
        max_steps: stop after this many steps (0: no limit), for smoke runs.
    """

    epochs: int = 1
    batch_size: int = 16
    learning_rate: float = 2e-5
    warmup_ratio: float = 0.1
    max_seq_length: int = 256
    weight_decay: float = 0.01
    seed: int = 13
    device: str = ""
    mixed_precision: bool = True
    max_steps: int = 0


@dataclass
class TrainResult:
    steps: int
    seconds: float
    device: str
    losses: list[float] = field(default_factory=list)
    epoch_metrics: list[dict[str, float]] = field(default_factory=list)
    best_epoch: int = 0

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def check_cancel(cancel_file: Path | None, message: str) -> None:
    """Raise :class:`TrainingCancelled` with ``message`` when the cancel file has appeared."""
    if cancel_file is not None and cancel_file.exists():
        raise TrainingCancelled(message)


def write_progress(path: Path | None, **values: object) -> None:
    """Atomically replace the progress file with ``values`` (+ the time)."""
    if path is None:
        return
    values["updated_at"] = time.time()
    write_atomic(path, json.dumps(values))


def _batches(pairs: Sequence[TrainingPair], size: int, rng: random.Random) -> list[list[TrainingPair]]:
    order = list(pairs)
    rng.shuffle(order)
    return [order[i : i + size] for i in range(0, len(order), size)]


def train(
    model,
    pairs: Sequence[TrainingPair],
    doc_texts: dict[str, str],
    config: TrainConfig = TrainConfig(),
    progress_file: Path | None = None,
    cancel_file: Path | None = None,
    evaluate_epoch: Callable[[object], dict[str, float]] | None = None,
    primary_metric: str = "ndcg@10",
) -> TrainResult:
    """Fine-tune ``model`` (a SentenceTransformer) in place on ``pairs``.

    Args:
        model: the encoder; it is modified.
        pairs: training pairs; their documents must be in ``doc_texts``.
        doc_texts: pmid → the text to encode (title [SEP] abstract).
        config: hyper-parameters.
        progress_file: JSON progress for the app (step, total, loss, eta_s, epoch).
        cancel_file: when this file appears, training stops with TrainingCancelled.
        evaluate_epoch: called after each epoch with the model; returns metrics (dev split).
            With it, the weights of the best epoch by ``primary_metric`` are kept.

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

    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    device = config.device or ("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device)
    model.max_seq_length = config.max_seq_length
    loss_fn = MultiMarginContrastiveLoss(model)
    tokenize = getattr(model, "preprocess", None) or model.tokenize  # renamed in sentence-transformers 6
    optimiser = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    steps_per_epoch = math.ceil(len(pairs) / config.batch_size)
    total = steps_per_epoch * config.epochs
    if config.max_steps:
        total = min(total, config.max_steps)
    warmup = max(1, int(total * config.warmup_ratio))

    def schedule(step: int) -> float:  # linear warm-up, then linear decay to 0
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total - step) / max(1, total - warmup))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimiser, schedule)
    use_amp = device.startswith("cuda") and config.mixed_precision
    amp_dtype = torch.bfloat16 if use_amp and torch.cuda.is_bf16_supported() else torch.float16
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp and amp_dtype == torch.float16)
    result = TrainResult(steps=0, seconds=0.0, device=device)
    best_score, best_state = -math.inf, None
    started = time.time()
    bar = tqdm(total=total, desc="training", unit="step", disable=None)
    write_progress(progress_file, state="running", step=0, total=total, loss=None, eta_s=None, epoch=0)
    model.train()
    try:
        for epoch in range(config.epochs):
            for batch in _batches(pairs, config.batch_size, rng):
                if result.steps >= total:
                    break
                check_cancel(cancel_file, f"training cancelled at step {result.steps} of {total}")
                features = [
                    _to(tokenize([p.query for p in batch]), device),
                    _to(tokenize([doc_texts[p.pmid] for p in batch]), device),
                ]
                labels = torch.tensor([[float(p.positive), p.margin] for p in batch], device=device)
                with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=use_amp):
                    loss = loss_fn(features, labels)
                optimiser.zero_grad(set_to_none=True)
                scaler.scale(loss).backward()
                scaler.unscale_(optimiser)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimiser)
                scaler.update()
                scheduler.step()
                result.steps += 1
                result.losses.append(float(loss.detach()))
                elapsed = time.time() - started
                eta = elapsed / result.steps * (total - result.steps)
                bar.update(1)
                bar.set_postfix(loss=f"{result.losses[-1]:.4f}")
                if result.steps % 5 == 0 or result.steps == total:
                    write_progress(progress_file, state="running", step=result.steps, total=total,
                                   loss=result.losses[-1], eta_s=round(eta, 1), epoch=epoch + 1)
            if evaluate_epoch is not None:
                model.eval()
                metrics = evaluate_epoch(model)
                model.train()
                result.epoch_metrics.append(metrics)
                if metrics.get(primary_metric, -math.inf) > best_score:
                    best_score = metrics[primary_metric]
                    result.best_epoch = epoch + 1
                    best_state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
            if result.steps >= total:
                break
    finally:
        bar.close()
        model.eval()
    if best_state is not None and result.best_epoch != len(result.epoch_metrics):
        model.load_state_dict(best_state)
    result.seconds = time.time() - started
    write_progress(progress_file, state="trained", step=result.steps, total=total,
                   loss=result.losses[-1] if result.losses else None, eta_s=0, epoch=config.epochs)
    return result


def _to(features: dict[str, torch.Tensor], device: str) -> dict[str, torch.Tensor]:
    return {k: v.to(device) if hasattr(v, "to") else v for k, v in features.items()}
