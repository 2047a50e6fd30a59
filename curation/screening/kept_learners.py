"""A topic's learner kept in this process with its last rankings, and the cards a grade moved up.

A grade refits once and the ranking before it (what "moved up" compares) is the previous view's, so the learner of
each of a curator's topics of the day stays in memory (least recently used dropped); ``curation.workflows.screen``
builds the learner from the kept queue (:mod:`curation.store.screening`) and asks here for it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from curation.screening.learner import QueueRanking, ScreeningLearner
from curation.screening.pool import TopicPool

MOVED_SHOWN = 5  # cards listed as moved up by the last grade
KEPT_TOPICS = 8  # learners kept in this process (a curator's topics of the day)
KEPT_RANKINGS = 4  # rankings kept per learner: the current one and those just before it


@dataclass(frozen=True)
class MovedCard:
    """An unread card the last grade moved up the queue: its place before and after (1: next)."""

    pmid: str
    title: str
    before: int
    after: int


@dataclass
class KeptLearner:
    """A topic's learner in this process, and its last rankings (by the grades they were made from)."""

    pool: TopicPool
    titles: dict[str, str]
    hits: tuple[str, ...]  # (candidates,) each candidate's hit as kept (JSON text)
    learner: ScreeningLearner
    rankings: OrderedDict = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def rank(self, gains: np.ndarray) -> QueueRanking:
        key = gains.tobytes()
        with self.lock:
            if key in self.rankings:
                self.rankings.move_to_end(key)
                return self.rankings[key]
        ranking = self.learner.rank(gains)  # outside the lock: another session may rank meanwhile
        with self.lock:
            self.rankings[key] = ranking
            while len(self.rankings) > KEPT_RANKINGS:
                self.rankings.popitem(last=False)
        return ranking


_kept: OrderedDict[tuple, KeptLearner] = OrderedDict()  # the topics' learners here, least recently used first
_kept_lock = threading.Lock()


def kept_learner(key: tuple, build: Callable[[], KeptLearner]) -> KeptLearner:
    """The learner kept under ``key``, else ``build()``'s, kept (the least recently used past KEPT_TOPICS dropped)."""
    with _kept_lock:
        if key in _kept:
            _kept.move_to_end(key)
            return _kept[key]
    entry = build()  # outside the lock: building a topic's text features takes a moment
    with _kept_lock:
        entry = _kept.setdefault(key, entry)
        while len(_kept) > KEPT_TOPICS:
            _kept.popitem(last=False)
    return entry


def forget_learners() -> None:
    """Drop the learners this process keeps (what a restart does): a topic's next view builds its learner again."""
    with _kept_lock:
        _kept.clear()


def moved_up(entry: KeptLearner, before: QueueRanking, after: QueueRanking, graded: int) -> tuple[MovedCard, ...]:
    """The unread cards ranked higher ``after`` than ``before`` (the ranking before ``graded`` was graded)."""
    if not after.fitted:
        return ()
    places = {p: n for n, p in enumerate((p for p in before.order if p != graded), start=1)}
    moves = sorted(((places[p] - n, n, p) for n, p in enumerate(after.order, start=1) if places.get(p, n) > n),
                   key=lambda m: (-m[0], m[1]))  # the longest moves first
    return tuple(MovedCard(entry.pool.pmids[p], entry.titles[entry.pool.pmids[p]], n + up, n)
                 for up, n, p in moves[:MOVED_SHOWN])
