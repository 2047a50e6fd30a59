"""The model version's learner: the EDEL encoder fine-tuned on KB and decision pairs, its dense index and (when it
helps) the cross-encoder re-ranking stage, built by the ONE build chain
(:func:`curation.learning.chain.build_from_snapshot`).

Its home is learning/ itself: the data (:mod:`.sampling`, :mod:`.feedback`, :mod:`.splits`), the training
(:mod:`.training`, :mod:`.cross_encoder` on the one training loop), the artifact (a model version and its manifest,
:mod:`curation.versions.registry`) and its serving (:mod:`curation.retrieval`, :mod:`curation.versions.serving`).
This module is what a job of kind ``retrain`` runs (:class:`VersionLearner`, registered in
:mod:`curation.learning.learner`): its request (:class:`~.retrain_request.RetrainRequest`, ``request.json`` as a
dataclass), the build in the worker, and the activation rule (the gate's paired-bootstrap interval,
:func:`curation.versions.activation.judge`).
"""

from __future__ import annotations

import errno
import shutil
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb

from curation.config import Settings
from curation.learning.learner import RETRAIN, TrainedArtifact, Workspace
from curation.learning.retrain_request import RetrainRequest
from curation.versions.activation import Verdict

MIN_FREE_BYTES = 300 * 2**20  # a MiniLM version takes ~100 MB (weights + indexes); staged then renamed
FREE_BYTES_PER_DOCUMENT = 8 * 1024  # dense vectors, BM25 postings and the snapshot copy, generously


def check_free_space(folder: Path, documents: int) -> None:
    """Fail early, with a clear message, when the models folder's disk cannot hold a new version.

    Raises:
        OSError: ENOSPC, naming the folder and what is needed.
    """
    folder.mkdir(parents=True, exist_ok=True)
    need = MIN_FREE_BYTES + documents * FREE_BYTES_PER_DOCUMENT
    free = shutil.disk_usage(folder).free
    if free < need:
        raise OSError(errno.ENOSPC, f"only {free / 2**20:.0f} MB free for a new version; it needs about "
                                    f"{need / 2**20:.0f} MB", str(folder))


class VersionLearner:
    """The model version's :class:`~curation.learning.learner.Learner` (module docstring)."""

    kind = RETRAIN
    label = "retraining"
    versioned = True

    def title(self, params: Mapping[str, Any]) -> str:
        return "Retraining"

    def read_request(self, data: Mapping[str, Any], where: str) -> RetrainRequest:
        return RetrainRequest.from_dict(dict(data), where)

    def prepare(self, con: duckdb.DuckDBPyConnection, request: RetrainRequest, settings: Settings) -> RetrainRequest:
        """The schema resolved, the models folder and the active version (the baseline evaluated beside it) filled in.

        Raises:
            SchemaError: no schema of that name.
        """
        from curation.schemas import resolve_schema
        from curation.store.base import list_schemas
        from curation.versions import catalog

        schema = resolve_schema(request.schema, list_schemas(con))
        active = catalog.active_version(con, schema.name)
        baseline = str(active.path) if active is not None and not catalog.check_version(active) else ""
        return replace(request, schema=schema.name, models_dir=str(settings.models_dir), baseline=baseline)

    def train(self, request: RetrainRequest, work: Workspace) -> TrainedArtifact:
        """Build a version from the job's snapshot by the one build chain, evaluated beside the baseline."""
        import torch

        from curation.config import load_settings
        from curation.learning.build import BuildRequest, IndexChoice
        from curation.learning.chain import ChainOptions, build_from_snapshot
        from curation.learning.cross_encoder.training import CrossEncoderConfig
        from curation.learning.sampling import SamplingConfig
        from curation.learning.snapshot import load_snapshot
        from curation.learning.training import TrainConfig
        from curation.learning.version_report import (
            DecisionSummary,
            TrainingSummary,
            VersionReport,
            WorkerSettings,
        )
        from curation.versions.manifest import training_report
        from curation.versions.registry import new_version_name

        cuda = request.device.startswith("cuda") or (not request.device and torch.cuda.is_available())
        request = request.for_device(cuda)
        print(f"device {'cuda' if cuda else 'cpu'}: batch {request.batch_size}, {request.max_seq_length} tokens",
              flush=True)
        snapshot = load_snapshot(work.snapshot)
        schema = snapshot.schema(request.schema)
        models_dir = Path(request.models_dir)
        check_free_space(models_dir, len(snapshot.documents))
        build = BuildRequest(
            schema=schema,
            base_model=request.base_model,
            version=new_version_name(schema.name, "edel"),
            train_config=TrainConfig(max_seq_length=request.max_seq_length).with_loop(
                epochs=request.epochs, batch_size=request.batch_size, learning_rate=request.learning_rate,
                max_steps=request.max_steps, device=request.device, seed=request.seed, patience=request.patience),
            sampling=SamplingConfig(per_class=request.per_class, seed=request.seed),
            feedback=request.feedback,
            index=IndexChoice.from_settings(load_settings(), kind=request.index_kind, backend=request.index_backend),
            cross_encoder=(CrossEncoderConfig(max_pairs=request.cross_encoder_max_pairs).with_loop(
                               device=request.device, epochs=2 if cuda else 1, seed=request.seed)
                           if request.cross_encoder == "on" or (request.cross_encoder == "auto" and cuda) else None),
        )
        options = ChainOptions(
            seed=request.seed, decisions=snapshot.decisions if request.use_decisions else None,
            use_kb=request.use_kb, require_pairs=True, baseline=Path(request.baseline) if request.baseline else None,
            progress_file=work.progress, cancel_file=work.cancel,
            before_training=work.claim,  # the version's name first: the app clears its staging if this process dies
            log=lambda line: print(line, flush=True),
        )
        built = build_from_snapshot(snapshot, build, models_dir, options)
        version, training, feedback = built.version, built.training, built.feedback
        dev_queries = set(built.dev.queries.values())
        return TrainedArtifact(
            name=version.version, folder=version.path, message=f"built {version.version}",
            device=version.manifest.device, timings_s=dict(built.timings_s),
            report=VersionReport(
                metrics=version.manifest.dev,
                baseline=built.baseline,
                training=TrainingSummary(
                    pairs=len(training.pairs),
                    report=training_report(training.report()),
                    decisions=DecisionSummary(**feedback.summary()),
                    decision_pairs_on_dev_queries=sum(1 for p in feedback.pairs if p.query in dev_queries),
                    dev_queries=len(built.dev.queries),
                ),
                settings=WorkerSettings(batch_size=request.batch_size, max_seq_length=request.max_seq_length,
                                        epochs=request.epochs, learning_rate=request.learning_rate),
            ),
        )

    def judge(self, con: duckdb.DuckDBPyConnection, request: RetrainRequest, folder: Path) -> Verdict:
        """The gate: activated when the paired-bootstrap interval of its dev gain over the active version is above 0
        (on the evidence in its manifest)."""
        from curation.versions.activation import judge
        from curation.versions.registry import read_version

        return judge(con, request.schema, read_version(folder))


LEARNER = VersionLearner()
