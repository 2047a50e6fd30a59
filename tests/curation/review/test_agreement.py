from __future__ import annotations

import pytest

from curation.grades import Grade
from curation.records import Decision, ItemKey, item_key
from curation.review.agreement import (
    KappaWeights,
    cohen_kappa,
    current_labels,
    disagreements,
    krippendorff_alpha,
    label_matrix,
    open_disagreements,
    pairwise_kappa,
    progress,
)

C, P, N = Grade.COMPLETE, Grade.PARTIAL, Grade.NOT_RELEVANT


def decision(
    decision_id: int,
    curator: str,
    grade: str,
    pmid: str,
    gene: str = "BRAF",
    note: str = "",
    superseded_by: int | None = None,
    adjudication: bool = False,
) -> Decision:
    entities = (("Gene", gene), ("Variant", "V600E"))
    query = f"Treatment for gene {gene} and variant V600E?"
    return Decision(decision_id, curator, "PO", query, entities, pmid, grade, "", note, "", superseded_by,
                    adjudication=adjudication)


def grades(curator: str, given: list[str], start: int) -> list[Decision]:
    return [decision(start + i, curator, g, str(i + 1)) for i, g in enumerate(given)]


# a: C C P N, b: C P P N (coded complete 2, partial 1, not_relevant 0).
ANA = grades("ana", [C, C, P, N], 1)
BO = grades("bo", [C, P, P, N], 11)


def test_kappa_unweighted_by_hand():
    # p_o = 3/4; marginals ana (N, P, C) = (1, 1, 2), bo = (1, 2, 1): p_e = (1 + 2 + 2) / 16 = 5/16;
    # kappa = (3/4 - 5/16) / (1 - 5/16) = 7/11.
    (pair,) = pairwise_kappa(label_matrix(ANA + BO), KappaWeights.NONE)
    assert (pair.annotator_a, pair.annotator_b, pair.shared) == ("ana", "bo", 4)
    assert pair.kappa == pytest.approx(7 / 11)
    assert pair.observed == pytest.approx(0.75)


def test_kappa_linear_weights_by_hand():
    # Weighted disagreement observed: one cell one step apart -> 1 (of 4 items);
    # expected: sum |i-j| a_i b_j / 4 = (2 + 2 + 1 + 1 + 4 + 4) / 4 = 3.5; kappa = 1 - 1 / 3.5 = 5/7.
    (pair,) = pairwise_kappa(label_matrix(ANA + BO))
    assert pair.weights is KappaWeights.LINEAR
    assert pair.kappa == pytest.approx(5 / 7)


def test_weights_follow_the_grade_order_not_the_alphabet():
    # One two-step disagreement (complete vs not_relevant) must cost more than one one-step one
    # (complete vs partial). Sorted alphabetically, complete and not_relevant would be neighbours.
    base_a = [C, P, N, C, P, N]
    near, _ = cohen_kappa(base_a + [C], [C, P, N, C, P, N, P])
    far, _ = cohen_kappa(base_a + [C], [C, P, N, C, P, N, N])
    assert near > far


def test_alpha_ordinal_by_hand():
    # Values n_N = 2, n_P = 3, n_C = 3 (n = 8). Ordinal distances: d(P, C) = (6 - 3)^2 = 9,
    # d(N, P) = 2.5^2 = 6.25, d(N, C) = (8 - 2.5)^2 = 30.25. Observed: 2 * 9 / 8 = 2.25.
    # Expected: 2 * (6 * 6.25 + 6 * 30.25 + 9 * 9) / (8 * 7) = 600 / 56. alpha = 1 - 2.25 * 56 / 600 = 0.79.
    alpha = krippendorff_alpha(label_matrix(ANA + BO))
    assert alpha.alpha == pytest.approx(0.79)
    assert (alpha.items, alpha.annotators, alpha.reason) == (4, 2, "")


def test_alpha_ignores_items_with_one_grade():
    carl = [decision(30, "carl", N, "99")]  # only carl graded PMID 99: not pairable
    assert krippendorff_alpha(label_matrix(ANA + BO + carl)).alpha == pytest.approx(0.79)


def test_one_annotator_has_no_kappa_and_no_alpha():
    matrix = label_matrix(ANA)
    assert pairwise_kappa(matrix) == []
    alpha = krippendorff_alpha(matrix)
    assert alpha.alpha is None and "two annotators" in alpha.reason


def test_no_overlap_is_reported_not_nan():
    bo = [decision(20, "bo", C, "77"), decision(21, "bo", N, "78")]
    (pair,) = pairwise_kappa(label_matrix(ANA + bo))
    assert pair.shared == 0 and pair.kappa is None and pair.observed is None
    assert "no items" in pair.reason
    alpha = krippendorff_alpha(label_matrix(ANA + bo))
    assert alpha.alpha is None and "no item" in alpha.reason


def test_identical_single_grade_is_undefined_with_a_reason():
    ana = grades("ana", [C, C, C], 1)
    bo = grades("bo", [C, C, C], 11)
    (pair,) = pairwise_kappa(label_matrix(ana + bo))
    assert pair.kappa is None and pair.observed == 1.0
    assert "only 'complete'" in pair.reason
    alpha = krippendorff_alpha(label_matrix(ana + bo))
    assert alpha.alpha is None and "'complete'" in alpha.reason


def test_perfect_agreement_with_varied_grades_is_one():
    ana = grades("ana", [C, P, N], 1)
    bo = grades("bo", [C, P, N], 11)
    (pair,) = pairwise_kappa(label_matrix(ana + bo))
    assert pair.kappa == pytest.approx(1.0)
    assert krippendorff_alpha(label_matrix(ana + bo)).alpha == pytest.approx(1.0)


def test_item_key_folds_case_and_spaces():
    a = decision(1, "ana", C, "1", gene="BRAF")
    b = decision(2, "bo", C, "1", gene=" braf ")
    assert item_key(a) == item_key(b) == ItemKey("PO", (("Gene", "braf"), ("Variant", "v600e")), "1")


def test_labels_skip_withdrawn_replaced_and_adjudications_but_keep_labels_their_author_adjudicated():
    decisions = [
        decision(1, "ana", C, "1", superseded_by=5),  # later adjudicated by ana herself: still her label
        decision(2, "bo", N, "1"),
        decision(3, "bo", P, "2", superseded_by=4),  # replaced by bo's own later grade
        decision(4, "bo", C, "2"),
        decision(5, "ana", P, "1", adjudication=True),
        decision(6, "carl", N, "2", superseded_by=6),  # withdrawn (undone)
    ]
    got = {(label.annotator, label.item.pmid): label.grade for label in current_labels(decisions)}
    assert got == {("ana", "1"): C, ("bo", "1"): N, ("bo", "2"): C}


def test_disagreements_say_who_said_what_and_close_on_adjudication():
    decisions = [*ANA, *BO]
    found = disagreements(decisions)
    assert [d.item.pmid for d in found] == ["2"]
    (one,) = found
    assert one.labels == (("ana", C), ("bo", P))
    assert dict(one.values) == {"Gene": "BRAF", "Variant": "V600E"}
    assert one.is_open
    adjudicated = [*decisions, decision(40, "dee", P, "2", adjudication=True)]
    assert open_disagreements(adjudicated) == []
    assert disagreements(adjudicated)[0].adjudication.curator == "dee"
    undone = [*decisions, decision(40, "dee", P, "2", adjudication=True, superseded_by=40)]
    assert [d.item.pmid for d in open_disagreements(undone)] == ["2"]


def test_progress_counts_items_of_the_pool():
    matrix = label_matrix(ANA + BO[:1], annotators=["carl"])
    pool = [item_key(d) for d in ANA] + [ItemKey("PO", (), "999")]
    got = {p.annotator: (p.labelled, p.total) for p in progress(matrix, pool)}
    assert got == {"ana": (4, 5), "bo": (1, 5), "carl": (0, 5)}


def test_a_note_saying_adjudication_is_not_an_adjudication():
    noted = [*ANA, *BO, decision(40, "bo", P, "2", note="adjudication")]  # bo typed it; only adjudicate() types one
    assert [d.item.pmid for d in open_disagreements(noted)] == ["2"]
