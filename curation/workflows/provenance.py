"""A result card's decision history (the Curate page); how provenance is built and read is
:mod:`curation.review.provenance`'s."""

from __future__ import annotations

from collections.abc import Sequence

from curation.records import Decision
from curation.review import provenance


def decision_history(decisions: Sequence[Decision], team: bool = False) -> list[str]:
    """One line per decision, oldest first (:func:`curation.review.provenance.decision_history`); ``team``: the
    store is a team store, where a self-declared name is marked so."""
    return provenance.decision_history(decisions, team)
