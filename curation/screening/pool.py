"""A topic's candidates as the learner sees them: in the static (served) order, with their text, their
evidence features and, where a model version serves, their dense vectors.

:func:`evidence_rows` turns the learned stage's feature rows (:func:`curation.ranking.features.feature_matrix`)
into the columns the screening learner uses: the product's features minus the served rank and score (the
static order enters the learner as its prior, :mod:`curation.screening.learner`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from curation.ranking.features import FEATURE_NAMES, PRODUCT_FEATURES, Signals, feature_matrix, query_key
from curation.records import Document
from index.hits import Hit

# What the learner takes from the learned stage's rows: what each candidate says about the query concepts
# (mentions, title, first position, shared sentence, the relation scorer's probabilities); never its rank.
EVIDENCE_FEATURES: tuple[str, ...] = tuple(n for n in PRODUCT_FEATURES if n not in ("served_rank", "served_score"))
MAX_CANDIDATES = 2000  # a topic's queue: the served search's best 2,000


@dataclass(frozen=True)
class TopicPool:
    """One topic's candidates, best first in the static order.

    Attributes:
        pmids: (n,) the candidates in the static order.
        texts: (n,) title + abstract of each.
        evidence: (n, len(evidence_names)) evidence features (NaN: not known), or None.
        evidence_names: the columns of ``evidence``.
        dense: (n, d) the served encoder's vectors, or None.
    """

    pmids: tuple[str, ...]
    texts: tuple[str, ...]
    evidence: np.ndarray | None = None
    evidence_names: tuple[str, ...] = ()
    dense: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = len(self.pmids)
        if len(self.texts) != n:
            raise ValueError(f"a topic pool needs one text per candidate: {n} candidates, {len(self.texts)} texts")
        if len(set(self.pmids)) != n:
            raise ValueError("a topic pool lists each candidate once")
        for name, matrix in (("evidence", self.evidence), ("dense", self.dense)):
            if matrix is not None and matrix.shape[0] != n:
                raise ValueError(f"{name} has {matrix.shape[0]} rows for {n} candidates")

    def __len__(self) -> int:
        return len(self.pmids)

    def index(self) -> dict[str, int]:
        """pmid → position in the static order."""
        return {p: i for i, p in enumerate(self.pmids)}


def evidence_rows(concepts: Sequence, hits: Sequence[Hit], documents: Mapping[str, Document],
                  signals: Signals | None, values: Mapping[str, str], answer_kind: str = "") -> np.ndarray:
    """(len(hits), len(EVIDENCE_FEATURES)) the hits' evidence columns (the learned stage's rows, cut)."""
    full = feature_matrix(concepts, hits, documents, signals, query_key(values), answer_kind)
    columns = [FEATURE_NAMES.index(n) for n in EVIDENCE_FEATURES]
    return full[:, columns]


def pool_from_hits(hits: Sequence[Hit], documents: Mapping[str, Document], evidence: np.ndarray | None = None,
                   dense: np.ndarray | None = None) -> TopicPool:
    """A pool of ``hits`` in their order (a hit whose document is missing is left out, with its rows)."""
    kept = [i for i, h in enumerate(hits) if h.pmid in documents][:MAX_CANDIDATES]
    return TopicPool(
        tuple(hits[i].pmid for i in kept), tuple(documents[hits[i].pmid].text for i in kept),
        evidence[kept] if evidence is not None else None, EVIDENCE_FEATURES if evidence is not None else (),
        dense[kept] if dense is not None else None,
    )


def search_pool(engine, linker, matcher, source, documents, signals: Signals | None, schema, values: Mapping[str, str],
                mode: str = "hybrid"):
    """(the served search, its pool): a topic's candidates as the served search ranks them, up to
    :data:`MAX_CANDIDATES`, with their evidence rows (``documents``: PMIDs → documents).

    Raises:
        SearchInputError: the relation cannot be searched (the message names the slot).
    """
    from curation.retrieval.relation_search import SearchOptions, search_relation

    options = SearchOptions(mode=mode, k=MAX_CANDIDATES, depth=MAX_CANDIDATES)
    found = search_relation(engine, linker, matcher, source, documents, schema, values, options)
    hits = list(found.hits)
    docs = documents([h.pmid for h in hits])
    answer = getattr(schema, "answer", "")
    rows = evidence_rows(found.concepts, hits, docs, signals, values, schema.kind(answer) if answer else "")
    return found, pool_from_hits(hits, docs, rows)
