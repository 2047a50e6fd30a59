"""The one training loop every model we fine-tune runs through: AdamW, a linear warm-up and decay, early stopping.

The pieces are the maintained ones: ``torch.optim.AdamW`` and transformers'
``get_linear_schedule_with_warmup`` (the schedule sentence-transformers' own ``fit`` used: the learning
rate rises from 0 over the warm-up steps, then falls linearly to 0 at the last step). Around them the
loop adds what every caller here needs: gradient clipping, mixed precision on CUDA (bf16 where the GPU
has it, else fp16 with a gradient scaler), a cancel file polled between steps, progress events, and,
with a dev evaluator, the best epoch's weights kept and training stopped after ``patience`` epochs
without a better dev score.

The callers (:mod:`curation.learning.training` for the EDEL encoder, :mod:`curation.learning.cross_encoder.training`,
:mod:`curation.learning.linker.name_encoder`, :mod:`curation.entities.transformer_recogniser`) keep only what is
theirs: the batches, the loss of a batch, and how they report. Their settings hold one :class:`LoopConfig`
(:class:`UsesLoop`) for epochs, batch size, learning rate, warm-up, patience, device and seed, beside their
own fields. The progress file and cancel file are the background job protocol's
(:mod:`curation.jobs`): the app polls the one and writes the other.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Generic, NamedTuple, TypeVar

from curation.errors import CurationError
from curation.files import write_atomic

if TYPE_CHECKING:
    import torch

Batch = TypeVar("Batch")
Item = TypeVar("Item")


class TrainingCancelled(CurationError):
    """Training was stopped by a cancel request."""


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


@dataclass(frozen=True)
class LoopConfig:
    """How long and how fast the loop trains: the settings every learner we fine-tune shares.

    A learner's settings hold one (``loop``) beside their own fields (:class:`UsesLoop`), with that learner's
    defaults; the learner sets ``steps_per_epoch`` from its batches (:meth:`with_steps`) before calling :func:`fit`.

    Attributes:
        epochs: passes over the batches.
        batch_size: items per batch (what an item is, a pair or a window, is the learner's).
        learning_rate: AdamW's peak learning rate.
        weight_decay: AdamW's weight decay.
        warmup_ratio: share of the steps over which the learning rate rises from 0 to its peak.
        max_steps: stop after this many steps (0: no cap).
        patience: with a dev evaluator, stop after this many epochs without a better dev score
            (0: never stop early; the best epoch is kept either way).
        mixed_precision: autocast on CUDA (ignored on a CPU).
        max_grad_norm: gradients are clipped to this norm before each step.
        primary_metric: the dev metric that ranks epochs (a metric missing from a result counts as no better).
        device: "cuda", "cuda:1", "cpu", or "" (CUDA when present); the learner resolves it and moves its model.
        seed: shuffling and initialisation seed.
        steps_per_epoch: batches in one pass, known once the data is batched (0 in a learner's settings).
    """

    epochs: int = 1
    batch_size: int = 16
    learning_rate: float = 2e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1
    max_steps: int = 0
    patience: int = 0
    mixed_precision: bool = True
    max_grad_norm: float = 1.0
    primary_metric: str = "ndcg@10"
    device: str = ""
    seed: int = 13
    steps_per_epoch: int = 0

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.batch_size < 1 or self.patience < 0 or self.max_steps < 0 \
                or self.steps_per_epoch < 0:
            raise CurationError(f"training needs epochs ≥ 1, batch size ≥ 1, patience ≥ 0 and max steps ≥ 0; got "
                                f"{self.epochs}, {self.batch_size}, {self.patience}, {self.max_steps}")

    def with_steps(self, steps_per_epoch: int) -> LoopConfig:
        """This config for data cut into ``steps_per_epoch`` batches per pass."""
        return replace(self, steps_per_epoch=steps_per_epoch)

    @property
    def total_steps(self) -> int:
        """Optimiser steps the schedule spans: every epoch's, capped at ``max_steps``."""
        total = self.steps_per_epoch * self.epochs
        return min(total, self.max_steps) if self.max_steps else total

    @property
    def warmup_steps(self) -> int:
        """Steps over which the learning rate rises from 0 to its peak (``warmup_ratio`` of them, rounded down)."""
        return int(self.total_steps * self.warmup_ratio)


Settings = TypeVar("Settings", bound="UsesLoop")


class UsesLoop:
    """A learner's settings: the one loop's (``loop``, a :class:`LoopConfig`) beside the learner's own fields.

    Mixed into each learner's frozen settings dataclass, so epochs, batch size, learning rate, warm-up,
    patience, device and seed are read under one name everywhere (``settings.loop.epochs``).
    """

    loop: LoopConfig

    def with_loop(self: Settings, **changes: object) -> Settings:
        """A copy with the loop's ``changes`` (the learner's own loop defaults kept for the rest)."""
        return replace(self, loop=replace(self.loop, **changes))  # type: ignore[type-var]

    def recorded(self) -> dict[str, object]:
        """The settings as a manifest records them: the learner's fields and the loop's, in one flat mapping
        (the keys manifests have always had; ``steps_per_epoch`` is the data's, not a setting)."""
        own = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "loop"}  # type: ignore[arg-type]
        loop = {f.name: getattr(self.loop, f.name) for f in fields(self.loop) if f.name != "steps_per_epoch"}
        return {**own, **loop}


class LoopEvent(NamedTuple):
    """What the loop reports: "start" (before the first step), "step" (after each) or "evaluate" (before a dev pass).

    Attributes:
        phase: "start", "step" or "evaluate".
        step: optimiser steps taken so far.
        total: steps the run will take at most.
        epoch: the epoch under way (from 1; 0 at the start).
        loss: the last step's loss (None before the first).
        elapsed_s: seconds since the start.
    """

    phase: str
    step: int
    total: int
    epoch: int
    loss: float | None
    elapsed_s: float


@dataclass
class LoopResult:
    """What the loop did.

    Attributes:
        steps: optimiser steps taken.
        seconds: wall time, dev evaluations included.
        losses: the loss of every step.
        epoch_metrics: with a dev evaluator, its metrics after each epoch run.
        best_epoch: the epoch (from 1) whose weights the model holds at the end; 0 without a dev evaluator.
        epochs_run: epochs trained (fewer than asked when stopped early or by ``max_steps``).
        stopped_early: True when ``patience`` epochs in a row brought no better dev score.
    """

    steps: int = 0
    seconds: float = 0.0
    losses: list[float] = field(default_factory=list)
    epoch_metrics: list[dict[str, float]] = field(default_factory=list)
    best_epoch: int = 0
    epochs_run: int = 0
    stopped_early: bool = False


def progress_writer(path: Path | None, state: str) -> Callable[[LoopEvent], None]:
    """An ``on_event`` for :func:`fit` that keeps the job's progress file (every 5th step and the last)."""

    def on_event(event: LoopEvent) -> None:
        if event.phase == "start":
            write_progress(path, state=state, step=0, total=event.total, loss=None, eta_s=None, epoch=0)
        elif event.phase == "evaluate":
            write_progress(path, state="evaluating epoch", step=event.step, total=event.total, loss=event.loss,
                           eta_s=None, epoch=event.epoch)
        elif event.step % 5 == 0 or event.step == event.total:
            eta = event.elapsed_s / event.step * (event.total - event.step)
            write_progress(path, state=state, step=event.step, total=event.total, loss=event.loss,
                           eta_s=round(eta, 1), epoch=event.epoch)

    return on_event


def fit(
    model: torch.nn.Module,
    batches: Callable[[int], Iterable[Batch]],
    loss_of: Callable[[Batch], torch.Tensor],
    config: LoopConfig,
    *,
    device: str,
    parameters: Iterable[torch.nn.Parameter] | None = None,
    evaluate_epoch: Callable[[torch.nn.Module], dict[str, float]] | None = None,
    on_event: Callable[[LoopEvent], None] | None = None,
    cancel_file: Path | None = None,
    label: str = "training",
    bar: bool = False,
) -> LoopResult:
    """Train ``model`` in place: AdamW under a linear warm-up and decay, one optimiser step per batch.

    Args:
        model: the model (already on ``device``); it is in train mode during the loop and eval mode after.
        batches: epoch number (from 0) → that epoch's batches, asked for at the start of each epoch (so a
            caller that shuffles does so once per epoch, in order).
        loss_of: a batch → its loss (a scalar tensor with a graph); run under autocast on CUDA.
        config: epochs, steps (``steps_per_epoch`` set: :meth:`LoopConfig.with_steps`), learning rate, warm-up,
            patience; its ``device`` and ``seed`` are the caller's to apply (``device`` here is where the model is).
        device: where the model is ("cuda", "cuda:1", "cpu"): mixed precision only on CUDA.
        parameters: the parameters to optimise (None: all of the model's).
        evaluate_epoch: called after each epoch with the model in eval mode; returns dev metrics. With it,
            the weights of the best epoch by ``config.primary_metric`` are kept (a copy in CPU memory) and
            training stops after ``config.patience`` epochs without a better score.
        on_event: told of the start, each step and each dev evaluation (e.g. :func:`progress_writer`).
        cancel_file: when this file appears, the loop stops with :class:`TrainingCancelled`.
        label: names the run in cancel messages ("training cancelled at step 3 of 40").
        bar: show a tqdm progress bar (in a terminal only).

    Raises:
        CurationError: ``config.steps_per_epoch`` is 0 (the learner did not set it from its batches).
        TrainingCancelled: the cancel file appeared.
    """
    if config.steps_per_epoch < 1:
        raise CurationError(f"{label}: the loop's steps_per_epoch is 0; set it from the batches "
                            "(LoopConfig.with_steps) before training")
    import torch
    from tqdm import tqdm
    from transformers import get_linear_schedule_with_warmup

    trainable = list(model.parameters() if parameters is None else parameters)
    optimiser = torch.optim.AdamW(trainable, lr=config.learning_rate, weight_decay=config.weight_decay)
    total = config.total_steps
    scheduler = get_linear_schedule_with_warmup(optimiser, config.warmup_steps, total)
    use_amp = device.startswith("cuda") and config.mixed_precision
    amp_dtype = torch.bfloat16 if use_amp and torch.cuda.is_bf16_supported() else torch.float16
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp and amp_dtype == torch.float16)
    result = LoopResult()
    best_score, best_state = -math.inf, None
    since_best = 0  # epochs since the dev score last improved
    started = time.time()

    def tell(phase: str, epoch: int) -> None:
        if on_event is not None:
            on_event(LoopEvent(phase, result.steps, total, epoch, result.losses[-1] if result.losses else None,
                               time.time() - started))

    progress_bar = tqdm(total=total, desc=label, unit="step", disable=None if bar else True)
    tell("start", 0)
    model.train()
    try:
        for epoch in range(config.epochs):
            for batch in batches(epoch):
                if result.steps >= total:
                    break
                check_cancel(cancel_file, f"{label} cancelled at step {result.steps} of {total}")
                with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=use_amp):
                    loss = loss_of(batch)
                optimiser.zero_grad(set_to_none=True)
                scaler.scale(loss).backward()
                scaler.unscale_(optimiser)
                torch.nn.utils.clip_grad_norm_(trainable, config.max_grad_norm)
                scaler.step(optimiser)
                scaler.update()
                scheduler.step()
                result.steps += 1
                result.losses.append(float(loss.detach()))
                progress_bar.update(1)
                progress_bar.set_postfix(loss=f"{result.losses[-1]:.4f}")
                tell("step", epoch + 1)
            result.epochs_run = epoch + 1
            if evaluate_epoch is not None:
                check_cancel(cancel_file, f"{label} cancelled before the dev evaluation of epoch {epoch + 1}")
                tell("evaluate", epoch + 1)
                model.eval()
                metrics = dict(evaluate_epoch(model))
                model.train()
                result.epoch_metrics.append(metrics)
                if metrics.get(config.primary_metric, -math.inf) > best_score:
                    best_score, since_best = metrics[config.primary_metric], 0
                    result.best_epoch = epoch + 1
                    # a CPU copy: GPU memory stays free for training (MiniLM: ~90 MB)
                    best_state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
                else:
                    since_best += 1
                if config.patience and since_best >= config.patience and epoch + 1 < config.epochs:
                    result.stopped_early = True
                    break
            if result.steps >= total:
                break
    finally:
        progress_bar.close()
        model.eval()
    if best_state is not None and result.best_epoch != len(result.epoch_metrics):
        model.load_state_dict(best_state)
    result.seconds = time.time() - started
    return result


class EpochBatches(Generic[Item]):
    """Per epoch, the items in a fresh shuffled order cut into batches (``batches`` for :func:`fit`).

    Args:
        items: what to batch (copied).
        size: items per batch.
        rng: the shuffling generator (``random.Random(seed)``); each epoch draws its order from it in turn.
    """

    def __init__(self, items: Iterable[Item], size: int, rng: random.Random) -> None:
        self.items = list(items)
        self.size = size
        self.rng = rng

    def __len__(self) -> int:
        """Batches per epoch."""
        return math.ceil(len(self.items) / self.size)

    def __call__(self, epoch: int) -> list[list[Item]]:
        order = list(self.items)
        self.rng.shuffle(order)
        return [order[i : i + self.size] for i in range(0, len(order), self.size)]
