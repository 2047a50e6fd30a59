"""The learned stage as served: re-order the concept search's best N hits by a :class:`RankerModel`.

:func:`curation.retrieval.relation_search.search_relation` applies it when the served engine carries one
(``engine.learned``, set by :func:`attach`), so the Curate page, ``python -m curation search`` and the benchmark's
"served" system rank alike. Hits below N keep the concept search's order after the re-ordered ones. Each
re-ordered hit gains a ``learned`` stage score (its model score and new rank) so the page can show why it moved.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from curation.entities.query import QueryConcept
from curation.ranking.features import Signals, feature_matrix, query_key
from curation.ranking.model import RankerModel
from curation.records import Document
from index.hits import Hit, StageScore

STAGE = "learned"
RANKER_FOLDER = "ranker"  # a model version's learned stage, when it has one (ranker.txt + ranker.json)


@dataclass(frozen=True)
class LearnedStage:
    """A loaded ranker with the signals it reads (the store's, or memory's).

    Attributes:
        model: the ranker.
        signals: per-document evidence (None: only what the hit and the text say).
        folder: where the ranker was loaded from ("" when built in memory).
    """

    model: RankerModel
    signals: Signals | None = None
    folder: str = ""

    @property
    def depth(self) -> int:
        return self.model.manifest.depth

    def rerank(self, concepts: Sequence[QueryConcept], values: Mapping[str, str], hits: Sequence[Hit],
               documents: Mapping[str, Document], answer_kind: str = "") -> list[Hit]:
        """``hits`` with the best :attr:`depth` re-ordered by the model (ties keep the concept search's order)."""
        head, tail = list(hits[: self.depth]), list(hits[self.depth:])
        if len(head) < 2:
            return list(hits)
        rows = feature_matrix(concepts, head, documents, self.signals, query_key(values), answer_kind)
        scores = self.model.score(rows)
        order = sorted(range(len(head)), key=lambda i: (-scores[i], head[i].rank))
        out = []
        for rank, i in enumerate(order, start=1):
            hit = head[i]
            stages = (*hit.stages, StageScore(STAGE, float(scores[i]), rank))
            out.append(hit._replace(rank=rank, stages=stages))
        out += [hit._replace(rank=len(out) + n) for n, hit in enumerate(tail, start=1)]
        return out


def attach(engine, folder: str | Path, signals: Signals | None = None):
    """Load the ranker in ``folder`` onto ``engine`` (``engine.learned``); returns the engine.

    Raises:
        RankerError: the folder holds no usable ranker (the message says which file and why).
    """
    engine.learned = LearnedStage(RankerModel.load(folder), signals, str(folder))
    return engine
