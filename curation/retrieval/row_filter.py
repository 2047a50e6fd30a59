"""What the curator narrows the Curate page's results to, and their order (the **Filter and sort** panel).

Pure: rows in, rows out; the ranks stay the search's, so a curator sees where each kept abstract was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from curation.errors import CurationError
from curation.retrieval.result_rows import ResultRow

SORTS = ("relevance", "newest", "new to the KB first")
DECIDED = ("any", "undecided", "decided by me", "decided by anyone")
IN_KB = ("any", "not in the KB", "in the KB")


@dataclass(frozen=True)
class RowFilter:
    """What the curator narrows the results to, and their order.

    Attributes:
        groups: result groups kept ("all", "some"; empty: both).
        years: (first, last) publication years kept, inclusive (None: any; a row without a year is kept
            only when no range is set).
        pub_types: publication types kept (a row with any of them; empty: any).
        in_kb: one of :data:`IN_KB`. decided: one of :data:`DECIDED`, for ``curator``.
        sort: one of :data:`SORTS`; "relevance" keeps the search's order, the others are stable on it.
    """

    groups: frozenset[str] = frozenset()
    years: tuple[int, int] | None = None
    pub_types: frozenset[str] = frozenset()
    in_kb: str = "any"
    decided: str = "any"
    curator: str = ""
    sort: str = "relevance"
    only: frozenset[str] = frozenset()  # keep only these PMIDs (the abstracts new since a saved query's last look)

    def describe(self) -> str:
        parts = [f"{len(self.only)} new since your last look"] if self.only else []
        if self.groups:
            parts.append("mentions " + " or ".join(sorted(self.groups)))
        if self.years:
            parts.append(f"{self.years[0]}–{self.years[1]}")
        if self.pub_types:
            parts.append(", ".join(sorted(self.pub_types)))
        if self.in_kb != "any":
            parts.append(self.in_kb)
        if self.decided != "any":
            parts.append(self.decided)
        return "; ".join(parts)


def filter_rows(rows: Sequence[ResultRow], view: RowFilter) -> list[ResultRow]:
    """The rows ``view`` keeps, in its order (ranks stay the search's: the curator sees where each was)."""
    if view.in_kb not in IN_KB or view.decided not in DECIDED or view.sort not in SORTS:
        raise CurationError(f"unknown filter or sort: {view.in_kb!r}, {view.decided!r}, {view.sort!r}")
    me = " ".join(view.curator.split())

    def keep(row: ResultRow) -> bool:
        if view.only and row.pmid not in view.only:
            return False
        if view.groups and row.group not in view.groups:
            return False
        if view.years and (row.year is None or not view.years[0] <= row.year <= view.years[1]):
            return False
        if view.pub_types and not view.pub_types & set(row.pub_types):
            return False
        if view.in_kb != "any" and bool(row.in_kb) != (view.in_kb == "in the KB"):
            return False
        if view.decided == "undecided" and row.decisions:
            return False
        if view.decided == "decided by anyone" and not row.decisions:
            return False
        return not (view.decided == "decided by me" and not any(d.curator == me for d in row.decisions))

    kept = [row for row in rows if keep(row)]
    if view.sort == "newest":
        kept.sort(key=lambda row: -(row.year or 0))
    elif view.sort == "new to the KB first":
        kept.sort(key=lambda row: bool(row.in_kb))
    return kept
