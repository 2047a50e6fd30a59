"""The shared training loop and its three callers, run on the device present (CUDA when there is one).

Usage::

    python -m bench.gpu_loop [--model DIR] [--steps N] [--device D] [--out bench/results/gpu_loop.json]
    python -m bench.gpu_loop --save-tiny DIR     # only build the tiny random BERT into DIR

Each case runs the real code at small size on a tiny randomly initialised BERT (the offline MiniLM's
tokenizer and config shrunk to 2 layers of width 128; nothing is downloaded), on a few dozen synthetic
examples:

- ``loop_bf16``: :func:`curation.training_loop.fit` itself on a sequence classifier, with the autocast
  dtype the loop picks (bf16 where the GPU has it) and the steps per second after the first step;
- ``loop_fp16_scaler``: the same with bf16 reported missing, so the loop takes its fp16 + GradScaler branch;
- ``cross_encoder``: :func:`curation.learning.cross_encoder.training.train_cross_encoder` (loaded through its
  ``load_base_model``, published into a temporary folder);
- ``name_encoder``: :func:`curation.learning.linker.name_encoder.fine_tune` (Multi-Similarity loss and miner);
- ``edel``: :func:`curation.learning.training.train` (the MultiMargin bi-encoder).

Per case: whether it ran, the device, the dtype a Linear layer computed in during training (read by a
forward hook, so it is what autocast really did), seconds, the loss at the start and end (means of the
first and last three steps: one step's loss is noisy) and any error. Goals: each case ran on CUDA, and
each case's loss went down. The figures measure that the code paths work on the device, not model quality.
"""

from __future__ import annotations

import platform
import random
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

from bench import _scaffold as scaffold  # no retrieval stack: a bare GPU machine runs this
from bench._scaffold import goal

CASES = ("loop_bf16", "loop_fp16_scaler", "cross_encoder", "name_encoder", "edel")
TINY = {"num_hidden_layers": 2, "hidden_size": 128, "num_attention_heads": 2, "intermediate_size": 512}
EDGE = 3  # steps averaged for the loss at the start and at the end
GENES = ["kinase", "receptor", "channel", "ligase", "protease", "factor", "transporter", "synthase"]
DRUGS = ["aspirin", "insulin", "heparin", "morphine", "caffeine", "nicotine", "penicillin", "warfarin"]
FILLER = ["study", "patients", "cells", "results", "effect", "level", "analysis", "response", "model", "group"]


# --- the model -------------------------------------------------------------------------------


def save_tiny_bert(out_dir: Path, seed: int = 13) -> Path:
    """A randomly initialised 2-layer BERT with the offline MiniLM's tokenizer, saved into ``out_dir``."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from index.encoder import default_model_path

    source = default_model_path()
    config = BertConfig.from_pretrained(source, **TINY)
    torch.manual_seed(seed)
    BertModel(config).save_pretrained(out_dir)
    AutoTokenizer.from_pretrained(source).save_pretrained(out_dir)
    return out_dir


@contextmanager
def amp_probe(model) -> Iterator[set[str]]:
    """The dtypes the model's first Linear layer computes in while training (a forward hook on it)."""
    import torch

    seen: set[str] = set()
    linear = next(m for m in model.modules() if isinstance(m, torch.nn.Linear))

    def hook(module, inputs, output) -> None:
        if module.training and isinstance(output, torch.Tensor):
            seen.add(str(output.dtype).removeprefix("torch."))

    handle = linear.register_forward_hook(hook)
    try:
        yield seen
    finally:
        handle.remove()


# --- synthetic data --------------------------------------------------------------------------


def _sentence(rng: random.Random, *words: str) -> str:
    body = rng.sample(FILLER, 5) + list(words)
    rng.shuffle(body)
    return " ".join(body)


def relation_data(seed: int = 13) -> tuple[list[tuple[str, str, bool]], dict[str, str]]:
    """(query, pmid, relevant) triples and pmid → text: a document is relevant when it names both entities."""
    rng = random.Random(seed)
    triples, docs = [], {}
    for i, (gene, drug) in enumerate(zip(GENES, DRUGS, strict=True)):
        query = f"{gene} and {drug}"
        others = [(g, d) for g, d in zip(GENES, DRUGS, strict=True) if g != gene]
        for j, words in enumerate([(gene, drug), *rng.sample(others, 2), (gene,)]):
            pmid = f"{i}{j:02d}"
            docs[pmid] = _sentence(rng, *words)
            triples.append((query, pmid, j == 0))
    return triples, docs


def synonym_data() -> tuple[dict[str, list[str]], dict[str, str]]:
    """Concept → names sharing a word, and concept → kind (two kinds)."""
    sets, kinds = {}, {}
    for kind, heads in (("gene", GENES), ("chemical", DRUGS)):
        for head in heads:
            label = f"{kind}:{head}"
            sets[label] = [head, f"{head} protein", f"the {head}", f"{head} type 1"]
            kinds[label] = kind
    return sets, kinds


# --- the cases -------------------------------------------------------------------------------


def case_loop(model_dir: Path, device: str, steps: int, fp16: bool = False) -> dict[str, object]:
    """:func:`fit` on a sequence classifier; ``fp16`` reports bf16 missing (the GradScaler branch)."""
    import torch
    from transformers import AutoModelForSequenceClassification

    from curation.training_loop import EpochBatches, LoopConfig, fit

    torch.manual_seed(13)
    model = AutoModelForSequenceClassification.from_pretrained(model_dir, num_labels=2).to(device)
    rng = random.Random(13)
    ids = [[rng.randrange(1000, 30000) for _ in range(32)] for _ in range(64)]
    items = [(row, int(row[0] < 15500)) for row in ids]  # the label is read off the first token
    batches = EpochBatches(items, 16, rng)

    def loss_of(batch):
        x = torch.tensor([row for row, _ in batch], device=device)  # (16, 32)
        y = torch.tensor([label for _, label in batch], device=device)
        return model(input_ids=x, labels=y).loss

    config = LoopConfig(epochs=-(-steps // len(batches)), learning_rate=1e-3, weight_decay=0.01, warmup_ratio=0.1,
                        max_steps=steps).with_steps(len(batches))
    elapsed: list[float] = []
    patch = mock.patch("torch.cuda.is_bf16_supported", return_value=False) if fp16 else _nothing()
    with patch, amp_probe(model) as dtypes:
        done = fit(model, batches, loss_of, config, device=device,
                   on_event=lambda e: elapsed.append(e.elapsed_s) if e.phase == "step" else None)
    after_first = (len(elapsed) - 1) / (elapsed[-1] - elapsed[0]) if len(elapsed) > 1 else 0.0
    return {"dtypes": dtypes, "losses": done.losses, "train_seconds": done.seconds,
            "steps_per_s": round(after_first, 1)}


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def case_cross_encoder(model_dir: Path, device: str, steps: int) -> dict[str, object]:
    from curation.learning.cross_encoder.training import (
        CrossEncoderConfig,
        CrossEncoderExample,
        load_base_model,
        train_cross_encoder,
    )

    triples, docs = relation_data()
    examples = [CrossEncoderExample(q, p, 1.0 if rel else 0.0, "pos-0" if rel else "random") for q, p, rel in triples]
    config = CrossEncoderConfig(base_model=str(model_dir), max_length=64).with_loop(
        epochs=-(-steps * 8 // len(examples)), batch_size=8, learning_rate=5e-4, device=device, max_steps=steps)
    model = load_base_model(config.base_model, device, config.max_length)
    with tempfile.TemporaryDirectory() as tmp, amp_probe(model) as dtypes:
        result = train_cross_encoder(examples, docs, Path(tmp) / "cross-encoder", config, model=model)
        published = (Path(tmp) / "cross-encoder" / "cross_encoder.json").exists()
    return {"dtypes": dtypes, "losses": result.losses, "train_seconds": result.seconds, "device": result.device,
            "published": published}


def case_name_encoder(model_dir: Path, device: str, steps: int) -> dict[str, object]:
    from sentence_transformers import SentenceTransformer

    from curation.learning.linker.name_encoder import NameEncoderConfig, fine_tune

    sets, kinds = synonym_data()
    model = SentenceTransformer(str(model_dir), device=device)  # mean pooling over the tiny BERT
    losses: list[float] = []
    config = NameEncoderConfig(concepts_per_batch=8, names_per_concept=3).with_loop(
        max_steps=steps, learning_rate=5e-4, device=device)
    with amp_probe(model) as dtypes:
        report = fine_tune(model, sets, kinds, config, progress=lambda step, total, loss: losses.append(loss))
    return {"dtypes": dtypes, "losses": losses, "train_seconds": report.seconds, "device": report.device,
            "mined_pairs": report.mined_pairs}


def case_edel(model_dir: Path, device: str, steps: int) -> dict[str, object]:
    from sentence_transformers import SentenceTransformer

    from curation.learning.training import TrainConfig, TrainingPair, train

    triples, docs = relation_data()
    pairs = [TrainingPair(q, p, rel, 0.0 if rel else 0.8, "pos-1" if rel else "random") for q, p, rel in triples]
    model = SentenceTransformer(str(model_dir), device=device)
    config = TrainConfig(max_seq_length=64).with_loop(epochs=-(-steps * 8 // len(pairs)), batch_size=8,
                                                      learning_rate=5e-4, device=device, max_steps=steps, patience=0)
    with amp_probe(model) as dtypes:
        result = train(model, pairs, docs, config)
    return {"dtypes": dtypes, "losses": result.losses, "train_seconds": result.seconds, "device": result.device}


def run_case(case: Callable[..., dict[str, object]], model_dir: Path, device: str, steps: int,
             **kwargs: object) -> dict[str, object]:
    """One case's record: ran, device, dtype, seconds, loss at the start and end, or the error."""
    import torch

    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    try:
        out = case(model_dir, device, steps, **kwargs)
    except Exception as exc:  # recorded, not raised: one failing caller must not hide the others
        traceback.print_exc()
        tail = traceback.format_exc().strip().splitlines()[-4:]
        return {"ran": False, "device": device, "seconds": round(time.perf_counter() - started, 2),
                "error": f"{type(exc).__name__}: {exc}", "traceback_tail": tail}
    losses = [float(v) for v in out.pop("losses")]
    record: dict[str, object] = {
        "ran": True,
        "device": str(out.pop("device", device)),
        "mixed_precision_dtype": sorted(out.pop("dtypes")),
        "seconds": round(time.perf_counter() - started, 2),
        "train_seconds": round(float(out.pop("train_seconds")), 2),
        "steps": len(losses),
        "loss_start": round(sum(losses[:EDGE]) / max(1, len(losses[:EDGE])), 4),
        "loss_end": round(sum(losses[-EDGE:]) / max(1, len(losses[-EDGE:])), 4),
        "losses": [round(v, 4) for v in losses],
        "error": None,
    }
    if device.startswith("cuda"):
        record["peak_gpu_mib"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
    record.update(out)
    return record


def goals_of(results: dict[str, dict[str, object]]) -> dict[str, dict[str, object]]:
    """Per case: it ran on CUDA without error, and its loss at the end is below its loss at the start."""
    goals = {}
    for name, record in results.items():
        on_cuda = bool(record.get("ran")) and str(record.get("device", "")).startswith("cuda")
        goals[f"{name}_ran_on_cuda"] = goal(1.0 if on_cuda else 0.0, 1.0, ">=")
        drop = float(record["loss_start"]) - float(record["loss_end"]) if record.get("ran") else 0.0
        goals[f"{name}_loss_decreased"] = goal(round(drop, 4), 0.0, ">")
    return goals


def params_of(device: str, model_dir: Path, steps: int) -> dict[str, object]:
    import sentence_transformers
    import torch
    import transformers

    cuda = device.startswith("cuda")
    return {
        "device": torch.cuda.get_device_name(device) if cuda else platform.processor() or "cpu",
        "device_type": "cuda" if cuda else "cpu",
        "bf16_supported": bool(cuda and torch.cuda.is_bf16_supported()),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "transformers": transformers.__version__,
        "sentence_transformers": sentence_transformers.__version__,
        **scaffold.machine("python"),
        "model": f"random init BERT {TINY} (MiniLM tokenizer), from {model_dir.name}",
        "steps_per_case": steps,
    }


def main(argv: list[str] | None = None) -> int:
    parser = scaffold.parser(__doc__, "gpu_loop")
    parser.add_argument("--model", type=Path, help="a BERT folder (default: build the tiny random one)")
    parser.add_argument("--save-tiny", type=Path, help="only build the tiny random BERT into this folder")
    parser.add_argument("--steps", type=int, default=40, help="optimiser steps per case")
    parser.add_argument("--device", default="", help="cuda, cpu or '' (CUDA when present)")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated subset of " + ", ".join(CASES))
    args = parser.parse_args(argv)
    if args.save_tiny:
        print(f"saved {save_tiny_bert(args.save_tiny)}")
        return 0
    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    cases = {"loop_bf16": (case_loop, {}), "loop_fp16_scaler": (case_loop, {"fp16": True}),
             "cross_encoder": (case_cross_encoder, {}), "name_encoder": (case_name_encoder, {}),
             "edel": (case_edel, {})}
    chosen = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = sorted(set(chosen) - set(cases))
    if unknown:
        parser.error(f"unknown cases {unknown}; known: {', '.join(CASES)}")
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = args.model or save_tiny_bert(Path(tmp) / "tiny-bert")
        results = {}
        for name in chosen:
            case, kwargs = cases[name]
            results[name] = run_case(case, model_dir, device, args.steps, **kwargs)
            r = results[name]
            print(f"{name}: ran={r['ran']} dtype={r.get('mixed_precision_dtype')} {r['seconds']}s "
                  f"loss {r.get('loss_start')} -> {r.get('loss_end')} {r.get('error') or ''}", file=sys.stderr)
        params = params_of(device, model_dir, args.steps)
    report = scaffold.write(args.out, {"benchmark": "gpu_loop", "date": scaffold.now(), "params": params,
                                     "results": results, "goals": goals_of(results)})
    scaffold.print_goals(report["goals"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
