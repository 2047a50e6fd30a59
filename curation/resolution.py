"""Which decision decides an item: the one rule every learner turns curators' decisions into training examples by.

An item is a document for a partial relation of a schema (:class:`curation.records.ItemKey`). Of the decisions
on an item:

- superseded and withdrawn decisions never count (``superseded_by`` set: a newer judgement by the same curator,
  or an undo / withdrawal, which sets it to the decision's own id); only each curator's active one does;
- an adjudication (:func:`curation.records.is_adjudication`) decides its item, whatever the others said (the
  latest adjudication when there are several);
- curators who agree: the latest of their decisions decides (same grade; its answer and query text);
- curators who disagree, with no adjudication: :class:`ConflictRule` ``exclude`` (the default) leaves the item
  out until someone adjudicates it; ``latest`` takes the most recent decision.

:func:`resolve_decisions` is that rule. The EDEL encoder and the cross-encoder
(:mod:`curation.learning.feedback`), the learned ranker (:mod:`curation.learning.ranker.training`), the held-out
dev set (:mod:`curation.learning.holdout`) and the relation scorer (:mod:`curation.relations.training_data`) all
read decisions through it; each then turns a deciding decision into its own kind of example.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from enum import StrEnum

from curation.records import Decision, ItemKey, is_adjudication, item_key


class ConflictRule(StrEnum):
    """What an item curators disagree on, with no adjudication, gives: nothing (``exclude``) or the latest."""

    EXCLUDE = "exclude"
    LATEST = "latest"


def resolve_decisions(decisions: Iterable[Decision], rule: ConflictRule = ConflictRule.EXCLUDE
                      ) -> tuple[list[Decision], dict[str, int]]:
    """One decision per item (relation, document), by the rules in the module docstring.

    Returns:
        The deciding decision of each item that has one, in decision order, and counts
        (``superseded`` (withdrawn ones included), ``conflicts_excluded``, ``conflicts_latest``, ``adjudicated``).
    """
    rule = ConflictRule(rule)
    counts: Counter[str] = Counter()
    by_item: dict[ItemKey, list[Decision]] = {}
    for d in decisions:
        if d.superseded_by is not None:
            counts["superseded"] += 1
            continue
        by_item.setdefault(item_key(d), []).append(d)
    chosen = []
    for items in by_item.values():
        items.sort(key=lambda d: d.decision_id)
        adjudications = [d for d in items if is_adjudication(d)]
        if adjudications:
            counts["adjudicated"] += 1
            chosen.append(adjudications[-1])
            continue
        if len({d.grade for d in items}) == 1:
            chosen.append(items[-1])
        elif rule is ConflictRule.LATEST:
            counts["conflicts_latest"] += 1
            chosen.append(items[-1])
        else:
            counts["conflicts_excluded"] += 1
    chosen.sort(key=lambda d: d.decision_id)
    return chosen, dict(counts)
