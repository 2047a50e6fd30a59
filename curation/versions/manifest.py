"""A model version's ``manifest.json``: what was built, from what, how, and how well it did on dev.

:class:`Manifest` is the one typed form of the file; :func:`read_manifest` and
:func:`write_manifest` are the only code that reads or writes it (the registry publishes
through them; the store keeps a copy, read back with :func:`parse_manifest`). A missing or
unknown key, a value of the wrong type or a file that is not JSON raises :class:`RegistryError`
naming the file and the field. The retrieval package (``index``, which never imports
``curation``) reads its own part, the fusion, from the JSON itself (``index.loading``).

Format 1 is what the build pipeline has written since the registry exists (commit b368564),
with ``version`` and ``published_at`` added by the registry. Files written before the
``format`` key was added have no ``format`` and read as format 1; of the other keys, the four
added when the feedback loop came (``fusion_chosen_on_dev``, ``fusion_dev_scores``,
``feedback``, ``training_report``) may be absent and read as empty (no fusion was chosen on
dev, no feedback settings or report were recorded). Every other key is required, and no
other key is accepted: a version's record of itself is complete or it is reported. A format
above :data:`FORMAT` (a newer app) is refused with a message saying so.

The settings the build recorded (``train_config``, ``sampling``, ``dense``, ``feedback``) are
kept as plain JSON objects: they are asdict() of the learning and index packages' config
classes (which this layer does not import) and only ever shown, never read back into those.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from curation.errors import CurationError
from curation.files import write_atomic
from curation.versions.typed_json import OPTIONAL, check_format, decode, encode, load_json

FORMAT = 1  # the manifest format this code writes (and the newest it reads)


class RegistryError(CurationError):
    """A model version that cannot be created or read (its folder or its manifest)."""


@dataclass(frozen=True)
class DevMetrics:
    """Dev-split metrics (``ndcg@10``, ``map@10``, ``entity_recall@10``, ...) per retriever.

    Attributes:
        dense: of the dense retriever alone.
        hybrid: of the dense retriever fused with BM25 (what curators see).
    """

    dense: Mapping[str, float] = field(default_factory=dict)
    hybrid: Mapping[str, float] = field(default_factory=dict)

    def of(self, mode: str) -> Mapping[str, float]:
        """The metrics of ``mode`` ("dense" or "hybrid")."""
        if mode not in ("dense", "hybrid"):
            raise ValueError(f"dev metrics are kept for 'dense' and 'hybrid', not '{mode}'")
        return self.dense if mode == "dense" else self.hybrid


@dataclass(frozen=True)
class Baseline:
    """The active version when a build started, evaluated on the same dev split as the new version."""

    version: str
    metrics: DevMetrics


@dataclass(frozen=True)
class PairCounts:
    """Training pairs of one margin class (and source): positives and negatives."""

    positive: int = 0
    negative: int = 0


#: ``{source: {margin class: counts}}``: what each source (``kb``, ``decision``) contributed.
TrainingReport = Mapping[str, Mapping[str, PairCounts]]


def pair_counts(table: Mapping[str, Mapping[str, int]]) -> dict[str, PairCounts]:
    """``{class: {"positive": n, "negative": n}}`` (``TrainingSet.counts()``) as :class:`PairCounts`."""
    return {name: PairCounts(**counts) for name, counts in table.items()}


def training_report(report: Mapping[str, Mapping[str, Mapping[str, int]]]) -> TrainingReport:
    """``TrainingSet.report()`` as a :data:`TrainingReport`."""
    return {source: pair_counts(classes) for source, classes in report.items()}


@dataclass(frozen=True)
class Fusion:
    """The hybrid fusion a version serves with (the fields of ``index.search.FusionConfig``)."""

    method: Literal["rrf", "slate", "weighted", "rerank"] = "rerank"
    rrf_k: float = 60.0
    weights: tuple[float, float] = (1.0, 1.0)
    depth: int = 100
    mix: float = 0.0

    @classmethod
    def of(cls, config: Any) -> Fusion:
        """The record of an ``index.search.FusionConfig``."""
        return cls(method=str(config.method), rrf_k=float(config.rrf_k),
                   weights=tuple(float(w) for w in config.weights), depth=int(config.depth), mix=float(config.mix))


@dataclass(frozen=True)
class Served:
    """How the concept search (what the Curate page serves) mixes this version's dense model, chosen on dev.

    Attributes:
        dense_share: the dense share of the order within a result group (0: the lexical order).
        metric: the dev metric it was chosen on.
        dev_scores: each candidate share's dev score (key: the share with two decimals).
        queries: the dev queries it was measured on.
        dev_source: where those queries came from ("kb": the KB's dev genes; "decisions": held-out decisions).
        rerank: whether the version's cross-encoder re-ranks what the concept search serves.
        rerank_k: how many of the best hits it re-orders (0: no cross-encoder).
        rerank_dev_scores: dev ``metric`` of the concept search without ("first_stage") and with it ("reranked").
        rerank_p95_ms: the measured 95th percentile of re-ranking one query's top ``rerank_k``.
        rerank_device: where that was measured; rerank_gpu_only: measured on a GPU only (a CPU app skips it).
        rerank_rule: the decision in words.
    """

    dense_share: float = 0.0
    metric: str = "ndcg@10"
    dev_scores: Mapping[str, float] = field(default_factory=dict)
    queries: int = 0
    dev_source: str = field(default="kb", metadata=OPTIONAL)
    rerank: bool = field(default=False, metadata=OPTIONAL)
    rerank_k: int = field(default=0, metadata=OPTIONAL)
    rerank_dev_scores: Mapping[str, float] = field(default_factory=dict, metadata=OPTIONAL)
    rerank_p95_ms: float | None = field(default=None, metadata=OPTIONAL)
    rerank_device: str = field(default="", metadata=OPTIONAL)
    rerank_gpu_only: bool = field(default=False, metadata=OPTIONAL)
    rerank_rule: str = field(default="", metadata=OPTIONAL)


@dataclass(frozen=True)
class GateEvidence:
    """The activation check's evidence: the new version against the active one on the same dev queries.

    Both versions are evaluated as they would be served (the concept search at each version's own dense
    share), one score per dev query; the interval is a percentile bootstrap of the mean per-query
    difference (new minus active). The check passes only when the interval's lower bound is above zero.

    Attributes:
        baseline: the version compared against ("" when none was active or it could not be evaluated).
        dev_source: where the dev queries came from ("kb": the KB's dev genes; "decisions": held-out decisions).
        metric: the per-query metric.
        system: what was evaluated, in words.
        queries: how many dev queries were scored (0: none, nothing to compare).
        new_mean, baseline_mean: each version's mean ``metric``.
        mean_delta: the mean per-query difference, new minus baseline.
        low, high: the bootstrap interval of ``mean_delta``.
        confidence: the interval's confidence level.
        improved: whether the interval excludes zero on the good side (``low > 0``, enough queries).
        verdict: the evidence in words.
    """

    baseline: str = ""
    dev_source: str = "kb"
    metric: str = "ndcg@10"
    system: str = ""
    queries: int = 0
    new_mean: float = 0.0
    baseline_mean: float = 0.0
    mean_delta: float = 0.0
    low: float = 0.0
    high: float = 0.0
    confidence: float = 0.95
    improved: bool = False
    verdict: str = ""

    def describe(self) -> str:
        """The evidence in one line (the activation verdict and the Train & evaluate page)."""
        where = {"decisions": "held-out-decision", "kb+decisions": "KB and dev-gene decision",
                 "topics": "held-out topic"}.get(self.dev_source, "KB")
        if not self.baseline:
            return f"dev {self.metric} {self.new_mean:.3f} on {self.queries} {where} queries; {self.verdict}"
        return (f"dev {self.metric} {self.new_mean:.3f} vs {self.baseline_mean:.3f} for {self.baseline}: "
                f"{self.mean_delta:+.3f} [{self.low:+.3f}, {self.high:+.3f}] over {self.queries} {where} queries; "
                f"{self.verdict}")


@dataclass(frozen=True)
class Manifest:
    """A published model version's manifest (format :data:`FORMAT`).

    Attributes:
        format: the manifest format (absent from files older than the key: 1).
        version: the registry name (set by :func:`~curation.versions.registry.publish`).
        published_at: when it was published, ISO 8601 UTC (set by ``publish``).
        schema: the relation schema it was built for.
        base_model: the encoder it started from.
        trained: EDEL-trained (False: the base model, zero-shot).
        train_config, sampling, dense, feedback: the settings it was built with, as recorded.
        fusion: the hybrid fusion it serves with (chosen on dev when it was built).
        fusion_chosen_on_dev: the name of that fusion among the candidates ("" when not chosen).
        fusion_dev_scores: each candidate fusion's dev score on the primary metric.
        served: the concept search's dense share chosen on dev (None: not chosen, no dev queries).
        gate: the activation check's evidence against the version active when it was built (None: not measured).
        snapshot: the digest of the data snapshot it was built from.
        training_pairs: how many pairs it was trained on.
        training_classes: pairs per margin class.
        training_sources: pairs per source (``kb``, ``decision``).
        training_report: pairs per source and margin class.
        device: where it was trained (or the model's name for a zero-shot build).
        train_seconds, train_steps, loss_curve: the training run (0, 0, () when not trained).
        timings_s: seconds per build stage (encoding the corpus, building each index).
        total_seconds: the whole build.
        metrics, metrics_hybrid: dev metrics of the dense and the hybrid retriever (empty
            without a dev split); also as :attr:`dev`.
        documents: the abstracts its indexes cover.
        python: the Python version it was built with.
    """

    format: int = field(default=FORMAT, metadata=OPTIONAL)
    version: str = ""
    published_at: str = ""
    schema: str = ""
    base_model: str = ""
    trained: bool = False
    train_config: Mapping[str, object] = field(default_factory=dict)
    sampling: Mapping[str, object] = field(default_factory=dict)
    dense: Mapping[str, object] = field(default_factory=dict)
    fusion: Fusion = field(default_factory=Fusion)
    fusion_chosen_on_dev: str = field(default="", metadata=OPTIONAL)
    fusion_dev_scores: Mapping[str, float] = field(default_factory=dict, metadata=OPTIONAL)
    served: Served | None = field(default=None, metadata=OPTIONAL)
    feedback: Mapping[str, object] = field(default_factory=dict, metadata=OPTIONAL)
    gate: GateEvidence | None = field(default=None, metadata=OPTIONAL)
    snapshot: str = ""
    training_pairs: int = 0
    training_classes: Mapping[str, PairCounts] = field(default_factory=dict)
    training_sources: Mapping[str, int] = field(default_factory=dict)
    training_report: TrainingReport = field(default_factory=dict, metadata=OPTIONAL)
    device: str = ""
    train_seconds: float = 0.0
    train_steps: int = 0
    loss_curve: tuple[float, ...] = ()
    timings_s: Mapping[str, float] = field(default_factory=dict)
    total_seconds: float = 0.0
    metrics: Mapping[str, float] = field(default_factory=dict)
    metrics_hybrid: Mapping[str, float] = field(default_factory=dict)
    documents: int = 0
    python: str = ""

    @property
    def dev(self) -> DevMetrics:
        """The dev metrics of both retrievers."""
        return DevMetrics(dense=self.metrics, hybrid=self.metrics_hybrid)


def parse_manifest(data: object, where: str) -> Manifest:
    """A manifest from parsed JSON (``where`` names its file or record in messages).

    Raises:
        RegistryError: a newer format, a missing or unknown field, or a value of the wrong type.
    """
    if isinstance(data, dict):
        check_format(data, FORMAT, where, RegistryError, "manifest", "; upgrade the app to use this model version")
    return decode(Manifest, data, where, RegistryError)


def read_manifest(path: str | Path) -> Manifest:
    """The manifest in the file ``path``.

    Raises:
        RegistryError: the file is missing, unreadable, not JSON, or not a manifest of a known
            format (the message names the file and the field).
    """
    path = Path(path)
    try:
        data = load_json(path, RegistryError, "version")
    except FileNotFoundError:
        raise RegistryError(f"{path} does not exist") from None
    return parse_manifest(data, str(path))


def write_manifest(path: str | Path, manifest: Manifest) -> None:
    """Write ``manifest`` to the file ``path`` atomically (a reader never sees half of it).

    Raises:
        RegistryError: ``manifest`` holds a value its file could not be read back with.
        OSError: the file cannot be written (disk full, read-only folder).
    """
    path = Path(path)
    text = json.dumps(manifest_json(manifest), indent=2, default=str)
    parse_manifest(json.loads(text), str(path))  # what is written must read back
    write_atomic(path, text)


def manifest_json(manifest: Manifest) -> dict[str, object]:
    """The JSON object of ``manifest`` (as written to its file and kept in the store)."""
    return encode(manifest)
