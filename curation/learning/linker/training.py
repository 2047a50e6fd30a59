"""Training a linker: fine-tune the name encoder, choose w and the apply rule on dev, publish the folder.

The folder is what :func:`curation.entities.linking.load_linker` serves: the SentenceTransformer (``encoder/``) and
``manifest.json`` (:class:`~curation.entities.linking.LinkerManifest`). It is staged as ``<name>.tmp`` and renamed
into place when complete (an older folder of that name is replaced), so a reader never sees half a linker.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path

from curation.entities.lexicon import Lexicon
from curation.entities.link_calibration import DevName
from curation.entities.linking import (
    FORMAT_VERSION,
    LinkerManifest,
    TrainedLinker,
    load_linker,
    read_manifest,
    write_manifest,
)
from curation.files import staged_folder
from curation.learning.linker.calibration import calibrate
from curation.learning.linker.name_encoder import NameEncoderConfig, TrainingReport, fine_tune
from curation.training_loop import LoopEvent


def train_linker(
    sets: Mapping[str, Sequence[str]],
    kinds: Mapping[str, str],
    lexicon: Lexicon,
    dev: Sequence[DevName],
    out: str | Path,
    config: NameEncoderConfig | None = None,
    base_model: str = "",
    counts: Mapping[str, int] | None = None,
    progress: Callable[[int, int, float], None] | None = None,
    *,
    on_event: Callable[[LoopEvent], None] | None = None,
    cancel_file: Path | None = None,
) -> tuple[TrainedLinker, LinkerManifest]:
    """Fine-tune the name encoder, calibrate it on dev, and publish it at ``out``.

    Args:
        sets: concept label -> names to train on (labels unique across kinds).
        kinds: concept label -> kind.
        lexicon: the dictionary dev names are linked into (the same names as training, never dev's).
        dev: dev mentions for w and the thresholds.
        out: the linker folder (staged as ``<out>.tmp``; an existing one is replaced when complete).
        config: fine-tuning hyper-parameters.
        base_model: a sentence-transformers name or folder ("" = the packaged MiniLM).
        counts: training data counts recorded in the manifest.
        progress: ``progress(step, total, loss)`` during fine-tuning.
        on_event: the loop's events (e.g. :func:`curation.training_loop.progress_writer` for a job).
        cancel_file: fine-tuning stops with ``TrainingCancelled`` when this file appears (nothing is published).
    """
    from index.encoder import EncoderConfig, load_encoder, model_name

    config = config or NameEncoderConfig()
    encoder = load_encoder(EncoderConfig(model=base_model, device=config.loop.device,
                                         max_seq_length=config.max_seq_length))
    base = model_name(encoder)
    report: TrainingReport = fine_tune(encoder, sets, kinds, config, progress, on_event=on_event,
                                       cancel_file=cancel_file)
    out = Path(out)
    linker = TrainedLinker(lexicon, encoder, 0.5, name=out.name)
    weight, thresholds, figures = calibrate(linker, dev)
    linker.scorer.weight = weight
    linker.thresholds = thresholds
    manifest = LinkerManifest(
        format_version=FORMAT_VERSION, name=out.name, base_model=base,
        created=datetime.now(UTC).isoformat(timespec="seconds"), device=report.device,
        train_seconds=report.seconds, weight=weight,
        thresholds={kind: asdict(rule) for kind, rule in thresholds.items()},
        counts={**dict(counts or {}), "train_concepts": report.concepts, "train_names": report.names},
        config={**config.recorded(), "steps": report.steps, "final_loss": report.final_loss,
                "mined_pairs_per_batch": report.mined_pairs},
        dev=figures,
    )
    with staged_folder(out) as stage:
        encoder.save(str(stage / "encoder"))
        write_manifest(stage, manifest)
    return linker, manifest


def recalibrate(folder: str | Path, lexicon: Lexicon, dev: Sequence[DevName], device: str = "") -> TrainedLinker:
    """Choose w and the thresholds again for a saved linker and rewrite its manifest.

    For a new dev set or dictionary, or a changed apply rule, without retraining: the encoder
    and the training record are kept.
    """
    folder = Path(folder)
    manifest = read_manifest(folder)
    linker = load_linker(folder, lexicon, device)
    weight, thresholds, figures = calibrate(linker, dev)
    linker.scorer.weight, linker.thresholds = weight, thresholds
    rules = {kind: asdict(rule) for kind, rule in thresholds.items()}
    write_manifest(folder, replace(manifest, weight=weight, thresholds=rules, dev=figures))
    return linker
