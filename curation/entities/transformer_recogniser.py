"""A transformer recogniser: word-piece BIO tagging fine-tuned from the offline MiniLM.

The same corpora and split as the spaCy CNN (:mod:`curation.entities.recogniser`): BioRED Train (every
type) and BC5CDR Train (chemicals and diseases; the dictionary's genes and variants in its texts are
unlabelled, never taught as outside), selected on BioRED Dev. transformers'
``AutoModelForTokenClassification`` puts a linear tag head on MiniLM's encoder; texts longer than a
window are read as overlapping windows (:mod:`curation.entities.token_tags`). Training is the project's
one loop (:func:`curation.training_loop.fit`): AdamW, linear warm-up and decay, the epoch with the best
BioRED Dev F1 over all kinds (exact spans, ``ents_f``) kept, early stopping, the cancel and progress files;
bf16 on CUDA.

A trained recogniser is a folder: ``model.safetensors`` + ``config.json`` (the tag names in its
``id2label``), the tokenizer's files, and ``manifest.json`` (:class:`TransformerManifest`, format
:data:`FORMAT`). No pickle: transformers reads the weights with safetensors.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from curation.entities.recogniser_corpus import LABELS, CorpusPart, RecogniserError
from curation.entities.token_tags import IGNORE, Window, decode, gold_tags, merge_windows, misaligned, tag_names
from curation.entities.token_tags import windows as cut_windows
from curation.files import staged_folder, write_atomic
from curation.records import Document
from curation.training_loop import EpochBatches, LoopConfig, UsesLoop, fit, progress_writer

FORMAT = "recogniser-transformer/1"
FAMILY = FORMAT.split("/")[0] + "/"
TRAIN_COMMAND = "`python -m curation train-recogniser --kind transformer`"


#: The transformer recogniser's loop: up to 10 epochs of 16 windows per step at 1e-4, a tenth of the steps
#: warming up, the epoch with the best BioRED Dev F1 over all kinds (``ents_f``) kept, early stopping after 2.
RECOGNISER_LOOP = LoopConfig(epochs=10, batch_size=16, learning_rate=1e-4, weight_decay=0.01, warmup_ratio=0.1,
                             patience=2, primary_metric="ents_f")


@dataclass(frozen=True)
class TransformerSettings(UsesLoop):
    """How the transformer recogniser is trained and how it reads texts.

    Attributes:
        loop: the one loop's settings (epochs, batch size in windows, learning rate, weight decay, warm-up,
            patience, max steps, device, seed): :data:`RECOGNISER_LOOP` by default; change some with
            :meth:`~curation.training_loop.UsesLoop.with_loop`.
        base_model: "" for the offline MiniLM, or a local transformers folder.
        max_length: word pieces per window (special pieces included).
        stride: pieces two consecutive windows of a text share.
        freeze_embeddings: keep the word-piece embedding table as MiniLM has it: it is half of MiniLM's
            weights, so a CPU step (AdamW's update included) is much cheaper, and pieces seen rarely in
            the corpora keep their pretrained vectors.
    """

    loop: LoopConfig = RECOGNISER_LOOP
    base_model: str = ""
    max_length: int = 256
    stride: int = 32
    freeze_embeddings: bool = True


@dataclass(frozen=True)
class TransformerManifest:
    """What a transformer recogniser folder holds and how it was made (``dev_scores``: exact spans)."""

    name: str
    format: str
    transformers_version: str
    base_model: str
    labels: tuple[str, ...]
    tags: tuple[str, ...]
    created: str
    trained_on: dict[str, int]
    data_digests: dict[str, str]
    selected_on: str
    dev_scores: dict[str, float] = field(default_factory=dict)
    epoch_scores: list[dict[str, float]] = field(default_factory=list)
    settings: dict[str, float | int | str] = field(default_factory=dict)
    train_seconds: float = 0.0
    device: str = "cpu"
    best_epoch: int = 0
    losses: dict[str, float] = field(default_factory=dict)


def exact_scores(predicted: Iterable[tuple], gold: Iterable[tuple]) -> dict[str, float]:
    """Exact-span scores under spaCy's names (as the CNN's manifest and the app read them).

    Items are (doc, start, end, kind); ``ents_p``/``ents_r``/``ents_f`` over all kinds, ``GENE.p``/``GENE.r``/
    ``GENE.f`` per kind (label in upper case), fractions in [0, 1].
    """
    predicted, gold = set(predicted), set(gold)
    out: dict[str, float] = {}
    for kind in sorted({x[3] for x in gold | predicted}) + [None]:
        p = {x for x in predicted if kind is None or x[3] == kind}
        g = {x for x in gold if kind is None or x[3] == kind}
        hit = len(p & g)
        precision, recall = hit / len(p) if p else 0.0, hit / len(g) if g else 0.0
        f1 = 2 * precision * recall / (precision + recall) if hit else 0.0
        prefix = f"{kind.upper()}." if kind else "ents_"
        out |= {f"{prefix}p": round(precision, 4), f"{prefix}r": round(recall, 4), f"{prefix}f": round(f1, 4)}
    return out


def gold_spans(document: Document, labels: Sequence[str] | None) -> list[tuple[int, int, str]]:
    """(start, end, LABEL) of the document's mentions of the part's labels; overlapping ones keep the longest."""
    spans = [(m.start, m.end, LABELS[m.type]) for m in document.mentions
             if m.type in LABELS and (labels is None or LABELS[m.type] in labels)]
    kept: list[tuple[int, int, str]] = []
    for span in sorted(spans, key=lambda s: (s[0] - s[1], s[0])):
        if all(span[1] <= k[0] or k[1] <= span[0] for k in kept):
            kept.append(span)
    return sorted(kept)


def part_digest(part: CorpusPart) -> str:
    """sha256 of a part's texts and the gold spans it trains on (names the data in the manifest)."""
    digest = hashlib.sha256()
    for document in part.documents:
        spans = gold_spans(document, part.labels)
        digest.update(json.dumps([document.pmid, document.text, spans]).encode())
    return digest.hexdigest()


class TransformerRecogniser:
    """A loaded transformer recogniser: texts in, (start, end, kind) spans out (as :class:`SpacyRecogniser`).

    Attributes:
        name: the manifest's name (part of the annotator's version).
        manifest: the folder's :class:`TransformerManifest`.
        processes: kept for the annotator's interface; one process reads batches of windows (torch threads).
    """

    def __init__(self, model, tokenizer, manifest: TransformerManifest, device: str, processes: int = 1) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.manifest = manifest
        self.name = manifest.name
        self.device = device
        self.processes = processes
        self.tags = list(manifest.tags)
        self.max_length = int(manifest.settings.get("max_length", 256))
        self.stride = int(manifest.settings.get("stride", 32))

    def recognise(self, texts: Sequence[str], batch_size: int = 32) -> list[list[tuple[int, int, str]]]:
        import torch

        texts = list(texts)
        cut = cut_windows(self.tokenizer, texts, self.max_length, self.stride)
        # windows of similar length share a batch: less padding
        order = sorted(range(len(cut)), key=lambda i: len(cut[i].input_ids))
        predicted: list[list[int]] = [[] for _ in cut]
        on_cuda = self.device.startswith("cuda")
        amp = torch.autocast("cuda", dtype=torch.bfloat16) if on_cuda else nullcontext()
        with torch.inference_mode(), amp:
            for i in range(0, len(order), batch_size):
                chunk = order[i : i + batch_size]
                ids, mask = _pad([cut[j].input_ids for j in chunk], self.tokenizer.pad_token_id, self.device)
                tags = self.model(input_ids=ids, attention_mask=mask).logits.argmax(-1).tolist()  # (batch, pieces)
                for j, row in zip(chunk, tags, strict=True):
                    predicted[j] = row[: len(cut[j].input_ids)]
        by_text: dict[int, list[tuple[Window, list[int]]]] = defaultdict(list)
        for window, row in zip(cut, predicted, strict=True):
            by_text[window.text].append((window, row))
        return [decode(merge_windows(by_text[i]), self.tags) for i in range(len(texts))]


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def _pad(rows: Sequence[Sequence[int]], value: int, device: str):
    """(ids, mask) tensors of ``rows`` padded with ``value`` to the longest row."""
    import torch

    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), value, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, : len(row)] = 1
    return ids.to(device), mask.to(device)


def _quiet_from_pretrained(cls, path: str, **kwargs):
    """``cls.from_pretrained`` without the "newly initialised head" notice (the head is new on purpose)."""
    from transformers.utils import logging

    level = logging.get_verbosity()
    logging.set_verbosity_error()
    try:
        return cls.from_pretrained(path, local_files_only=True, **kwargs)
    finally:
        logging.set_verbosity(level)


def training_examples(
    tokenizer, part: CorpusPart, tags: Sequence[str], settings: TransformerSettings,
    unlabelled: Callable[[str], Iterable[tuple[int, int]]] | None = None,
) -> tuple[list[tuple[list[int], list[int]]], dict[str, int]]:
    """(input ids, tag ids) per window of the part's documents, and counts (documents, windows, mentions...)."""
    texts = [d.text for d in part.documents]
    cut = cut_windows(tokenizer, texts, settings.max_length, settings.stride)
    by_text: dict[int, list[Window]] = defaultdict(list)
    for window in cut:
        by_text[window.text].append(window)
    examples = []
    counts = {"documents": len(texts), "windows": len(cut), "mentions": 0, "misaligned": 0, "missing_pieces": 0}
    for i, document in enumerate(part.documents):
        spans = gold_spans(document, part.labels)
        missing = list(unlabelled(document.text)) if part.labels is not None and unlabelled else []
        counts["mentions"] += len(spans)
        counts["misaligned"] += misaligned((w.offsets for w in by_text[i]), spans)
        for window in by_text[i]:
            labels = gold_tags(window, spans, tags, missing)
            counts["missing_pieces"] += sum(1 for t, (s, e) in zip(labels, window.offsets, strict=True)
                                            if t == IGNORE and e > s)
            examples.append((window.input_ids, labels))
    return examples, counts


def train_transformer_recogniser(
    train: Sequence[CorpusPart],
    dev: CorpusPart,
    out: Path,
    unlabelled: Callable[[str], Iterable[tuple[int, int]]] | None = None,
    settings: TransformerSettings = TransformerSettings(),
    name: str | None = None,
    progress_file: Path | None = None,
    cancel_file: Path | None = None,
    bar: bool = False,
) -> TransformerManifest:
    """Fine-tune the token classifier, keep the best dev epoch, publish the folder at ``out`` (staged, renamed).

    Raises:
        RecogniserError: no training mentions or an empty dev set; ``out`` is left as it was.
        TrainingCancelled: the cancel file appeared.
    """
    import torch
    import transformers
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    from index.encoder import pick_device, resolve_model

    labels = tuple(sorted(set(LABELS.values())))
    tags = tag_names(labels)
    base = resolve_model(settings.base_model)
    if not Path(base).is_dir():
        raise RecogniserError(f"base model folder {base!r} not found; give a local transformers folder")
    if not dev.documents:
        raise RecogniserError(f"the dev set {dev.name!r} has no documents; nothing was trained")
    device = pick_device(settings.loop.device)
    torch.manual_seed(settings.loop.seed)
    tokenizer = AutoTokenizer.from_pretrained(base, local_files_only=True)
    model = _quiet_from_pretrained(AutoModelForTokenClassification, base, num_labels=len(tags),
                                   id2label=dict(enumerate(tags)), label2id={t: i for i, t in enumerate(tags)})
    model.to(device)
    if settings.freeze_embeddings:
        model.get_input_embeddings().weight.requires_grad_(False)
    examples, counts = [], {}
    for part in train:
        found, c = training_examples(tokenizer, part, tags, settings, unlabelled)
        examples += found
        counts |= {f"{part.name}.{k}": v for k, v in c.items()}
    if not any(t > 0 for _, row in examples for t in row):
        raise RecogniserError("the training corpus has no entity mentions of a known type "
                              f"({', '.join(sorted(set(LABELS)))}); nothing was trained")
    manifest_settings = {k: v for k, v in settings.recorded().items() if k != "device"}
    draft = TransformerManifest(
        name=name or Path(out).name, format=FORMAT, transformers_version=transformers.__version__,
        base_model=settings.base_model or "all-MiniLM-L6-v2", labels=labels, tags=tuple(tags),
        created=datetime.now(UTC).isoformat(timespec="seconds"), trained_on=counts,
        data_digests={p.name: part_digest(p) for p in (*train, dev)}, selected_on=dev.name,
        settings=manifest_settings, device=device,
    )
    recogniser = TransformerRecogniser(model, tokenizer, draft, device)
    dev_gold = [(i, s, e, k.lower()) for i, d in enumerate(dev.documents) for s, e, k in gold_spans(d, dev.labels)]

    def evaluate(_model) -> dict[str, float]:
        found = recogniser.recognise([d.text for d in dev.documents])
        return exact_scores([(i, s, e, k) for i, spans in enumerate(found) for s, e, k in spans], dev_gold)

    def loss_of(batch: list[tuple[list[int], list[int]]]):
        ids, mask = _pad([ids for ids, _ in batch], tokenizer.pad_token_id, device)
        target, _ = _pad([row for _, row in batch], IGNORE, device)
        return model(input_ids=ids, attention_mask=mask, labels=target).loss

    batches = EpochBatches(examples, settings.loop.batch_size, random.Random(settings.loop.seed))
    config = settings.loop.with_steps(len(batches))
    trainable = [p for p in model.parameters() if p.requires_grad]
    done = fit(model, batches, loss_of, config, device=device, parameters=trainable, evaluate_epoch=evaluate,
               cancel_file=cancel_file,
               on_event=progress_writer(progress_file, "training the transformer recogniser"),
               label="transformer recogniser training", bar=bar)
    best = done.epoch_metrics[done.best_epoch - 1] if done.best_epoch else {}
    manifest = TransformerManifest(**{
        **asdict(draft), "labels": labels, "tags": tuple(tags), "dev_scores": best,
        "epoch_scores": done.epoch_metrics, "train_seconds": round(done.seconds, 1), "best_epoch": done.best_epoch,
        "trained_on": {**counts, "steps": done.steps, "epochs_run": done.epochs_run},
        "losses": {"first_10": _mean(done.losses[:10]), "last_10": _mean(done.losses[-10:])},
    })
    out = Path(out)
    with staged_folder(out) as stage:
        model.save_pretrained(stage, safe_serialization=True)
        tokenizer.save_pretrained(stage)
        write_atomic(stage / "manifest.json", json.dumps(asdict(manifest), indent=2) + "\n")
    return manifest


def folder_format(folder: Path) -> str | None:
    """The ``format`` a folder's manifest.json names; None when it has no readable one."""
    try:
        return str(json.loads((Path(folder) / "manifest.json").read_text(encoding="utf-8")).get("format"))
    except (OSError, ValueError, AttributeError):
        return None


def read_transformer_manifest(folder: Path) -> TransformerManifest:
    """The manifest of a transformer recogniser folder; a :class:`RecogniserError` that says what to do."""
    path = Path(folder) / "manifest.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        data["labels"], data["tags"] = tuple(data["labels"]), tuple(data["tags"])
        manifest = TransformerManifest(**data)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise RecogniserError(f"{path}: malformed transformer recogniser manifest ({exc})") from None
    if manifest.format != FORMAT:
        raise RecogniserError(f"{path}: recogniser format {manifest.format!r}, this version reads {FORMAT!r}; "
                              f"train it again with {TRAIN_COMMAND}")
    if not (Path(folder) / "model.safetensors").is_file():
        raise RecogniserError(f"{folder}: model.safetensors is missing; train it again with {TRAIN_COMMAND}")
    return manifest


def load_transformer_recogniser(folder: Path, processes: int = 1, device: str = "") -> TransformerRecogniser:
    """Load a folder written by :func:`train_transformer_recogniser` (weights read with safetensors only)."""
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    from index.encoder import pick_device

    manifest = read_transformer_manifest(folder)
    device = pick_device(device)
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        model = AutoModelForTokenClassification.from_pretrained(str(folder), local_files_only=True,
                                                                use_safetensors=True)
    except (OSError, ValueError) as exc:
        raise RecogniserError(f"{folder}: cannot be loaded as a transformers token classifier ({exc})") from None
    names = [model.config.id2label[i] for i in range(model.config.num_labels)]
    if names != list(manifest.tags):
        raise RecogniserError(f"{folder}: the model's tags {names} differ from the manifest's {list(manifest.tags)}; "
                              f"train it again with {TRAIN_COMMAND}")
    model.to(device).eval()
    return TransformerRecogniser(model, tokenizer, manifest, device, processes)
