"""The model-training commands' side of the facade (``train``, ``train-recogniser``, ``ship-recogniser``,
``train-linker``; ``retrain`` is :mod:`.retrain`'s): each a thin call into the model's own home.

Every learner loads torch, spaCy or the corpora: they are imported when a command runs, never when the command
line starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from curation import access
from curation.access import Action, Who
from curation.config import Settings
from curation.schemas import RelationSchema, resolve_schema
from curation.store.base import list_schemas

if TYPE_CHECKING:
    from curation.entities.linking import LinkerManifest
    from curation.learning.chain import ChainResult
    from curation.learning.recogniser.shipped import Provenance
    from curation.learning.snapshot import Snapshot


@dataclass(frozen=True)
class VersionOptions:
    """What ``python -m curation train`` builds: a model version named after ``out``'s folder, under its parent."""

    out: Path
    base_model: str = ""
    zero_shot: bool = False
    epochs: int = 1
    batch_size: int = 16
    learning_rate: float = 2e-5
    max_seq_length: int = 256
    max_steps: int = 0
    device: str = ""
    seed: int = 13
    per_class: int = 2
    ablation: str = "edel"
    index_kind: str = ""
    index_backend: str = ""
    progress_file: Path | None = None


def training_snapshot(con: duckdb.DuckDBPyConnection, schema_name: str, *, who: Who = ""
                      ) -> tuple[RelationSchema, Snapshot]:
    """The schema trained for, and the store's KB records, documents, synonyms and decisions as plain files read
    back (the build never reads the store).

    Raises:
        AccessDenied: ``who`` may not train.
        SchemaError: no schema of that name.
    """
    from curation.learning.snapshot import store_snapshot

    access.require(con, who, Action.TRAIN)
    return resolve_schema(schema_name, list_schemas(con)), store_snapshot(con)


def build_version(snapshot: Snapshot, schema: RelationSchema, options: VersionOptions, settings: Settings
                  ) -> ChainResult:
    """Train (unless zero-shot), index, evaluate and publish one model version by the one build chain."""
    from curation.learning.build import BuildRequest, IndexChoice
    from curation.learning.chain import ChainOptions, build_from_snapshot
    from curation.learning.sampling import Ablation, SamplingConfig
    from curation.learning.training import TrainConfig

    request = BuildRequest(
        schema=schema, base_model=options.base_model, version=options.out.name, train=not options.zero_shot,
        train_config=TrainConfig(max_seq_length=options.max_seq_length).with_loop(
            epochs=options.epochs, batch_size=options.batch_size, learning_rate=options.learning_rate,
            max_steps=options.max_steps, device=options.device, seed=options.seed),
        sampling=SamplingConfig(per_class=options.per_class, ablation=Ablation(options.ablation), seed=options.seed),
        index=IndexChoice.from_settings(settings, kind=options.index_kind, backend=options.index_backend),
    )
    return build_from_snapshot(snapshot, request, options.out.parent,
                               ChainOptions(seed=options.seed, progress_file=options.progress_file))


@dataclass(frozen=True)
class RecogniserOptions:
    """What ``python -m curation train-recogniser`` trains (0 / "" / None: the default the field names)."""

    kind: str = "cnn"  # "cnn" (spaCy's CNN) or "transformer"
    data_dir: Path | None = None  # None: CURATION_DATA_DIR
    out: Path | None = None  # None: <models>/recognisers/biomed (cnn) or .../transformer
    epochs: int = 0  # 0: 25 (cnn); 10 on a GPU, 2 on a CPU (transformer)
    width: int = 128  # cnn
    corpora: str = "standard"  # cnn: "standard" or "all"
    families: str = "missing"  # cnn, all corpora: "gene" or "missing" (chosen on BioRED Dev: ncbi_corpora.Guidelines)
    modifiers: str = "missing"  # cnn, all corpora: "disease" or "missing"
    gpu: int = -1  # cnn
    device: str = ""  # transformer: "" = CUDA when present
    batch_size: int = 16  # transformer
    learning_rate: float = 1e-4  # transformer
    max_steps: int = 0  # transformer
    max_documents: int = 0  # transformer
    progress_file: Path | None = None  # transformer


@dataclass(frozen=True)
class RecogniserPlan:
    """Where a recogniser is published, on which device and for at most how many epochs."""

    data_dir: Path
    out: Path
    device: str
    epochs: int


def recogniser_plan(options: RecogniserOptions, settings: Settings) -> RecogniserPlan:
    """The defaults of ``options`` filled in (the transformer's device is picked here: it loads torch)."""
    data_dir = options.data_dir or settings.data_dir
    if options.kind != "transformer":
        return RecogniserPlan(data_dir, options.out or settings.models_dir / "recognisers" / "biomed", "",
                              options.epochs or 25)
    from index.encoder import pick_device

    device = pick_device(options.device)
    # a CPU epoch of the full corpora takes ~10 min on two free cores, a GPU epoch seconds
    epochs = options.epochs or (10 if device.startswith("cuda") else 2)
    return RecogniserPlan(data_dir, options.out or settings.models_dir / "recognisers" / "transformer", device,
                          epochs)


def train_recogniser(options: RecogniserOptions, plan: RecogniserPlan):
    """Train the entity recogniser ``plan`` says and publish its folder; its manifest (dev scores, device, time)."""
    from curation.learning.recogniser.data import train_standard_recogniser, train_standard_transformer

    if options.kind == "transformer":
        from curation.entities.transformer_recogniser import TransformerSettings

        chosen = TransformerSettings().with_loop(epochs=plan.epochs, batch_size=options.batch_size,
                                                 max_steps=options.max_steps, learning_rate=options.learning_rate,
                                                 device=plan.device)
        return train_standard_transformer(plan.data_dir, plan.out, chosen, max_documents=options.max_documents,
                                          progress_file=options.progress_file, bar=True)
    from curation.learning.recogniser.ncbi_corpora import Guidelines

    guidelines = Guidelines(families=options.families == "gene", modifiers=options.modifiers == "disease")
    return train_standard_recogniser(plan.data_dir, plan.out, width=options.width, max_epochs=plan.epochs,
                                     use_gpu=options.gpu, corpora=options.corpora, guidelines=guidelines)


def ship_recogniser(folder: Path, data_dir: Path, code_version: str = "") -> tuple[Provenance, Path]:
    """Make a trained recogniser folder the one the code ships (activated after a first load): its provenance and
    where it now lies."""
    from curation.learning.recogniser.shipped import SHIPPED
    from curation.learning.recogniser.shipped import ship_recogniser as ship

    return ship(folder, data_dir, code_version=code_version), SHIPPED


def train_linker(data_dir: Path, out: Path, steps: int, device: str = "", seed: int = 13) -> LinkerManifest:
    """Train the entity linker by its learner, here rather than in a job (fine-tune the name encoder, calibrate it on
    dev, publish it at ``out``); its manifest.

    Raises:
        CurationError: a data file is missing, or ``out``'s folder name is not a valid model name.
    """
    from curation.entities.linking import read_manifest
    from curation.learning.linker.learner import LinkerRequest, train_in_process

    request = LinkerRequest(name=out.name, data_dir=str(data_dir), models_dir=str(out.parent), steps=steps,
                            device=device, seed=seed)
    return read_manifest(train_in_process(request).folder)
