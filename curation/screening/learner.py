"""The in-session learner: after every grade of a topic's candidates, a model fitted on the grades so far
re-ranks the unread rest.

The model is scikit-learn's logistic regression (liblinear, classes balanced) over one row per candidate:

- the text as TF-IDF word uni- and bigrams (as ASReview's default model reads it), fitted once per topic on the
  topic's candidates;
- the evidence features (:data:`curation.screening.pool.EVIDENCE_FEATURES`: mentions of the query concepts, in
  the title, first position, whether they share a sentence, the relation scorer's probabilities), each standardised
  over the topic with a column saying where a value is missing;
- the served encoder's vector, where a version serves one.

Grades are gains (complete 2, partial 1, not relevant 0): complete and partial are the positive class, a partial one
counting :attr:`LearnerConfig.partial_weight` of a complete one. Until the grades hold one positive and one negative
there is nothing to fit and the static order is the order (the warm start). After that a candidate's score is the
model's decision value plus :attr:`LearnerConfig.prior_weight` times the static order's ``-log(rank)``, each
standardised over the unread candidates, so the static order stays the prior the grades move away from.

Query strategies: ``highest`` (the best-scored unread first: what a curator screening for evidence wants) or
``uncertain`` (the unread whose model probability is nearest 0.5 first: Prodigy's ``prefer_uncertain``, for
building training data).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from curation.ranking.session import standardised
from curation.screening.pool import TopicPool


class Strategy(StrEnum):
    """Which unread candidate comes next."""

    HIGHEST = "highest"
    UNCERTAIN = "uncertain"


@dataclass(frozen=True)
class LearnerConfig:
    """The learner's settings (defaults: the dev choice of ``bench/screening.py``, kept equal by a test).

    Attributes:
        strategy: :class:`Strategy` value.
        prior_weight: weight of the static order beside the model (0: the model alone, as ASReview).
        evidence_weight: scale of the evidence columns beside the text's (0: the text alone).
        dense_weight: scale of the encoder's vector (where one serves).
        c: the logistic regression's inverse regularisation.
        partial_weight: a partial grade's weight as a positive (a complete one weighs 1).
        ngram_max: the longest word n-gram of the text features.
    """

    strategy: str = Strategy.HIGHEST.value
    # On dev topics the evidence columns did not help within a topic (30 grades are too few for ~25 more weights:
    # WSS@95 0.180 without, 0.179 at 0.1, 0.149 at 1.0); they pay across topics, in the learned ranking stage.
    prior_weight: float = 0.5
    evidence_weight: float = 0.0
    dense_weight: float = 1.0
    c: float = 1.0
    partial_weight: float = 0.5
    ngram_max: int = 2

    def __post_init__(self) -> None:
        if self.strategy not in {s.value for s in Strategy}:
            raise ValueError(f"unknown query strategy '{self.strategy}'; use one of "
                             f"{', '.join(s.value for s in Strategy)}")
        if min(self.prior_weight, self.evidence_weight, self.dense_weight, self.partial_weight) < 0 or self.c <= 0:
            raise ValueError("the learner's weights must be >= 0 and c > 0")


@dataclass(frozen=True)
class QueueRanking:
    """The queue after the grades so far.

    Attributes:
        order: the unread candidates' positions in the pool, next first.
        score: (n,) each candidate's score (graded ones: NaN).
        probability: (n,) the model's probability of relevance, its odds corrected for the balanced classes
            (None: not fitted yet).
        fitted: False while the static order stands in (no positive and negative grade yet).
        seconds: time to refit and re-rank.
    """

    order: tuple[int, ...]
    score: np.ndarray
    probability: np.ndarray | None
    fitted: bool
    seconds: float


def _evidence_block(evidence: np.ndarray) -> np.ndarray:
    """(n, f') evidence standardised over the pool, NaN as the mean, plus a 0/1 column per column with gaps."""
    x = np.asarray(evidence, dtype=np.float64)
    missing = np.isnan(x)
    counts = (~missing).sum(axis=0)
    means = np.where(missing, 0.0, x).sum(axis=0) / np.maximum(counts, 1)  # (f,) a column of gaps only: 0
    filled = np.where(missing, means, x)
    spread = filled.std(axis=0)
    filled = (filled - filled.mean(axis=0)) / np.where(spread > 1e-12, spread, 1.0)
    gaps = missing[:, missing.any(axis=0) & ~missing.all(axis=0)].astype(np.float64)
    return np.hstack([filled, gaps]) if gaps.size else filled


class ScreeningLearner:
    """One topic's learner: its feature rows are built once (:meth:`__init__`), each :meth:`rank` refits.

    Args:
        pool: the topic's candidates, static order.
        config: the settings.
    """

    def __init__(self, pool: TopicPool, config: LearnerConfig | None = None) -> None:
        import scipy.sparse as sp
        from sklearn.feature_extraction.text import TfidfVectorizer

        config = config or LearnerConfig()
        self.pool = pool
        self.config = config
        n = len(pool)
        blocks = []
        if n:
            vectoriser = TfidfVectorizer(ngram_range=(1, config.ngram_max), sublinear_tf=True, stop_words="english",
                                         min_df=1, max_df=0.95 if n >= 20 else 1.0, dtype=np.float64)
            try:
                blocks.append(vectoriser.fit_transform(pool.texts))
            except ValueError:  # every text empty or stop words only: no text features
                pass
        if pool.evidence is not None and config.evidence_weight > 0 and n:
            blocks.append(sp.csr_matrix(_evidence_block(pool.evidence) * config.evidence_weight))
        if pool.dense is not None and config.dense_weight > 0 and n:
            dense = np.asarray(pool.dense, dtype=np.float64)
            norms = np.linalg.norm(dense, axis=1, keepdims=True)
            blocks.append(sp.csr_matrix(dense / np.where(norms > 0, norms, 1.0) * config.dense_weight))
        self.rows = sp.hstack(blocks).tocsr() if blocks else sp.csr_matrix((n, 1))  # (n, features)
        self.prior = -np.log(np.arange(1, n + 1, dtype=np.float64))  # (n,) static order: first highest

    def rank(self, gains: np.ndarray | Mapping[str, int]) -> QueueRanking:
        """The unread candidates' order after ``gains``.

        Args:
            gains: (n,) per candidate in pool order, -1 unread (or pmid → gain; other PMIDs are ignored).
        """
        from sklearn.linear_model import LogisticRegression
        from threadpoolctl import threadpool_limits

        started = time.perf_counter()
        gains = self._gains(gains)
        unread = gains < 0
        positive, negative = gains > 0, gains == 0
        score = np.full(len(gains), np.nan)
        if not (positive.any() and negative.any()):
            score[unread] = self.prior[unread]
            order = tuple(int(i) for i in np.flatnonzero(unread))  # the static order
            return QueueRanking(order, score, None, False, time.perf_counter() - started)
        graded = ~unread
        labels = positive[graded].astype(np.int64)
        weights = np.where(gains[graded] == 1, self.config.partial_weight, 1.0)
        model = LogisticRegression(C=self.config.c, class_weight="balanced", solver="liblinear")
        # liblinear calls BLAS on short vectors, where OpenBLAS's threads only wait on each other: on a busy two-core
        # machine they made a 12 ms fit of 1,000 candidates take 1.4 s.
        with threadpool_limits(limits=1, user_api="blas"):
            model.fit(self.rows[graded], labels, sample_weight=weights)
        decision = model.decision_function(self.rows)  # (n,)
        combined = standardised(decision, unread) + self.config.prior_weight * standardised(self.prior, unread)
        # Balanced classes shift the odds by the graded negatives-to-positives ratio; undone for the estimate. (An EM
        # re-estimate of the prevalence, Saerens et al. 2002, was tried and dropped: it estimated more relevant on
        # the sample's seizures topic, 118 of 134 candidates, than this does.)
        ratio = float(weights[labels == 1].sum()) / max(float(weights[labels == 0].sum()), 1e-9)
        probability = 1.0 / (1.0 + np.exp(-(decision + np.log(ratio))))
        if self.config.strategy == Strategy.UNCERTAIN.value:
            key = -np.abs(probability - 0.5)
        else:
            key = combined
        score[unread] = key[unread]
        positions = np.flatnonzero(unread)
        order = tuple(int(i) for i in positions[np.lexsort((positions, -key[positions]))])  # ties: static order
        return QueueRanking(order, score, probability, True, time.perf_counter() - started)

    def _gains(self, gains: np.ndarray | Mapping[str, int]) -> np.ndarray:
        if isinstance(gains, Mapping):
            index = self.pool.index()
            out = np.full(len(self.pool), -1, dtype=np.int64)
            for pmid, gain in gains.items():
                if pmid in index:
                    out[index[pmid]] = int(gain)
            return out
        out = np.asarray(gains, dtype=np.int64)
        if out.shape != (len(self.pool),):
            raise ValueError(f"gains has shape {out.shape}; expected ({len(self.pool)},)")
        return out
