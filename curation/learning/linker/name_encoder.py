"""Fine-tuning a name encoder on synonym sets, SapBERT-style.

Liu et al. (2021), *Self-Alignment Pretraining for Biomedical Entity Representations* (seed 002)
pull the names of one concept together and push other concepts' names away with the
Multi-Similarity loss over the pairs that online hard-pair mining keeps (§2: "switching off
this mining process causes a drastic performance drop"). Mining only finds positives when a
batch holds several names of a concept, so batches are built as P concepts x K names; and
because random concepts are easy negatives, each batch draws its concepts from one kind
(chemicals against chemicals), where the confusable neighbours live.

Names are short, so sequences are cut at 32 tokens: a few hundred steps of MiniLM run in
minutes on a CPU; CUDA is used when present. The optimiser, schedule and steps are the shared loop's
(:mod:`curation.training_loop`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from curation.entities.lexicon import normalise_name
from curation.training_loop import LoopConfig, LoopEvent, UsesLoop, fit

if TYPE_CHECKING:
    import torch


#: The name encoder's loop: one pass over ``max_steps`` sampled batches (the cap that keeps a CPU run to
#: minutes) at 5e-5 (SapBERT: 2e-5 for 50k steps; fewer steps need more), weight decay 0.01 (SapBERT's), a
#: tenth of the steps warming up. Its ``batch_size`` is unused: a batch is P concepts x K names.
NAME_ENCODER_LOOP = LoopConfig(epochs=1, max_steps=600, learning_rate=5e-5, weight_decay=0.01, warmup_ratio=0.1)


@dataclass(frozen=True)
class NameEncoderConfig(UsesLoop):
    """Settings of the fine-tuning.

    Attributes:
        loop: the one loop's settings (steps, learning rate, weight decay, warm-up, device, seed):
            :data:`NAME_ENCODER_LOOP` by default; change some with :meth:`~curation.training_loop.UsesLoop.with_loop`.
        concepts_per_batch: P, concepts drawn per batch (all of one kind).
        names_per_concept: K, names drawn per concept (fewer when a concept has fewer).
        alpha, beta, base: Multi-Similarity loss scales and offset (SapBERT: 1, 60, 0.5).
        epsilon: margin of the Multi-Similarity miner (SapBERT's lambda, 0.05 to 0.3).
        max_seq_length: tokens kept per name.
    """

    loop: LoopConfig = NAME_ENCODER_LOOP
    concepts_per_batch: int = 16
    names_per_concept: int = 4
    alpha: float = 1.0
    beta: float = 60.0
    base: float = 0.5
    epsilon: float = 0.1
    max_seq_length: int = 32


@dataclass(frozen=True)
class TrainingReport:
    """What one fine-tuning run did: steps, the last losses, time and device."""

    steps: int
    concepts: int
    names: int
    seconds: float
    device: str
    final_loss: float
    mined_pairs: float  # mean hard pairs kept per batch


def synonym_sets(names: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """Concept label -> distinct names (by lookup form), keeping concepts with two names or more.

    A concept with one name gives no positive pair, so it only adds easy negatives; dropping
    it keeps batches informative.
    """
    out: dict[str, list[str]] = {}
    for label, group in names.items():
        seen: dict[str, str] = {}
        for name in group:
            key = normalise_name(name)
            if key and key not in seen:
                seen[key] = name.strip()
        if len(seen) >= 2:
            out[label] = list(seen.values())
    return out


def sample_batches(
    sets: Mapping[str, Sequence[str]], kinds: Mapping[str, str], config: NameEncoderConfig
) -> list[tuple[list[str], list[int]]]:
    """``config.loop.max_steps`` batches of (names, integer labels), P concepts x K names of one kind.

    Args:
        sets: concept label -> names (from :func:`synonym_sets`).
        kinds: concept label -> kind; a batch's concepts share a kind, drawn in proportion to
            the square root of the kind's number of concepts.
        config: P, K, the loop's number of steps and seed.
    """
    rng = random.Random(config.loop.seed)
    by_kind: dict[str, list[str]] = {}
    for label in sorted(sets):
        by_kind.setdefault(kinds[label], []).append(label)
    order = sorted(by_kind)
    weights = [len(by_kind[k]) ** 0.5 for k in order]  # sqrt: DrugBank's chemicals would drown genes
    pools = {k: [] for k in order}  # labels not yet drawn in this pass over the kind
    batches = []
    for _ in range(config.loop.max_steps):
        kind = rng.choices(order, weights)[0]
        texts: list[str] = []
        labels: list[int] = []
        for number in range(min(config.concepts_per_batch, len(by_kind[kind]))):
            if not pools[kind]:
                pools[kind] = rng.sample(by_kind[kind], len(by_kind[kind]))
            label = pools[kind].pop()
            group = sets[label]
            for name in rng.sample(group, min(config.names_per_concept, len(group))):
                texts.append(name)
                labels.append(number)
        batches.append((texts, labels))
    return batches


def fine_tune(
    model,
    sets: Mapping[str, Sequence[str]],
    kinds: Mapping[str, str],
    config: NameEncoderConfig = NameEncoderConfig(),
    progress: Callable[[int, int, float], None] | None = None,
    *,
    on_event: Callable[[LoopEvent], None] | None = None,
    cancel_file: Path | None = None,
) -> TrainingReport:
    """Fine-tune a SentenceTransformer in place on synonym sets with MS loss + MS miner.

    Args:
        model: a ``sentence_transformers.SentenceTransformer`` (moved to the chosen device).
        sets: concept label -> names; labels must be unique across kinds ("chemical:D003000");
            names are deduplicated and one-name concepts dropped (:func:`synonym_sets`).
        kinds: concept label -> kind (batches stay within a kind).
        config: the settings (the loop's and the loss's).
        progress: called as ``progress(step, total, loss)`` after each step.
        on_event: told of the loop's events too (e.g. :func:`curation.training_loop.progress_writer`).
        cancel_file: the loop stops with ``TrainingCancelled`` when this file appears.

    References:
        Liu et al. 2021 (SapBERT, seed 002), eq. 1-2; Wang et al. 2019 (Multi-Similarity loss).
    """
    import torch
    from pytorch_metric_learning import losses, miners

    from index.encoder import pick_device

    device = pick_device(config.loop.device)
    torch.manual_seed(config.loop.seed)
    model.to(device)
    model.max_seq_length = config.max_seq_length
    # The word-embedding table is half of MiniLM's weights; names reuse common word pieces, so
    # freezing it costs little and halves the optimiser's work on a CPU.
    for name, parameter in model.named_parameters():
        if "word_embeddings" in name:
            parameter.requires_grad = False
    loss_fn = losses.MultiSimilarityLoss(alpha=config.alpha, beta=config.beta, base=config.base)
    miner = miners.MultiSimilarityMiner(epsilon=config.epsilon)
    sets = synonym_sets(sets)  # distinct names; concepts with one name give no positive pair
    batches = sample_batches(sets, kinds, config)
    mined: list[int] = []

    def loss_of(batch: tuple[list[str], list[int]]) -> torch.Tensor:
        texts, labels = batch
        features = model.preprocess(texts) if hasattr(model, "preprocess") else model.tokenize(texts)
        features = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in features.items()}
        embeddings = model(features)["sentence_embedding"].float()  # (P*K, dim)
        target = torch.tensor(labels, device=device)
        with torch.autocast(device_type="cuda", enabled=False):  # mining and the loss compare similarities in fp32
            pairs = miner(embeddings, target)  # (anchor_pos, pos, anchor_neg, neg) index tensors
            loss = loss_fn(embeddings, target, pairs)
        mined.append(int(pairs[0].numel() + pairs[2].numel()))
        return loss

    def report(event: LoopEvent) -> None:
        if progress is not None and event.phase == "step":
            progress(event.step, event.total, event.loss)
        if on_event is not None:
            on_event(event)

    # one pass over the sampled batches, a warm-up and a linear decay to 0 at the last step
    loop = config.loop.with_steps(len(batches))
    done = fit(model, lambda epoch: batches, loss_of, loop, device=device,
               parameters=[p for p in model.parameters() if p.requires_grad], on_event=report,
               cancel_file=cancel_file, label="name-encoder fine-tuning")
    tail = done.losses[-20:] or [0.0]
    return TrainingReport(
        steps=len(batches),
        concepts=len(sets),
        names=sum(len(v) for v in sets.values()),
        seconds=round(done.seconds, 1),
        device=device,
        final_loss=round(sum(tail) / len(tail), 4),
        mined_pairs=round(sum(mined) / max(1, len(mined)), 1),
    )
