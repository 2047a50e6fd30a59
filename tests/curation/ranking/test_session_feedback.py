"""In-session feedback: a query's grades re-rank its ungraded results at once (Rocchio over term vectors, plus a
per-query linear model over the product features), the graded keep their places, and the served search applies it
for every caller alike."""

from __future__ import annotations

import numpy as np
import pytest

from curation.grades import Grade
from curation.ranking.features import FEATURE_NAMES
from curation.ranking.session import (
    SessionConfig,
    moved,
    query_grades,
    rerank_session,
    session_order,
    session_scores,
)
from curation.records import Decision
from index.hits import Hit
from tests.curation.ranking.tiny_ranker import QUERY, _search

# Five candidates over a four-term vocabulary: 0 and 3 share "alpha", 1 and 4 share "beta".
TERMS = np.array([[1.0, 0, 0, 0.2], [0, 1.0, 0, 0.2], [0, 0, 1.0, 0], [0.9, 0, 0, 0.1], [0, 0.9, 0, 0.1]])


def test_rocchio_lifts_what_resembles_the_relevant_and_sinks_what_resembles_the_rejected():
    gains = np.array([2, 0, -1, -1, -1])  # first graded complete, second not relevant
    config = SessionConfig("rocchio", prior=0.1, relevant=1.0, not_relevant=1.0)
    order = session_order(gains, session_scores(gains, TERMS, None, config))
    assert order[:2] == [0, 1]  # the graded keep their places
    assert order[2:] == [3, 2, 4]  # like 0 first, like 1 last
    # With no feedback weight the served order stands.
    flat = SessionConfig("rocchio", prior=1.0, relevant=0.0, not_relevant=0.0)
    assert session_order(gains, session_scores(gains, TERMS, None, flat)) == [0, 1, 2, 3, 4]


def test_the_feature_model_learns_the_direction_that_separates_the_grades():
    rows = np.zeros((5, len(FEATURE_NAMES)))
    column = FEATURE_NAMES.index("shared_sentence")
    rows[:, column] = [3, 0, 0, 3, 0]  # the relevant one names the concepts in one sentence; so does candidate 3
    gains = np.array([2, 0, -1, -1, -1])
    blank = np.ones((5, 4))  # identical term vectors: Rocchio alone cannot tell them apart
    features = SessionConfig("rocchio_features", prior=0.1, relevant=1.0, not_relevant=0.0, features=1.0)
    assert session_order(gains, session_scores(gains, blank, rows, features))[2] == 3
    rocchio = SessionConfig("rocchio", prior=0.1, relevant=1.0, not_relevant=0.0)
    assert session_order(gains, session_scores(gains, blank, rows, rocchio)) == [0, 1, 2, 3, 4]


def test_rerank_session_marks_what_moved_and_leaves_an_ungraded_list_alone():
    hits = [Hit(str(i), i + 1, 1.0 / (i + 1), None, None) for i in range(5)]
    config = SessionConfig("rocchio", prior=0.1, relevant=1.0, not_relevant=1.0)
    out = rerank_session(hits, {"0": 2, "1": 0}, TERMS, None, config)
    assert [h.pmid for h in out] == ["0", "1", "3", "2", "4"] and [h.rank for h in out] == [1, 2, 3, 4, 5]
    assert moved(out[2]) == 4 and moved(out[3]) == 3 and moved(out[0]) is None
    assert rerank_session(hits, {}, TERMS, None, config) == hits
    assert rerank_session(hits, {"9": 2}, TERMS, None, config) == hits  # a grade outside the list: nothing to learn


def test_an_adjudicated_grade_decides_and_otherwise_the_best_counts():
    def decision(pmid, grade, adjudication=False):
        return Decision(0, "ann", "GDT", "BRAF", (("Gene", "BRAF"),), pmid, grade, adjudication=adjudication)

    grades = query_grades([decision("1", Grade.PARTIAL), decision("1", Grade.COMPLETE), decision("2", Grade.COMPLETE),
                           decision("2", Grade.NOT_RELEVANT, adjudication=True), decision("2", Grade.COMPLETE)])
    assert grades == {"1": 2, "2": 0}


def test_the_served_search_applies_the_grades_and_keeps_the_graded_in_place(setup):
    engine, search = setup
    plain = [h.pmid for h in _search(engine, search, QUERY, k=10).hits]
    assert len(plain) >= 3
    graded = {plain[0]: 0}  # the first result rejected
    hits = _search(engine, search, QUERY, k=10, grades=graded).hits
    assert hits[0].pmid == plain[0] and sorted(h.pmid for h in hits) == sorted(plain)
    assert all(any(s.stage == "session" for s in h.stages) for h in hits)
    with pytest.raises(ValueError, match="unknown in-session method"):
        SessionConfig("nearest")


def test_the_product_serves_the_configuration_chosen_on_dev():
    import json
    from dataclasses import asdict

    from curation.config import PROJECT_ROOT

    report = json.loads((PROJECT_ROOT / "bench" / "results" / "feedback.json").read_text())
    assert asdict(SessionConfig()) == report["session_feedback"]["chosen_on_dev"]
