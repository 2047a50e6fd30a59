"""The shared training loop: the library's warm-up schedule, the step cap, the parameters it may move,
the progress file and the cancel file."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from torch import nn

from curation.errors import CurationError
from curation.training_loop import (
    EpochBatches,
    LoopConfig,
    LoopEvent,
    TrainingCancelled,
    fit,
    progress_writer,
)


class Line(nn.Module):
    """y = w·x + b, fitted to y = 2x."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.linear = nn.Linear(1, 1)


def _loss_of(model: Line):
    def loss_of(batch: list[float]) -> torch.Tensor:
        x = torch.tensor(batch).unsqueeze(1)  # (batch, 1)
        return ((model.linear(x) - 2 * x) ** 2).mean()

    return loss_of


POINTS = [0.5, 1.0, 1.5, 2.0, -1.0, -0.5]


def _config(**changes) -> LoopConfig:
    values = {"epochs": 3, "steps_per_epoch": 3, "learning_rate": 0.1, "weight_decay": 0.0, "warmup_ratio": 0.0}
    return LoopConfig(**{**values, **changes})


def test_the_loop_fits_and_the_schedule_warms_up_from_zero():
    model = Line()
    before = model.linear.weight.detach().clone()
    seen: list[LoopEvent] = []
    # 9 steps, 4 of them warming up: the first step runs at learning rate 0 (transformers' schedule)
    result = fit(model, EpochBatches(POINTS, 2, random.Random(1)), _loss_of(model), _config(warmup_ratio=0.5),
                 device="cpu", on_event=seen.append)
    assert result.steps == 9 and result.epochs_run == 3 and len(result.losses) == 9
    assert result.losses[-1] < result.losses[0]
    assert not torch.equal(model.linear.weight, before) and not model.training
    steps = [e for e in seen if e.phase == "step"]
    assert [e.phase for e in seen[:1]] == ["start"] and [e.step for e in steps] == list(range(1, 10))
    assert [e.epoch for e in steps] == [1, 1, 1, 2, 2, 2, 3, 3, 3]

    first_step_only = Line()
    fit(first_step_only, lambda epoch: [POINTS[:2]], _loss_of(first_step_only),
        _config(epochs=1, steps_per_epoch=1, warmup_ratio=0.5, max_steps=0), device="cpu")
    assert not torch.equal(first_step_only.linear.weight, Line().linear.weight)  # int(1 * 0.5) = 0 warm-up steps
    warming = Line()
    fit(warming, lambda epoch: [POINTS[:2]], _loss_of(warming),
        LoopConfig(epochs=1, steps_per_epoch=1, learning_rate=0.1, weight_decay=0.0, warmup_ratio=1.0), device="cpu")
    assert torch.equal(warming.linear.weight, Line().linear.weight)  # its one step is the warm-up's first: lr 0


def test_max_steps_caps_the_run_and_frozen_parameters_stay():
    model = Line()
    bias = model.linear.bias.detach().clone()
    result = fit(model, EpochBatches(POINTS, 2, random.Random(1)), _loss_of(model), _config(max_steps=4),
                 device="cpu", parameters=[model.linear.weight])
    assert result.steps == 4 and result.epochs_run == 2
    assert torch.equal(model.linear.bias, bias)


def test_epoch_batches_shuffle_each_epoch_from_one_generator():
    first, again = EpochBatches(POINTS, 4, random.Random(7)), EpochBatches(POINTS, 4, random.Random(7))
    assert len(first) == 2
    epochs = [first(e) for e in range(3)]
    assert epochs == [again(e) for e in range(3)]  # the same seed, the same orders
    assert all(sorted(x for batch in batches for x in batch) == sorted(POINTS) for batches in epochs)
    assert epochs[0] != epochs[1] or epochs[1] != epochs[2]


def test_progress_file_and_cancel_file(tmp_path: Path):
    progress = tmp_path / "progress.json"
    model = Line()
    fit(model, EpochBatches(POINTS, 1, random.Random(1)), _loss_of(model), _config(epochs=1, steps_per_epoch=6),
        device="cpu", on_event=progress_writer(progress, "running"))
    written = json.loads(progress.read_text())
    assert written["state"] == "running" and written["step"] == written["total"] == 6 and written["eta_s"] == 0

    cancel = tmp_path / "cancel"
    cancel.touch()
    with pytest.raises(TrainingCancelled, match="cross-encoder training cancelled at step 0 of 6"):
        fit(model, EpochBatches(POINTS, 1, random.Random(1)), _loss_of(model), _config(epochs=1, steps_per_epoch=6),
            device="cpu", cancel_file=cancel, label="cross-encoder training")


def test_a_learners_settings_hold_the_one_loop_config():
    from curation.learning.cross_encoder.training import CrossEncoderConfig
    from curation.learning.training import ENCODER_LOOP, TrainConfig

    changed = TrainConfig(max_seq_length=64).with_loop(epochs=3, device="cpu")
    # the learner's own loop defaults stay for what was not changed; its own fields stay too
    assert changed.loop == replace(ENCODER_LOOP, epochs=3, device="cpu") and changed.max_seq_length == 64
    recorded = changed.recorded()  # what a manifest writes: the keys manifests have always had, flat
    assert {"epochs", "batch_size", "learning_rate", "warmup_ratio", "max_seq_length", "weight_decay", "seed",
            "device", "mixed_precision", "max_steps", "patience"} <= set(recorded)
    assert recorded["epochs"] == 3 and "loop" not in recorded and "steps_per_epoch" not in recorded
    assert CrossEncoderConfig().loop.learning_rate == 5e-5 != TrainConfig().loop.learning_rate
    with pytest.raises(CurationError, match="batch size"):
        CrossEncoderConfig().with_loop(batch_size=0)


def test_fit_refuses_a_config_without_steps_per_epoch():
    model = Line()
    with pytest.raises(CurationError, match="steps_per_epoch"):
        fit(model, EpochBatches(POINTS, 2, random.Random(1)), _loss_of(model), LoopConfig(), device="cpu")
