"""bench/_asreview_peer.py: ASReview LAB 3's default model, in its own venv, reads a tiny synthetic topic."""

from __future__ import annotations

import random

import pytest

from bench._asreview_peer import ensure_venv, peer_versions, simulate, simulate_many

# Building .bench-asreview-venv (pip, ~25 s) falls on the first run of a fresh clone, as in CI.
pytestmark = pytest.mark.slow

FILLER = ("cohort trial patient outcome dose survey sample method analysis registry protocol baseline follow "
          "hospital clinical measure").split()
TOPIC = "kinase inhibitor resistance mutation".split()


@pytest.fixture(scope="module")
def peer_python():
    try:
        return ensure_venv()
    except SystemExit as exc:
        pytest.skip(f"the ASReview peer's venv could not be built here: {exc}")


def _topic(seed: int = 0) -> tuple[list[str], list[int]]:
    """40 short records; the first 8 (relevant) share the topic's words."""
    rng = random.Random(seed)
    texts = [" ".join(rng.choices(FILLER, k=12) + (TOPIC if i < 8 else [])) for i in range(40)]
    return texts, [1 if i < 8 else 0 for i in range(40)]


def test_the_default_model_reads_every_record_prior_first_relevant_early(peer_python):
    texts, labels = _topic()
    prior = [20, 0]
    order = simulate(texts, labels, prior, seed=0, python=peer_python)
    assert sorted(order) == list(range(len(texts)))
    assert order[:2] == prior
    found = [position for position, record in enumerate(order) if labels[record] and record not in prior]
    # Random screening puts a record at (n - 1) / 2 on average.
    assert sum(found) / len(found) < (len(texts) - 1) / 2
    assert max(found) < 12


def test_many_topics_in_one_process_repeat_and_match_one_by_one(peer_python):
    topics = [{"texts": _topic(seed)[0], "labels": _topic(seed)[1], "prior": [seed + 10, seed], "seed": seed}
              for seed in range(3)]
    orders = simulate_many(topics, python=peer_python, workers=2)
    assert orders == simulate_many(topics, python=peer_python)
    assert orders[1] == simulate(**topics[1], python=peer_python)


def test_the_peer_says_what_it_is(peer_python):
    versions = peer_versions(peer_python)
    assert versions["asreview"] == "3.0.8"
    assert (versions["model"], versions["feature_extractor"], versions["classifier"], versions["querier"],
            versions["balancer"]) == ("elas_u4", "tfidf", "svm", "max", "balanced")


def test_a_label_per_text_is_checked_before_the_subprocess():
    with pytest.raises(ValueError, match="topic 0: 2 texts but 1 labels"):
        simulate_many([{"texts": ["a", "b"], "labels": [1], "prior": []}], python=None)
