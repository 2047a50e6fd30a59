"""The learned ranking stage's training: graded query lists over the served candidates → a LightGBM LambdaMART.

Labels (gains) per (query, document):

- a KB record citing the document for the query → :data:`KB_GAIN` (complete evidence, as the KB vouches);
- a curator's decision → complete 2, partial 1, not relevant 0 (:data:`GAINS`), resolved as the encoder's
  feedback resolves them (:func:`curation.resolution.resolve_decisions`: superseded ones dropped, an
  adjudication wins, unadjudicated disagreements left out); a decision overrides the KB for the same pair;
- every other candidate the concept search returns for the query → 0: a KB-derived hard negative, as EDEL
  takes BM25's uncited top documents (here the served first stage's, which is what the stage re-orders).

Candidates are the served search's own best ``depth`` hits (:func:`curation.retrieval.relation_search.search_relation`
with the learned stage off), so the model learns on exactly the lists it will re-order; nothing is encoded.
Which queries may be trained on is the caller's business (the gene-hashed split of
:func:`curation.learning.splits.kb_split` and the hold-out rules of :mod:`curation.learning.holdout`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from curation.grades import Grade
from curation.learning.served_fusion import ServedSearch
from curation.ranking.features import GRADE_GAINS, PRODUCT_FEATURES, Signals, feature_matrix, query_key
from curation.ranking.model import RankerManifest, RankerModel
from curation.records import Decision, KBRecord
from curation.resolution import ConflictRule, resolve_decisions
from curation.retrieval.relation_search import SearchInputError, SearchOptions, search_relation
from curation.schemas import RelationSchema
from index.hits import RunDict

KB_GAIN = 2
GAINS = GRADE_GAINS
DEPTH = 50  # candidates per query re-ordered (the dev choice of the benchmark; a manifest records its own)
# Small trees, chosen on benchmark v2's dev queries (bench/ranker.py): deeper ones fit the train queries' lists
# and lose on dev.
PARAMS = {"objective": "lambdarank", "n_estimators": 100, "learning_rate": 0.05, "num_leaves": 7,
          "min_child_samples": 50, "subsample": 1.0, "colsample_bytree": 1.0, "deterministic": True,
          "force_row_wise": True, "n_jobs": 1, "verbose": -1}


@dataclass(frozen=True)
class LabelledQuery:
    """One query with graded documents.

    Attributes:
        values: the query's slot values (as typed, or as the KB writes them).
        gains: pmid → gain (0 not relevant .. 2 complete).
        sources: where the labels came from ("kb", "decision").
    """

    values: Mapping[str, str]
    gains: Mapping[str, int]
    sources: frozenset[str] = frozenset()


def kb_queries(schema: RelationSchema, records: Iterable[KBRecord]) -> dict[str, LabelledQuery]:
    """Query key → the KB's graded positives of that query (its records' documents, gain :data:`KB_GAIN`)."""
    out: dict[str, dict] = {}
    for r in records:
        if r.schema != schema.name:
            continue
        values = {t: r.get(t) for t in schema.query_types if r.get(t)}
        if values:
            entry = out.setdefault(query_key(values), {"values": values, "gains": {}})
            entry["gains"][r.pmid] = KB_GAIN
    return {k: LabelledQuery(e["values"], e["gains"], frozenset({"kb"})) for k, e in out.items()}


def decision_queries(schema: RelationSchema, decisions: Iterable[Decision],
                     rule: ConflictRule = ConflictRule.EXCLUDE) -> dict[str, LabelledQuery]:
    """Query key → curators' graded documents for that query (one decision per item, see the module docstring)."""
    chosen, _ = resolve_decisions([d for d in decisions if d.schema == schema.name], rule)
    out: dict[str, dict] = {}
    for d in chosen:
        values = {t: v for t, v in dict(d.query_entities).items() if v}
        if values and d.grade in GAINS:
            entry = out.setdefault(query_key(values), {"values": values, "gains": {}})
            entry["gains"][d.pmid] = GAINS[Grade(d.grade)]
    return {k: LabelledQuery(e["values"], e["gains"], frozenset({"decision"})) for k, e in out.items()}


def merge_queries(kb: Mapping[str, LabelledQuery], decided: Mapping[str, LabelledQuery]) -> dict[str, LabelledQuery]:
    """Both label sources per query; a decision's gain overrides the KB's for the same document."""
    out = dict(kb)
    for key, query in decided.items():
        if key in out:
            old = out[key]
            out[key] = LabelledQuery(old.values, {**old.gains, **query.gains}, old.sources | query.sources)
        else:
            out[key] = query
    return out


@dataclass
class CandidateLists:
    """The served candidates of many queries as one learning-to-rank set.

    Attributes:
        keys: query key per list, in order; sizes: candidates per list.
        rows: (n_candidates, len(FEATURE_NAMES)) features; gains: (n_candidates,) labels.
        pmids: the candidates, in row order.
        seconds: time spent searching and computing features.
    """

    keys: list[str] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    rows: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    gains: np.ndarray = field(default_factory=lambda: np.zeros(0))
    pmids: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def lists(self) -> Iterable[tuple[str, slice]]:
        start = 0
        for key, size in zip(self.keys, self.sizes, strict=True):
            yield key, slice(start, start + size)
            start += size


def candidate_lists(search: ServedSearch, engine, queries: Mapping[str, LabelledQuery], signals: Signals | None,
                    depth: int = DEPTH, options: SearchOptions = SearchOptions()) -> CandidateLists:
    """Each query's served top ``depth`` (learned stage off) with features and gains (0 for the ungraded).

    A list's key is its key in ``queries``; a query the search refuses or finds nothing for has no list.
    """
    clock = time.perf_counter()
    out = CandidateLists()
    blocks, gains = [], []
    opts = replace(options, k=depth, learned=False)
    for key, query in queries.items():
        try:
            found = search_relation(engine, search.linker, search.matcher, search.source, search.documents,
                                    search.schema, query.values, opts)
        except SearchInputError:
            continue
        if not found.hits:
            continue
        pmids = [h.pmid for h in found.hits]
        answer = getattr(search.schema, "answer", "")
        blocks.append(feature_matrix(found.concepts, found.hits, search.documents(pmids), signals,
                                     query_key(query.values), search.schema.kind(answer) if answer else ""))
        gains += [query.gains.get(p, 0) for p in pmids]
        out.keys.append(key)
        out.sizes.append(len(pmids))
        out.pmids += pmids
    if blocks:
        out.rows = np.vstack(blocks)
    out.gains = np.asarray(gains, dtype=np.int32)
    out.seconds = time.perf_counter() - clock
    return out


def learnable(lists: CandidateLists) -> CandidateLists:
    """Only the lists with a graded-relevant candidate and a lower one: the others carry no pairwise signal."""
    keep = [(k, s) for k, s in lists.lists() if lists.gains[s].max(initial=0) > lists.gains[s].min(initial=0)]
    rows = [np.arange(s.start, s.stop) for _, s in keep]
    index = np.concatenate(rows) if rows else np.zeros(0, dtype=int)
    return CandidateLists([k for k, _ in keep], [s.stop - s.start for _, s in keep], lists.rows[index],
                          lists.gains[index], [lists.pmids[i] for i in index], lists.seconds)


def train_ranker(lists: CandidateLists, features: Sequence[str] = PRODUCT_FEATURES, depth: int = DEPTH,
                 params: Mapping[str, object] | None = None, seed: int = 13) -> tuple[RankerModel, float]:
    """A LambdaMART ranker on ``lists`` (only :func:`learnable` ones count); returns it and the training seconds.

    Raises:
        ValueError: no list has both a relevant and a lower-graded candidate.
    """
    import lightgbm

    from curation.ranking.features import FEATURE_NAMES

    usable = learnable(lists)
    if not usable.keys:
        raise ValueError("no query has both a relevant and a lower-graded candidate to learn an order from")
    columns = [FEATURE_NAMES.index(name) for name in features]
    chosen = {**PARAMS, **(params or {}), "random_state": seed}
    clock = time.perf_counter()
    ranker = lightgbm.LGBMRanker(**chosen)
    ranker.fit(usable.rows[:, columns], usable.gains, group=usable.sizes, feature_name=list(features))
    seconds = time.perf_counter() - clock
    gains = {str(g): int((usable.gains == g).sum()) for g in sorted(set(usable.gains.tolist()))}
    manifest = RankerManifest(features=tuple(features), depth=depth, library=lightgbm.__version__,
                              params={k: v for k, v in chosen.items()},
                              trained_on={"queries": len(usable.keys), "pairs": int(len(usable.gains)),
                                          "by_gain": gains, "seconds": round(seconds, 2)})
    return RankerModel(ranker.booster_, manifest), seconds


def ranked_runs(lists: CandidateLists, model: RankerModel | None) -> RunDict:
    """Each list as a run: the served order (``model`` None: score 1/rank) or the model's (ties: served order)."""
    run: RunDict = {}
    scores = model.score(lists.rows) if model is not None and len(lists.rows) else None
    for key, s in lists.lists():
        pmids = lists.pmids[s]
        if scores is None:
            run[key] = {p: 1.0 / r for r, p in enumerate(pmids, start=1)}
        else:
            order = sorted(range(len(pmids)), key=lambda i: (-scores[s][i], i))
            run[key] = {pmids[i]: 1.0 / r for r, i in enumerate(order, start=1)}
    return run
