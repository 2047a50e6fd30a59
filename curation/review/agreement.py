"""Agreement between annotators who graded the same (relation, document) pairs.

Pure functions over :class:`~curation.records.Decision` records: the label matrix
(annotator × item, an item being one (schema, relation, PMID)), Cohen's kappa for every pair of
annotators, Krippendorff's alpha over everyone, each annotator's progress through a pool of
items, and the items whose labels differ (to adjudicate).

Grades are ordinal — complete > partial > not_relevant — so both coefficients weigh a
complete-vs-not_relevant disagreement more than a complete-vs-partial one: kappa is linearly
weighted by default (each step on the scale costs the same; quadratic weights would make the
one two-step disagreement count four times a one-step one, which the three grades do not
justify), and alpha uses Krippendorff's ordinal metric.

Adjudications (decisions with the typed ``adjudication`` field; a note is only text) are final grades, not independent
labels: they close a disagreement and never count as an annotator's label. Because the store
lets a curator's new decision on an item supersede their earlier one, an annotator who later
adjudicates the same item supersedes their own label; pass
``curation.store.decisions.list_decisions(con, include_superseded=True)`` so that label still counts (active-only
decisions also work, and merely lose such labels).

References:
    Cohen (1968), "Weighted kappa", Psychological Bulletin 70(4).
    Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", Univ. of Pennsylvania.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import combinations

import krippendorff
import numpy as np
from sklearn.metrics import cohen_kappa_score

from curation.grades import ORDINAL_GRADES, Grade
from curation.records import Decision, ItemKey, is_adjudication, item_key


class KappaWeights(StrEnum):
    """How far apart two grades are for Cohen's kappa (sklearn's ``weights``)."""

    NONE = "none"
    LINEAR = "linear"
    QUADRATIC = "quadratic"


@dataclass(frozen=True)
class Label:
    """An annotator's current grade of one item."""

    annotator: str
    item: ItemKey
    grade: Grade
    decision: Decision


@dataclass(frozen=True)
class LabelMatrix:
    """Grades by annotator (rows) and item (columns); None where an annotator has not graded."""

    annotators: tuple[str, ...]
    items: tuple[ItemKey, ...]
    grades: tuple[tuple[str | None, ...], ...]  # (n_annotators, n_items)

    def codes(self) -> np.ndarray:
        """Ordinal codes (ORDINAL_GRADES positions) as floats, NaN where missing: (n_annotators, n_items)."""
        out = np.full((len(self.annotators), len(self.items)), np.nan)
        for row, grades in enumerate(self.grades):
            for column, grade in enumerate(grades):
                if grade is not None:
                    out[row, column] = ORDINAL_GRADES.index(grade)
        return out


@dataclass(frozen=True)
class PairKappa:
    """Cohen's kappa of two annotators over the items both graded.

    Attributes:
        kappa: the coefficient, or None when it is undefined (``reason`` says why).
        observed: share of shared items given the same grade (None without shared items).
    """

    annotator_a: str
    annotator_b: str
    shared: int
    kappa: float | None
    observed: float | None
    weights: KappaWeights
    reason: str = ""


@dataclass(frozen=True)
class Alpha:
    """Krippendorff's alpha (ordinal) over every annotator; None with a reason when undefined."""

    alpha: float | None
    items: int  # items graded by at least two annotators (the only ones alpha uses)
    annotators: int
    reason: str = ""


@dataclass(frozen=True)
class AnnotatorProgress:
    annotator: str
    labelled: int  # items of the pool this annotator has graded
    total: int  # items in the pool

    @property
    def share(self) -> float:
        return self.labelled / self.total if self.total else 0.0


@dataclass(frozen=True)
class Disagreement:
    """An item whose annotators gave different grades.

    Attributes:
        query, values: the relation as the first label recorded it (values to re-record it).
        labels: (annotator, grade) pairs, in annotator order.
        adjudication: the active adjudication decision, or None while the disagreement is open.
    """

    item: ItemKey
    query: str
    values: tuple[tuple[str, str], ...]
    labels: tuple[tuple[str, str], ...]
    adjudication: Decision | None = None

    @property
    def is_open(self) -> bool:
        return self.adjudication is None


def _withdrawn(decision: Decision) -> bool:
    # An undo marks a decision superseded by itself.
    return decision.superseded_by == decision.decision_id


def current_labels(decisions: Iterable[Decision]) -> list[Label]:
    """Each annotator's current grade of each item, adjudications left out.

    A label counts when it is active, or was superseded only by an adjudication (its author
    later adjudicated the item); of several, the latest counts. Sorted by annotator, then item.
    """
    decisions = list(decisions)
    adjudication_ids = {d.decision_id for d in decisions if is_adjudication(d)}
    latest: dict[tuple[str, ItemKey], Decision] = {}
    for d in decisions:
        if is_adjudication(d) or _withdrawn(d) or d.grade not in ORDINAL_GRADES:
            continue
        if d.superseded_by is not None and d.superseded_by not in adjudication_ids:
            continue
        key = (d.curator, item_key(d))
        if key not in latest or d.decision_id > latest[key].decision_id:
            latest[key] = d
    return [Label(a, item, d.grade, d) for (a, item), d in sorted(latest.items(), key=lambda kv: kv[0])]


def label_matrix(decisions: Iterable[Decision], annotators: Sequence[str] = ()) -> LabelMatrix:
    """The annotator × item grade matrix of :func:`current_labels`.

    Args:
        decisions: decisions of any curators (pass superseded ones too; see the module docstring).
        annotators: names to include even without labels (e.g. the current annotator).
    """
    labels = current_labels(decisions)
    extra = {" ".join(a.split()) for a in annotators if a.strip()}
    names = tuple(sorted({label.annotator for label in labels} | extra))
    items = tuple(sorted({label.item for label in labels}))
    row_of = {name: i for i, name in enumerate(names)}
    column_of = {item: j for j, item in enumerate(items)}
    grid: list[list[str | None]] = [[None] * len(items) for _ in names]
    for label in labels:
        grid[row_of[label.annotator]][column_of[label.item]] = label.grade
    return LabelMatrix(names, items, tuple(tuple(row) for row in grid))


def cohen_kappa(
    a: Sequence[str], b: Sequence[str], weights: KappaWeights | str = KappaWeights.LINEAR
) -> tuple[float | None, str]:
    """Cohen's kappa of two equally long grade sequences: (kappa, "") or (None, why not).

    Grades are passed to sklearn as ordinal codes with every grade listed, so the weights see
    complete–partial–not_relevant in that order (sklearn's own sort would be alphabetical).
    """
    weights = KappaWeights(weights)
    if len(a) != len(b):
        raise ValueError(f"the two annotators' grade lists differ in length: {len(a)} and {len(b)}")
    if not a:
        return None, "no items graded by both"
    used = set(a) | set(b)
    if len(used) == 1:
        # Chance agreement is 1 as well: kappa is 0/0, not a measure of anything.
        return None, f"both gave only '{next(iter(used))}' on the {len(a)} shared items: kappa is undefined"
    codes_a = [ORDINAL_GRADES.index(g) for g in a]
    codes_b = [ORDINAL_GRADES.index(g) for g in b]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = cohen_kappa_score(
            codes_a,
            codes_b,
            labels=list(range(len(ORDINAL_GRADES))),
            weights=None if weights is KappaWeights.NONE else weights.value,
        )
    if not np.isfinite(value):
        return None, "chance agreement is total: kappa is undefined"
    return float(value), ""


def pairwise_kappa(matrix: LabelMatrix, weights: KappaWeights | str = KappaWeights.LINEAR) -> list[PairKappa]:
    """Cohen's kappa for every pair of annotators, over the items both graded."""
    weights = KappaWeights(weights)
    out = []
    for i, j in combinations(range(len(matrix.annotators)), 2):
        pairs = [(x, y) for x, y in zip(matrix.grades[i], matrix.grades[j], strict=True) if x and y]
        a, b = [x for x, _ in pairs], [y for _, y in pairs]
        kappa, reason = cohen_kappa(a, b, weights)
        observed = sum(x == y for x, y in pairs) / len(pairs) if pairs else None
        out.append(PairKappa(matrix.annotators[i], matrix.annotators[j], len(pairs), kappa, observed, weights, reason))
    return out


def krippendorff_alpha(matrix: LabelMatrix) -> Alpha:
    """Krippendorff's alpha, ordinal level, over every annotator and item (missing grades allowed)."""
    codes = matrix.codes()  # (n_annotators, n_items), NaN where not graded
    annotators = len(matrix.annotators)
    shared = codes[:, np.sum(~np.isnan(codes), axis=0) >= 2]  # (n_annotators, n_pairable)
    pairable = shared.shape[1]
    if annotators < 2:
        return Alpha(None, pairable, annotators, "alpha needs at least two annotators")
    if pairable == 0:
        return Alpha(None, 0, annotators, "no item has been graded by two annotators yet")
    used = np.unique(shared[~np.isnan(shared)])
    if len(used) == 1:
        # Expected disagreement is 0 as well: alpha is 0/0.
        grade = ORDINAL_GRADES[int(used[0])]
        return Alpha(None, pairable, annotators, f"every shared item was graded '{grade}': alpha is undefined")
    value = krippendorff.alpha(
        reliability_data=codes, level_of_measurement="ordinal", value_domain=list(range(len(ORDINAL_GRADES)))
    )
    return Alpha(float(value), pairable, annotators)


def progress(matrix: LabelMatrix, pool: Iterable[ItemKey]) -> list[AnnotatorProgress]:
    """How many items of ``pool`` each annotator of ``matrix`` has graded."""
    pool = set(pool)
    out = []
    for name, grades in zip(matrix.annotators, matrix.grades, strict=True):
        done = sum(1 for item, grade in zip(matrix.items, grades, strict=True) if grade and item in pool)
        out.append(AnnotatorProgress(name, done, len(pool)))
    return out


def disagreements(decisions: Iterable[Decision]) -> list[Disagreement]:
    """Items whose annotators' current grades differ, with who said what and any adjudication.

    The adjudication is the latest active adjudication decision on the item (by anyone).
    """
    decisions = list(decisions)
    by_item: dict[ItemKey, list[Label]] = {}
    for label in current_labels(decisions):
        by_item.setdefault(label.item, []).append(label)
    adjudicated: dict[ItemKey, Decision] = {}
    for d in sorted(decisions, key=lambda d: d.decision_id):
        if is_adjudication(d) and d.superseded_by is None:
            adjudicated[item_key(d)] = d  # the latest wins
    out = []
    for item in sorted(by_item):
        labels = by_item[item]
        if len({label.grade for label in labels}) < 2:
            continue
        first = min(labels, key=lambda label: label.decision.decision_id).decision
        out.append(
            Disagreement(
                item,
                first.query,
                first.query_entities,
                tuple((label.annotator, label.grade) for label in labels),
                adjudicated.get(item),
            )
        )
    return out


def open_disagreements(decisions: Iterable[Decision]) -> list[Disagreement]:
    """Disagreements no one has adjudicated yet (no active adjudication decision on the item)."""
    return [d for d in disagreements(decisions) if d.is_open]
