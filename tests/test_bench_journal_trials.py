"""bench/backup.py's two journal trials on a small store: a kill between a decision's journal line and its
COMMIT (bench/_kill_campaign.py), and the WAL and the journal both cut (bench/_recovery_figures.py); each
checks the notices' words against what happened."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench._kill_campaign import journal_commit_kills
from bench._recovery_figures import double_fault_trials
from bench.backup import durability_goals
from curation.records import Document
from curation.store.base import transaction
from curation.store.corpus import add_documents
from curation.store.opening import open_store

PMIDS = [str(3000000 + n) for n in range(5)]


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "store.duckdb"
    con = open_store(path)
    with transaction(con):
        add_documents(con, [Document(p, f"Title {p}", f"Abstract {p}.") for p in PMIDS])
    con.close()
    return path


def test_a_kill_between_journal_and_commit_is_restored_and_called_never_confirmed(db):
    result = journal_commit_kills(db, kills=2)
    assert result["lost"] == 0 and result["restored_never_confirmed"] == 2
    assert result["messages_true"] == 2, result["messages_wrong"]
    goals = durability_goals({"kill_9": {"lost": 0}, "journal_commit_kill": result})
    assert goals["journal_notices_untrue"] == {"value": 0, "target": 0, "op": "<=", "met": True}


def test_a_double_fault_is_counted_and_the_backup_that_has_the_decisions_named(db, tmp_path):
    result = double_fault_trials(db, tmp_path / "work", PMIDS, trials=4, made=40)
    assert result["trials_with_loss"] >= 1  # the cuts do lose decisions (else the trial checks nothing)
    assert result["counted_right"] == 4 and result["named_backup_when_lost"] == result["trials_with_loss"]
    assert result["messages_true"] == 4, result["messages_wrong"]
    wrong = {**result, "messages_true": 3}  # one untrue notice fails the bench's goal
    assert not durability_goals({"kill_9": {"lost": 0}, "double_fault": wrong})["journal_notices_untrue"]["met"]
