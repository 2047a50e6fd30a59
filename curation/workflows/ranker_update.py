"""Update the ranker (Train & evaluate's default action): the KB and the decisions → a learned stage, in seconds.

:func:`start_ranker_update` runs :func:`update_and_activate` in a background thread of the app (the served engine,
matcher and linker are already loaded there, so nothing is loaded or encoded again); the page polls
:func:`ranker_panel`. Training, keeping and activating an update over the store is
:mod:`curation.learning.ranker.update`'s: kept under the serving version's folder (:mod:`curation.ranking.history`),
activated, and attached to the served engine at once, only when the gate's paired-bootstrap interval of its dev
NDCG@10 gain over the concept search alone is above 0 (:func:`curation.learning.ranker.build.update_ranker`); once the
decisions grade three topics or more (screening grades count like any decision), dev is the held-out topics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from curation import access
from curation.access import Action, Who
from curation.entities.matching import Matcher
from curation.entities.query import QueryLinker
from curation.errors import CurationError
from curation.learning.ranker.update import RankerOutcome, serving_ranker_home, update_from_store
from curation.ranking.history import list_updates
from curation.runtime.background import Background
from curation.schemas import RelationSchema

_RUNS: dict[str, Background] = {}  # schema → this process's latest update (running or done)


@dataclass(frozen=True)
class ChangedQuery:
    """A dev query whose order a ranker changed: its text, NDCG@10 before / after, documents' ranks before / after."""

    query: str
    ndcg10_before: float
    ndcg10_after: float
    documents: tuple[tuple[str, int | None, int | None, int], ...]  # (pmid, rank before, rank after, gain)


@dataclass(frozen=True)
class RankerRow:
    """One kept update as the page shows it."""

    name: str
    active: bool
    improved: bool
    verdict: str
    gain: float
    low: float
    high: float
    queries: int
    trained_on: str
    features: tuple[tuple[str, float], ...]  # (feature, share of the split gain), largest first
    changed: tuple[ChangedQuery, ...]
    decisions: int = 0  # decisions trained on
    dev_before: float = 0.0  # dev NDCG@10 of the concept search alone
    dev_after: float = 0.0  # and with this ranker re-ordering its top N


@dataclass(frozen=True)
class RankerPanel:
    """The ranker section of Train & evaluate.

    Attributes:
        version: the serving version whose rankers these are (BM25 alone: ``bm25``; "" while it loads).
        running: an update is running in this process.
        last: the last finished update of this process (None: none yet), or error: why it failed.
        updates: the kept updates, newest first; problems: folders that cannot be read.
    """

    version: str
    running: bool
    last: RankerOutcome | None
    error: str
    updates: tuple[RankerRow, ...]
    problems: tuple[str, ...]


def update_and_activate(con: duckdb.DuckDBPyConnection, engine, matcher: Matcher, linker: QueryLinker,
                        schema: RelationSchema, models_dir: Path, who: Who = "") -> RankerOutcome:
    """Train a ranker on the store's KB and decisions, keep it, and activate it (attached to ``engine``) when the gate
    passes.

    Raises:
        CurationError: ``who`` may not train, or there is nothing to learn from.
    """
    access.require(con, who, Action.TRAIN)
    return update_from_store(con, engine, matcher, linker, schema, models_dir)


def start_ranker_update(con: duckdb.DuckDBPyConnection, engine, matcher: Matcher, linker: QueryLinker,
                        schema: RelationSchema, models_dir: Path, who: Who = "") -> None:
    """Run :func:`update_and_activate` in a background thread (its own cursor on the store).

    Raises:
        CurationError: ``who`` may not train, or an update of this schema is already running.
    """
    access.require(con, who, Action.TRAIN)
    running = _RUNS.get(schema.name)
    if running is not None and not running.ready():
        raise CurationError("the ranker is already being updated; its outcome shows here when it ends")
    cursor = con.cursor()  # a DuckDB connection is not for concurrent use, a cursor is

    def run() -> RankerOutcome:
        return update_and_activate(cursor, engine, matcher, linker, schema, models_dir, who)

    _RUNS[schema.name] = Background(run, f"ranker-update-{schema.name}")


def _row(update) -> RankerRow:
    manifest = update.model.manifest
    dev = manifest.dev or {}
    trained = manifest.trained_on or {}
    changed = tuple(ChangedQuery(", ".join(f"{k}: {v}" for k, v in q.get("values", {}).items()),
                                 q.get("ndcg10_before", 0.0), q.get("ndcg10_after", 0.0),
                                 tuple((d["pmid"], d.get("before"), d.get("after"), d.get("gain", 0))
                                       for d in q.get("documents", ())))
                    for q in manifest.changed)
    held = f"{trained.get('decisions_held_out', 0)} held out for dev"
    if trained.get("dev_source") == "topics":  # judged leave-topic-out: each topic left out of training in turn
        held += f"; {trained.get('topics', 0)} topics, each left out of training in turn to judge it"
    learned = (f"{trained.get('kb_records', 0)} KB records, {trained.get('decisions_trained_on', 0)} decisions "
               f"({held}), {trained.get('pairs', 0)} labelled pairs")
    return RankerRow(update.name, update.active, bool(dev.get("improved")), str(dev.get("verdict", "")),
                     float(dev.get("mean_delta", 0.0)), float(dev.get("low", 0.0)), float(dev.get("high", 0.0)),
                     int(dev.get("queries", 0)), learned, tuple(update.model.gain_per_feature().items()), changed,
                     int(trained.get("decisions_trained_on", 0)), float(dev.get("baseline_mean", 0.0)),
                     float(dev.get("new_mean", 0.0)))


def learning_curve(rows: Sequence[RankerRow]) -> list[dict[str, float | int | str]]:
    """The store's own learning curve: per kept update with dev queries, oldest first, the decisions it learned from
    and its dev NDCG@10 with and without it (each update measured on the dev set of its day)."""
    return [{"update": r.name, "decisions trained on": r.decisions, "dev queries": r.queries,
             "concept search alone": round(r.dev_before, 4), "with the ranker": round(r.dev_after, 4)}
            for r in reversed(rows) if r.queries]


def ranker_panel(con: duckdb.DuckDBPyConnection, version: str, schema: RelationSchema, models_dir: Path
                 ) -> RankerPanel:
    """What the ranker section draws: this process's update (running, or its outcome) and the kept updates of the
    serving ``version`` (its name, known before its engine has loaded; "": not listed)."""
    path = serving_ranker_home(con, version, models_dir, schema) if version else None
    run = _RUNS.get(schema.name)
    last, error = None, ""
    if run is not None and run.ready():
        try:
            last = run.result()
        except Exception as exc:  # shown on the page: the thread's failure is the curator's to see
            error = str(exc) if isinstance(exc, CurationError) else f"the update failed: {type(exc).__name__}: {exc}"
    updates, problems = list_updates(path) if path is not None else ([], [])
    return RankerPanel(version, run is not None and not run.ready(), last, error,
                       tuple(_row(u) for u in updates), tuple(problems))
