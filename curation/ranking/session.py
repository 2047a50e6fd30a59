"""In-session feedback: once a curator has graded some results of a query, the ungraded ones re-rank at once.

Two methods, both over what a served search already has, nothing trained or encoded:

- ``rocchio`` (the baseline, Rocchio 1971): each candidate's BM25 term vector (the lexical index's document rows,
  :meth:`index.lexical.LexicalIndex.doc_term_matrix`), cosine to the centroid of the relevant graded documents
  minus ``gamma`` times its cosine to the centroid of the not-relevant ones;
- ``rocchio_features``: the same plus a per-query linear model over the learned stage's product features
  (:data:`curation.ranking.features.PRODUCT_FEATURES`, standardised within the query's candidates): its weight
  vector is the difference between the relevant and the not-relevant graded documents' mean feature rows, the
  closed-form linear discriminant with an identity covariance (five grades are too few for a fitted model's
  variance).

Either is added to the served order's own prior (``-log(rank)``), each term standardised over the ungraded
candidates so that the weights (chosen on benchmark v2's dev split by ``bench/ranker_session.py``) mean the same
for every query. Graded documents keep their places; the ungraded fill the others in the new order.
:func:`session_scores` is the arithmetic (the benchmark calls it on its candidate lists) and :func:`rerank_session`
applies it to a served search's hits (:func:`curation.retrieval.relation_search.search_relation` calls it when the
search's options carry grades), so the page and the benchmark re-rank alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from curation.ranking.features import FEATURE_NAMES, GRADE_GAINS, PRODUCT_FEATURES
from curation.records import Decision
from index.hits import Hit, StageScore

STAGE = "session"
METHODS = ("rocchio", "rocchio_features")
DEPTH = 50  # candidates a graded query re-ranks: what the benchmark measures (its lists' depth)
# The product's columns of a full feature row, minus those that restate the served order (the prior carries it).
FEATURE_COLUMNS = tuple(FEATURE_NAMES.index(n) for n in PRODUCT_FEATURES if n not in ("served_rank", "served_score"))


@dataclass(frozen=True)
class SessionConfig:
    """How graded results re-rank the rest (weights chosen on dev; see the module docstring).

    Attributes:
        method: one of :data:`METHODS`.
        prior: weight of the served order (``-log(rank)``, standardised).
        relevant: weight of the cosine to the relevant graded documents' term centroid.
        not_relevant: weight subtracted for the cosine to the not-relevant ones' centroid (Rocchio's gamma).
        features: weight of the per-query linear model over the product features (``rocchio_features`` only).
        depth: candidates re-ranked (the served search's best ``depth``).
    """

    # The defaults are benchmark v2's dev choice (bench/results/feedback.json, ``session_feedback.chosen_on_dev``;
    # a test keeps them equal): Rocchio, the feature model not beating it per query, and "not relevant" grades'
    # centroid carrying no measurable weight there.
    method: str = "rocchio"
    prior: float = 1.0
    relevant: float = 0.5
    not_relevant: float = 0.0
    features: float = 0.0
    depth: int = DEPTH

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"unknown in-session method '{self.method}'; use one of {', '.join(METHODS)}")


def standardised(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``values`` centred and scaled over ``mask``'s entries (all zero when they do not vary)."""
    chosen = values[mask]
    if chosen.size == 0:
        return np.zeros_like(values)
    spread = float(chosen.std())
    return (values - float(chosen.mean())) / spread if spread > 1e-12 else np.zeros_like(values)


def _cosine_to_centroid(unit: np.ndarray, members: np.ndarray) -> np.ndarray:
    """Each row's cosine to the normalised mean of ``unit[members]`` (zeros when there are no members)."""
    if not members.any():
        return np.zeros(unit.shape[0])
    centroid = np.asarray(unit[members].mean(axis=0)).ravel()  # (vocabulary,)
    norm = float(np.linalg.norm(centroid))
    return np.asarray(unit @ (centroid / norm)).ravel() if norm > 0 else np.zeros(unit.shape[0])


def _unit_rows(terms) -> np.ndarray:
    """Term rows scaled to unit length (a sparse matrix stays sparse)."""
    import scipy.sparse as sp

    if sp.issparse(terms):
        norms = np.sqrt(np.asarray(terms.multiply(terms).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sp.diags(1.0 / norms) @ terms
    terms = np.asarray(terms, dtype=np.float64)
    norms = np.linalg.norm(terms, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return terms / norms


def query_grades(decisions: Iterable[Decision]) -> dict[str, int]:
    """pmid → gain of one query's active decisions: an adjudicated grade decides its document, else the best."""
    out: dict[str, int] = {}
    adjudicated: set[str] = set()
    for d in decisions:
        gain = GRADE_GAINS.get(d.grade)
        if gain is None or d.pmid in adjudicated:
            continue
        if d.adjudication:
            adjudicated.add(d.pmid)
            out[d.pmid] = gain
        else:
            out[d.pmid] = max(out.get(d.pmid, 0), gain)
    return out


def session_scores(gains: np.ndarray, terms, rows: np.ndarray | None, config: SessionConfig) -> np.ndarray:
    """One score per candidate of a query in served order (higher first); only the ungraded ones' matter.

    Args:
        gains: (n,) the curator's gain per candidate (2 complete, 1 partial, 0 not relevant), -1 ungraded.
        terms: (n, vocabulary) the candidates' term vectors (sparse or dense), in served order.
        rows: (n, len(FEATURE_NAMES)) their feature rows (``rocchio_features``; None: that term is left out).
        config: the method and its weights.
    """
    n = len(gains)
    open_ = gains < 0
    relevant, rejected = gains > 0, gains == 0
    prior = -np.log(np.arange(1, n + 1, dtype=np.float64))  # served order, first = highest
    unit = _unit_rows(terms)
    score = config.prior * standardised(prior, open_)
    score += config.relevant * standardised(_cosine_to_centroid(unit, relevant), open_)
    score -= config.not_relevant * standardised(_cosine_to_centroid(unit, rejected), open_)
    if config.method == "rocchio_features" and rows is not None and relevant.any() and rejected.any():
        x = np.nan_to_num(np.asarray(rows, dtype=np.float64)[:, FEATURE_COLUMNS], nan=0.0)  # (n, f): NaN → absent
        spread = x.std(axis=0)
        x = (x - x.mean(axis=0)) / np.where(spread > 1e-12, spread, 1.0)
        direction = x[relevant].mean(axis=0) - x[rejected].mean(axis=0)  # (f,): the discriminant's weights
        score += config.features * standardised(x @ direction, open_)
    return score


def session_order(gains: np.ndarray, scores: np.ndarray) -> list[int]:
    """Candidate positions in their new order: graded ones keep their places, the ungraded fill the others by
    ``scores`` (ties: served order)."""
    open_ = [i for i in range(len(gains)) if gains[i] < 0]
    queue = iter(sorted(open_, key=lambda i: (-scores[i], i)))
    return [next(queue) if gains[i] < 0 else i for i in range(len(gains))]


def rerank_session(hits: Sequence[Hit], grades: Mapping[str, int], terms, rows: np.ndarray | None,
                   config: SessionConfig) -> list[Hit]:
    """``hits`` (served order) with the ungraded among the first ``config.depth`` re-ranked from ``grades``.

    Args:
        grades: pmid → gain the curator gave for this query (documents outside ``hits`` are ignored).
        terms: the first ``depth`` hits' term vectors (rows in hit order).
        rows: their feature rows (None: ``rocchio_features`` falls back to Rocchio).

    Returns:
        The hits with their new ranks; each of the first ``depth`` carries a ``session`` stage score whose rank
        is the served rank it had before (what :func:`moved` reads, for the page's arrows).
    """
    head, tail = list(hits[: config.depth]), list(hits[config.depth:])
    gains = np.asarray([grades.get(h.pmid, -1) for h in head], dtype=np.int64)
    if len(head) < 2 or not (gains >= 0).any() or not (gains < 0).any():
        return list(hits)
    scores = session_scores(gains, terms, rows, config)
    out = []
    for rank, i in enumerate(session_order(gains, scores), start=1):
        hit = head[i]
        out.append(hit._replace(rank=rank, stages=(*hit.stages, StageScore(STAGE, float(scores[i]), hit.rank))))
    return out + [hit._replace(rank=len(out) + n) for n, hit in enumerate(tail, start=1)]


def moved(hit: Hit) -> int | None:
    """The rank ``hit`` had before in-session feedback re-ranked it (None: it was not re-ranked)."""
    before = next((s.rank for s in hit.stages if s.stage == STAGE), None)
    return before if before is not None and before != hit.rank else None


def apply_session(engine, concepts: Sequence, values: Mapping[str, str], hits: Sequence[Hit],
                  grades: Mapping[str, int], documents, answer_kind: str = "",
                  config: SessionConfig | None = None) -> list[Hit]:
    """:func:`rerank_session` over a served engine: term vectors from its lexical index, feature rows as the
    learned stage computes them (with its store signals when it carries one).

    Args:
        engine: the served retriever (``engine.lexical``; ``engine.learned`` optional).
        documents: PMIDs → documents (for the text features).
    """
    config = config or SessionConfig()
    head = list(hits[: config.depth])
    if not any(h.pmid in grades for h in head):
        return list(hits)
    matrix, row_of = engine.lexical.doc_term_matrix(), engine.lexical.row_of
    import scipy.sparse as sp

    blank = sp.csr_matrix((1, matrix.shape[1]), dtype=matrix.dtype)  # a document the index lacks: no terms
    terms = sp.vstack([matrix[row_of[h.pmid]] if h.pmid in row_of else blank for h in head]).tocsr()
    rows = None
    if config.method == "rocchio_features":
        from curation.ranking.features import feature_matrix, query_key

        learned = getattr(engine, "learned", None)
        signals = learned.signals if learned is not None else None
        rows = feature_matrix(concepts, head, documents([h.pmid for h in head]), signals, query_key(values),
                              answer_kind)
    return rerank_session(hits, grades, terms, rows, config)
