"""Saved queries: what was added since the curator last looked (curation/store/saved.py, workflows/watch.py)."""

from __future__ import annotations

import time

import pytest

from curation.errors import CurationError
from curation.records import Document
from curation.store.annotations import AnnotationRow, replace_annotations
from curation.store.base import transaction
from curation.store.corpus import add_documents
from curation.store.opening import open_store
from curation.store.saved import save_query
from curation.workflows import watch


def _add(con, pmid: str, concepts: list[tuple[str, str]]) -> None:
    """A document whose concept index names these (kind, concept id) pairs."""
    with transaction(con):
        add_documents(con, [Document(pmid, "T", "BRAF V600E melanoma vemurafenib.")])
        rows = [AnnotationRow(pmid, i, i + 1, cid, kind, cid, cid, 1.0, "dictionary", "t")
                for i, (kind, cid) in enumerate(concepts)]
        replace_annotations(con, "t", {pmid: 40}, rows)


def test_new_since_the_last_look_counts_added_abstracts_that_name_every_linked_concept(tmp_path):
    con = open_store(tmp_path / "s.duckdb")
    _add(con, "1", [("gene", "G:BRAF"), ("variant", "V:V600E")])
    qid = save_query(con, " ana ", "PO", {"Gene": "BRAF", "Variant": "V600E"},
                     {"Gene": ["G:BRAF"], "Variant": ["V:V600E"]})
    assert save_query(con, "ana", "PO", {"Variant": "V600E", "Gene": "BRAF"},
                      {"Gene": ["G:BRAF"], "Variant": ["V:V600E"]}) == qid  # the same relation: one query
    (item,) = watch.watched(con, "ana", "PO")
    assert item.new == ()  # document 1 was there before the query was saved
    time.sleep(0.01)
    _add(con, "2", [("gene", "G:BRAF"), ("variant", "V:V600E")])
    _add(con, "3", [("gene", "G:BRAF")])  # the gene alone: not the relation
    _add(con, "4", [("gene", "G:KRAS"), ("variant", "V:V600E")])
    (item,) = watch.watched(con, "ana", "PO")
    assert item.new == ("2",) and item.label() == "Gene = BRAF · Variant = V600E — 1 new since your last look"
    values, new = watch.open_watched(con, item, "ana")
    assert values == {"Gene": "BRAF", "Variant": "V600E"} and new == ("2",)
    (item,) = watch.watched(con, "ana", "PO")
    assert item.new == () and "nothing new" in item.label()  # opened: seen
    assert watch.watched(con, "bo", "PO") == [] and watch.watched(con, "ana", "PTM") == []
    watch.remove_watched(con, qid, "ana")
    assert watch.watched(con, "ana", "PO") == []
    con.close()


def test_saving_needs_a_curator_and_a_typed_entity(tmp_path):
    con = open_store(tmp_path / "s.duckdb")
    with pytest.raises(CurationError, match="enter your name"):
        save_query(con, " ", "PO", {"Gene": "BRAF"}, {})
    with pytest.raises(CurationError, match="type at least one entity"):
        save_query(con, "ana", "PO", {"Gene": "  "}, {})
    con.close()
