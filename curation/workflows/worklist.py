"""The worklist on the Curate page: the KB's relations still without an answer, who took which."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from curation import access
from curation.access import Action, Who
from curation.schemas import RelationSchema
from curation.store.worklist import fill_worklist_from_kb, list_worklist, set_worklist_status

OPEN_STATUSES = ("open", "in_progress")  # a relation still to answer: nobody took it, or someone is on it


@dataclass(frozen=True)
class Worklist:
    """The worklist panel: every item (as table rows) and the open ones, next first."""

    rows: list[dict[str, object]]
    open_items: list[dict[str, object]]

    @property
    def caption(self) -> str:
        return f"{len(self.open_items)} open of {len(self.rows)}"


def open_worklist(con: duckdb.DuckDBPyConnection, schema: RelationSchema) -> Worklist:
    """The schema's worklist as the Curate page shows it."""
    items = worklist(con, schema)
    return Worklist(worklist_table(items), [i for i in items if i["status"] in OPEN_STATUSES])


def worklist(con: duckdb.DuckDBPyConnection, schema: RelationSchema) -> list[dict[str, object]]:
    """The schema's worklist: each relation with status, assignee and how many abstracts were judged."""
    return list_worklist(con, schema)


def worklist_table(items: list[dict[str, object]]) -> list[dict[str, object]]:
    """The worklist as table rows: id, the relation's slots, status, assignee, abstracts judged."""
    return [{"id": i["item_id"], **i["values"], "status": i["status"], "assignee": i["assignee"],
             "judged": i["judged"]} for i in items]


def fill_worklist(con: duckdb.DuckDBPyConnection, schema: RelationSchema, *, who: Who = "") -> int:
    """Add the KB's relations that have no answer yet to the worklist; returns how many were added."""
    access.require(con, who, Action.TAKE_WORK)
    return fill_worklist_from_kb(con, schema)


def take_worklist_item(con: duckdb.DuckDBPyConnection, item_id: int, curator: Who) -> None:
    """Mark a worklist relation as in progress by ``curator``."""
    identity = access.require(con, curator, Action.TAKE_WORK)
    set_worklist_status(con, item_id, "in_progress", identity.name)
