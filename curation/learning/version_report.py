"""What a model version's learner reports besides its manifest: its evidence, as the job's result keeps it.

:class:`VersionReport` travels in a :class:`~curation.learning.learner.TrainedArtifact`; the job's ``result.json``
(:class:`curation.jobs.result.JobResult`) holds its fields at its top level (format 1, unchanged).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from curation.versions.manifest import Baseline, DevMetrics, TrainingReport
from curation.versions.typed_json import OPTIONAL


@dataclass(frozen=True)
class DecisionSummary:
    """What became of the curators' decisions (``FeedbackReport.summary()``)."""

    pairs: int = 0
    active_decisions: int = 0
    ignored_superseded: int = 0
    ignored_other_schema: int = 0
    ignored_missing_document: int = 0
    conflicts_excluded: int = 0
    conflicts_resolved_by_latest: int = 0
    adjudicated_items: int = 0
    by_grade: Mapping[str, int] = field(default_factory=dict)
    ignored_held_out: int = field(default=0, metadata=OPTIONAL)  # on dev / test / held-out genes: never trained on


@dataclass(frozen=True)
class TrainingSummary:
    """What the new version was trained on.

    Attributes:
        pairs: training pairs in all.
        report: pairs per source (``kb``, ``decision``) and margin class.
        decisions: what became of the decisions.
        decision_pairs_on_dev_queries: decision pairs whose query is also a dev query.
        dev_queries: queries of the dev split.
    """

    pairs: int
    report: TrainingReport
    decisions: DecisionSummary
    decision_pairs_on_dev_queries: int
    dev_queries: int


@dataclass(frozen=True)
class WorkerSettings:
    """The training settings the worker used (after filling in those chosen for the device)."""

    batch_size: int
    max_seq_length: int
    epochs: int
    learning_rate: float


@dataclass(frozen=True)
class VersionReport:
    """A new model version's evidence: its dev metrics, the active version's on the same split, what it was trained
    on and with which settings."""

    metrics: DevMetrics
    baseline: Baseline | None
    training: TrainingSummary
    settings: WorkerSettings
