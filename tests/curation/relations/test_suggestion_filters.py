"""Which candidates a suggestion keeps and what it says of them: a sentence's pairs only, one candidate per
substance, generic concepts out, the direction of each sentence (tiny hand-written fixtures)."""

from __future__ import annotations

from curation.records import Document, Mention, Relation
from curation.relations.direction import (
    Direction,
    DirectionModel,
    Example,
    Head,
    balanced_threshold,
    corpus_examples,
    fit_head,
    head_of,
    mask,
    tokens,
    wanted_label,
)
from curation.relations.generic_concepts import is_generic
from curation.relations.suggestions import PairEvidence, aggregate, merge_names, name_key


class _Lexicon:
    def canonical(self, kind, cid):
        return {"D017470": "Glutamic Acid", "D018698": "Glutamates", "DB00530": "Erlotinib",
                "D000069347": "Erlotinib Hydrochloride"}.get(cid, "")


def _e(pmid, slot, cand, p, same=True, name=None):
    return PairEvidence(pmid, 1, slot, cand, name or cand, p, (0, 10), same)


def test_only_a_sentence_pair_supports_a_candidate():
    evidence = [_e("1", "Variant", "vemurafenib", 0.8), _e("1", "Gene", "vemurafenib", 0.06, same=False),
                _e("2", "Gene", "cisplatin", 0.9, same=False)]
    ranked = {c.concept_id: c for c in aggregate(evidence, ["Gene", "Variant"], combine="max", rule="noisy_or",
                                                 weight="flat", threshold=0.6, sentence=True)}
    assert ranked["vemurafenib"].supporting == 1  # the variant's sentence is enough
    assert ranked["cisplatin"].supporting == 0 and ranked["cisplatin"].score == 0.0  # two sentences apart
    # the mean of the two slots (the rule before) lost vemurafenib: 0.43 < 0.6
    (mean,) = [c for c in aggregate(evidence, ["Gene", "Variant"], combine="mean", threshold=0.6)
               if c.concept_id == "vemurafenib"]
    assert mean.supporting == 0


def test_one_candidate_per_substance():
    assert name_key("Glutamic Acid") == name_key("Glutamates") == name_key("glutamate")
    assert name_key("Erlotinib Hydrochloride") == name_key("erlotinib")
    assert name_key("Gefitinib") != name_key("Erlotinib")
    evidence = [_e("1", "Gene", "D017470", 0.9, name="Glutamic Acid"), _e("2", "Gene", "D018698", 0.9),
                _e("3", "Gene", "C1", 0.9, name="glutamate"), _e("1", "Gene", "DB00530", 0.9),
                _e("2", "Gene", "D000069347", 0.9)]
    keyed, merged = merge_names(evidence, _Lexicon(), "chemical")
    assert len({merged[c] for c in ("D017470", "D018698", "C1")}) == 1
    assert merged["DB00530"] == merged["D000069347"]
    assert len(aggregate(keyed, ["Gene"])) == 2


def test_generic_concepts_by_id_or_label():
    assert is_generic("disease", ["D009369"])
    assert is_generic("disease", ["X"], "Drug-Related Side Effects and Adverse Reactions")
    assert not is_generic("disease", ["D001943"], "Breast Neoplasms")
    assert not is_generic("chemical", ["D009369"])


def test_mask_and_tokens():
    sentence = "BRAF V600E melanoma responds to vemurafenib."
    masked = mask(sentence, [(0, 4), (5, 10)], [(32, 43)])
    assert "@a" in masked and "@b" in masked and "vemurafenib" not in masked
    assert "responds to" in tokens(masked) and "@b" in tokens(masked)


def test_heads_and_wanted_direction():
    assert head_of(["gene", "variant"], "chemical") == "therapy"
    assert head_of(["disease"], "chemical") == "disease"
    assert head_of(["gene"], "disease") is None
    assert wanted_label("Disease-Treatment", "Treatment", "disease") == "treats"
    assert wanted_label("PO", "Treatment", "therapy") is None  # resistance is PO evidence too: labelled, kept


def test_a_head_learns_the_direction_from_tiny_examples():
    examples = [Example("therapy", t, y, "civic", str(i)) for i, (t, y) in enumerate([
        ("@a tumours responded to @b", 0), ("@a confers sensitivity to @b", 0), ("@a predicts response to @b", 0),
        ("@a tumours were sensitive to @b", 0), ("@a confers resistance to @b", 1),
        ("@a tumours were resistant to @b", 1), ("acquired resistance to @b in @a", 1),
        ("@a mediates resistance to @b", 1)])]
    head = fit_head(examples, "therapy", c=10.0)
    model = DirectionModel({"therapy": head})
    assert model.direction("therapy", "patients with @a responded to @b").label == "responds to"
    assert model.direction("therapy", "@a cells showed resistance to @b").label == "resistance"
    assert model.direction("disease", "@b treats @a") is None
    assert isinstance(model.direction("therapy", "@a @b"), Direction)


def test_a_saved_model_reads_back(tmp_path):
    model = DirectionModel({"disease": Head(("treats", "induces"), {"induced": 2.0, "treatment": -2.0}, 0.0)},
                           {"note": "tiny"})
    again = DirectionModel.load(model.save(tmp_path / "direction.json"))
    assert again.direction("disease", "@b induced @a").label == "induces"
    assert again.direction("disease", "treatment of @a with @b").label == "treats"
    assert again.figures == {"note": "tiny"}


def test_corpus_relations_give_disease_examples():
    text = "Cisplatin induced nephrotoxicity. Lithium treats mania."
    doc = Document("9", "", text, mentions=(
        Mention("9", 0, 9, "Cisplatin", "Chemical", "D1"), Mention("9", 18, 32, "nephrotoxicity", "Disease", "D2"),
        Mention("9", 34, 41, "Lithium", "Chemical", "D3"), Mention("9", 49, 54, "mania", "Disease", "D4")),
        relations=(Relation("9", "CID", "D1", "D2"), Relation("9", "Negative_Correlation", "D3", "D4")))
    found = {(e.text.strip(), e.label, e.source) for e in corpus_examples([doc])}
    assert ("@b  induced  @a .", 1, "bc5cdr") in found
    assert ("@b  treats  @a .", 0, "biored") in found


def test_the_disease_threshold_balances_the_two_labels():
    # a head that leans to "induces": every sentence scores high, treats a little lower
    head = Head(("treats", "induces"), {"induced": 3.0, "reduced": 1.0}, 0.5)
    examples = [Example("disease", "@b induced @a", 1, "bc5cdr", "1")] * 10 + [
        Example("disease", "@b reduced @a", 0, "biored", "2")] * 2
    threshold = balanced_threshold(head, examples)
    assert head.probability("@b reduced @a") < threshold <= head.probability("@b induced @a")
    tuned = Head(head.labels, head.weights, head.intercept, threshold)
    assert tuned.label(tuned.probability("@b reduced @a")) == "treats"
