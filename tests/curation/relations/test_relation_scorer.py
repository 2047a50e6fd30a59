"""The relation scorer: candidate pairs, labels, the held-out rule, features, training and the saved form."""

from __future__ import annotations

import numpy as np
import pytest

from curation.records import Document, Mention, Relation
from curation.relations.evaluation import pair_scores, uncovered
from curation.relations.features import FEATURES, pair_features
from curation.relations.pairs import RelationError, candidate_pairs, training_pairs
from curation.relations.scorer import RelationScorer

TITLE = "Lithium toxicity in a newborn."
ABSTRACT = ("Lithium induced nephrogenic diabetes insipidus in the infant. Aspirin was given. "
            "The infant also had a fever, unrelated to aspirin.")


def _doc(pmid="1", relations=(("D008094", "D018500"),)):
    text = f"{TITLE} {ABSTRACT}"

    def m(word, kind, cid, nth=0):
        start = -1
        for _ in range(nth + 1):
            start = text.index(word, start + 1)
        return Mention(pmid, start, start + len(word), word, kind, cid)

    mentions = (m("Lithium", "Chemical", "D008094"), m("toxicity", "Disease", "D064420"),
                m("Lithium", "Chemical", "D008094", 1), m("nephrogenic diabetes insipidus", "Disease", "D018500"),
                m("Aspirin", "Chemical", "D001241"), m("fever", "Disease", "D005334"),
                m("aspirin", "Chemical", "D001241"))
    return Document(pmid, TITLE, ABSTRACT, mentions=mentions,
                    relations=tuple(Relation(pmid, "CID", a, b) for a, b in relations))


def test_candidate_pairs_are_every_co_mentioned_pair_labelled_by_the_gold_relations():
    pairs = candidate_pairs(_doc())
    assert len(pairs) == 10  # five concepts (lithium, toxicity, NDI, aspirin, fever), each pair once
    positives = [(p.concept_a, p.concept_b) for p in pairs if p.label]
    assert positives == [("D008094", "D018500")]
    cid = candidate_pairs(_doc(), types={frozenset(("Chemical", "Disease"))})
    assert {(p.type_a, p.type_b) for p in cid} <= {("Chemical", "Disease"), ("Disease", "Chemical")}
    assert len(cid) == 6  # two chemicals × three diseases


def test_a_held_out_document_is_refused_for_training():
    with pytest.raises(RelationError, match="document 7 is held out"):
        training_pairs([_doc("7")], held_out={"7"})
    pairs, used = training_pairs([_doc("8"), _doc("9", relations=())], held_out={"7"})
    assert [d.pmid for d in used] == ["8"] and {p.pmid for p in pairs} == {"8"}


def test_features_see_sentences_and_triggers():
    doc = _doc()
    pairs = {(p.concept_a, p.concept_b): p for p in candidate_pairs(doc)}
    related = pair_features(doc, pairs[("D008094", "D018500")])
    apart = pair_features(doc, pairs[("D001241", "D008094")])
    f = FEATURES.index
    assert related[f("same_sentence")] == 1.0 and related[f("near_cause")] == 1.0  # "Lithium induced ..."
    assert apart[f("same_sentence")] == 0.0 and apart[f("min_sentences")] >= 1
    assert related[f("types_Chemical-Disease")] == 1.0 and apart[f("types_Chemical-Chemical")] == 1.0


def test_the_scorer_learns_saves_and_loads(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, len(FEATURES))).astype(np.float32)
    y = (x[:, 0] + 0.3 * rng.normal(size=400) > 0).astype(int)
    scorer = RelationScorer.fit(x, y)
    p = scorer.probabilities(x)
    assert ((p >= scorer.threshold) == y).mean() > 0.85
    loaded = RelationScorer.load(scorer.save(tmp_path / "scorer.json"))
    assert np.allclose(loaded.probabilities(x), p) and loaded.threshold == scorer.threshold
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(RelationError, match="bad.json cannot be read"):
        RelationScorer.load(tmp_path / "bad.json")
    with pytest.raises(RelationError, match="both related and unrelated"):
        RelationScorer.fit(x, np.ones(400, dtype=int))


def test_pair_scores_count_uncovered_gold_as_misses():
    doc = _doc(relations=(("D008094", "D018500"), ("D008094", "D999999")))  # the second concept is never mentioned
    pairs = candidate_pairs(doc)
    missed = uncovered([doc], pairs)
    assert missed == 1
    scores = pair_scores([p.label for p in pairs], [p.label for p in pairs], missed)
    assert scores["precision"] == 1.0 and scores["recall"] == 0.5
