"""What a model version's job builds, and how the app judges the result: the job's ``request.json`` as a dataclass.

Checked when made (a bad value is refused with what was wrong), filled in for the device by the worker
(:meth:`RetrainRequest.for_device`), and read back the same way as every learner's request
(:func:`curation.learning.job_files.request_from_dict`). The learner that runs it: :mod:`.version_learner`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

from curation.errors import CurationError
from curation.learning.feedback import FeedbackConfig
from curation.learning.job_files import request_from_dict
from curation.learning.training import device_defaults

RETIRED_FIELDS = frozenset({"tolerance"})  # fields older requests may carry, read and dropped


@dataclass(frozen=True)
class RetrainRequest:
    """What a retraining job builds, and how the app judges the result.

    Attributes:
        schema: relation schema to train for.
        base_model: encoder to start from ("" = the offline MiniLM; a hub name or a folder,
            e.g. the active version's ``model/`` to continue from its weights).
        use_kb: train on KB-derived pairs.
        use_decisions: train on curators' decisions.
        epochs, batch_size, learning_rate, max_seq_length, max_steps, device: training settings
            (device "" = CUDA when present, with mixed precision). Epochs, batch size and sequence length
            0 = chosen for the device (:func:`curation.learning.training.device_defaults`): 10 epochs
            (early-stopped on dev), 32 and 256 tokens on CUDA; 1 epoch, 16 and 128 on a CPU.
        per_class: KB-derived negatives per class per positive.
        feedback: how decisions become pairs (margins, conflict rule, repeat).
        primary_metric: the dev metric compared ("ndcg@10").
        primary_mode: which retriever it is compared on ("hybrid": what curators see; or "dense").
        seed: split, sampling and training seed.
        models_dir: where the version is published (filled in by :func:`start_retrain`).
        baseline: the active version's folder when the job started (filled in), evaluated by
            the worker on the same dev split for a fair comparison.
        cross_encoder: also train the cross-encoder re-ranking stage: "auto" (on a GPU only: on this
            2-core CPU it adds minutes to every job), "on" or "off". It is served only when it helps on dev
            within the latency budget (:mod:`curation.learning.cross_encoder.stage`).
        cross_encoder_max_pairs: cap on its training pairs (0: every pair EDEL trains on).
        patience: with more than one epoch and a dev split, stop after this many epochs without a dev gain
            (the best epoch is kept; 0: train every epoch).
        index_kind, index_backend: the new version's dense index ("" = the worker's ``CURATION_INDEX_KIND`` /
            ``CURATION_INDEX_BACKEND``; :class:`curation.learning.build.IndexChoice`).
    """

    schema: str
    base_model: str = ""
    use_kb: bool = True
    use_decisions: bool = True
    epochs: int = 0
    batch_size: int = 0
    learning_rate: float = 2e-5
    max_seq_length: int = 0
    max_steps: int = 0
    device: str = ""
    per_class: int = 2
    feedback: FeedbackConfig = field(default_factory=FeedbackConfig)
    primary_metric: str = "ndcg@10"
    primary_mode: str = "hybrid"
    seed: int = 13
    models_dir: str = ""
    baseline: str = ""
    cross_encoder: str = "auto"
    cross_encoder_max_pairs: int = 0
    patience: int = 2
    index_kind: str = ""
    index_backend: str = ""

    def __post_init__(self) -> None:
        if self.index_kind not in ("", "auto", "flat", "hnsw", "ivfpq"):
            raise CurationError(f"index_kind must be auto, flat, hnsw or ivfpq, got '{self.index_kind}'")
        if self.index_backend not in ("", "faiss", "milvus"):
            raise CurationError(f"index_backend must be faiss or milvus, got '{self.index_backend}'")
        if self.cross_encoder not in ("auto", "on", "off"):
            raise CurationError(f"cross_encoder must be 'auto', 'on' or 'off', got '{self.cross_encoder}'")
        if self.patience < 0:
            raise CurationError("patience must be 0 (never stop early) or more")
        if self.cross_encoder_max_pairs < 0:
            raise CurationError("cross_encoder_max_pairs must be 0 (no cap) or more")
        if not (self.use_kb or self.use_decisions):
            raise CurationError("choose at least one source of training data: the KB, the decisions, or both")
        if self.primary_mode not in ("hybrid", "dense"):
            raise CurationError(f"primary_mode must be 'hybrid' or 'dense', got '{self.primary_mode}'")
        if self.epochs < 0 or self.batch_size < 0 or self.max_steps < 0 or 0 < self.max_seq_length < 8:
            raise CurationError("epochs must be at least 1 and max sequence length at least 8 (or 0 = for the "
                                "device), batch size and max steps not negative")
        if isinstance(self.feedback, dict):
            object.__setattr__(self, "feedback", FeedbackConfig(**self.feedback))

    def for_device(self, cuda: bool) -> RetrainRequest:
        """Epochs, batch size and sequence length left at 0 filled in for the device (GPU: longer and larger;
        CPU: minutes, not hours)."""
        defaults = device_defaults(cuda)
        return replace(self, epochs=self.epochs or defaults.epochs, batch_size=self.batch_size or defaults.batch_size,
                       max_seq_length=self.max_seq_length or defaults.max_seq_length)

    def to_dict(self) -> dict:
        """The request as JSON-ready data (``request.json``; the feedback's conflict rule as its name)."""
        return {**asdict(self), "feedback": {**asdict(self.feedback), "conflicts": str(self.feedback.conflicts)}}

    @classmethod
    def from_dict(cls, data: dict, where: str = "retrain request") -> RetrainRequest:
        """A request read back from ``request.json`` (raises CurationError naming ``where`` when malformed)."""
        # "tolerance" is retired (activation is the gate's bootstrap interval alone): older jobs' requests keep it
        data = {k: v for k, v in data.items() if k not in RETIRED_FIELDS}
        return request_from_dict(cls, data, where)
