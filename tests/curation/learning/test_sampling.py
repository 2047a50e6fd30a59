from __future__ import annotations

from curation.learning.margins import margin_table
from curation.learning.sampling import Ablation, SamplingConfig, build_training_set
from curation.records import Document, KBRecord
from curation.schemas import PO


def _record(i, gene, variant, treatment, pmid):
    return KBRecord("PO", (("Gene", gene), ("Variant", variant), ("Treatment", treatment)), pmid, "t", str(i))


DOCS = {
    "1": Document("1", "BRAF V600E", "vemurafenib works"),  # complete positive
    "2": Document("2", "BRAF", "dabrafenib works"),  # variant missing → 0.2
    "3": Document("3", "BRAF V600K", "trametinib"),  # same gene, other variant, with answer
    "4": Document("4", "BRAF V600E", "prognosis only"),  # same gene+variant, no answer → neg (1,1,0)
    "5": Document("5", "EGFR T790M", "osimertinib"),  # shares nothing but an answer → (0,0,1)
    "6": Document("6", "cats", "nothing"),
    "7": Document("7", "dogs", "nothing"),
}
RECORDS = [
    _record(1, "BRAF", "V600E", "Vemurafenib", "1"),
    _record(2, "BRAF", "V600E", "Dabrafenib", "2"),
    _record(3, "BRAF", "V600K", "Trametinib", "3"),
    _record(4, "BRAF", "V600E", "", "4"),
    _record(5, "EGFR", "T790M", "Osimertinib", "5"),
    _record(6, "KRAS", "G12C", "Sotorasib", "99"),  # abstract not in the corpus: unused
]


def text_match(value: str, kind: str, doc: Document) -> bool:
    return value.casefold() in doc.text.casefold()


def _build(ablation=Ablation.EDEL, **kw):
    config = SamplingConfig(per_class=5, random_negatives=1, seed=1, ablation=ablation, **kw)
    return build_training_set(PO, RECORDS, DOCS, text_match, margin_table(PO), config)


def test_positives_are_graded_by_text_match():
    pairs = _build().pairs
    positives = {(p.query, p.pmid): (p.margin, p.margin_class) for p in pairs if p.positive}
    q = "Treatment for gene BRAF and variant V600E?"
    assert positives[(q, "1")] == (0.0, "pos-1")
    assert positives[(q, "2")] == (0.2, "pos-2")
    assert positives[("Treatment for gene BRAF and variant V600K?", "3")] == (0.0, "pos-1")
    assert all(p.pmid != "99" for p in pairs)
    assert all(p.pmid != "4" for p in pairs if p.positive)  # no answer: never a positive


def test_negatives_follow_kb_matching_and_never_include_positives():
    pairs = _build().pairs
    q = "Treatment for gene BRAF and variant V600E?"
    negatives = {(p.pmid, p.margin_class, p.margin) for p in pairs if not p.positive and p.query == q}
    assert ("4", "neg-3", 0.6) in negatives  # same gene and variant, no answer
    assert ("3", "neg-3", 0.6) in negatives  # same gene, other variant, answered
    assert ("5", "neg-4", 0.8) in negatives  # shares only having an answer
    assert not {"1", "2"} & {pmid for pmid, _, _ in negatives}
    random = [p for p in pairs if p.margin_class == "random" and p.query == q]
    assert random and all(p.pmid in {"5", "6", "7", "3", "4"} for p in random)


def test_counts_table():
    training = _build()
    counts = training.counts()
    assert counts["pos-1"]["positive"] == 3 and counts["pos-2"]["positive"] == 1
    assert "neg-3" in training.format_table() and "total" in training.format_table()
    assert training.sources()["kb"] >= 4


def test_ablations():
    binary = _build(Ablation.NO_MULTIMARGIN).pairs
    assert {p.margin for p in binary if p.positive} == {0.0}
    assert {p.margin for p in binary if not p.positive} == {1.0}
    complete_only = _build(Ablation.NO_NOISY_POS).pairs
    assert {p.pmid for p in complete_only if p.positive} == {"1", "3", "5"}
    random_only = _build(Ablation.NO_HARD_NEG).pairs
    assert {p.margin_class for p in random_only if not p.positive} == {"random"}


def test_deterministic_given_the_seed():
    assert _build().pairs == _build().pairs
