"""The Curate page's view: open_curate gathers what the page draws, decide builds a decision's provenance,
arrange orders the rows the page shows (no Streamlit: the page only draws what these return)."""

from __future__ import annotations

import json

import pytest

from curation.entities.dictionaries import build_lexicon
from curation.entities.matching import Matcher
from curation.grades import Grade
from curation.records import Document
from curation.retrieval.result_rows import default_linker
from curation.retrieval.row_filter import RowFilter
from curation.schemas import PO
from curation.store.base import transaction
from curation.store.corpus import add_documents, iter_documents
from curation.store.decisions import list_decisions
from curation.store.opening import open_store
from curation.store.worklist import set_worklist_status
from curation.workflows.answers import AnswerKindError
from curation.workflows.curate import decide, open_curate, open_form
from curation.workflows.ingestion import ingest_corpus, ingest_kb
from curation.workflows.suggest import Suggestion, SupportingPaper
from index.lexical import LexicalIndex
from index.search import Retriever

BRAF = {"Gene": "BRAF", "Variant": "V600E"}


@pytest.fixture
def page(con, fixtures):
    """The fixture store with two more abstracts (one mentions only the gene), and what the page passes in."""
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    with transaction(con):
        add_documents(con, [
            Document("1000003", "BRAF V600E again", "BRAF V600E melanoma treated with vemurafenib.", year=2021),
            Document("1000004", "BRAF alone", "BRAF amplification in thyroid tumours.", year=2015),
        ])
    matcher = Matcher(build_lexicon(con))
    retriever = Retriever(lexical=LexicalIndex.build(list(iter_documents(con))), version="v-test")
    return con, retriever, matcher, default_linker(con, matcher)


def _open(page, values=BRAF, **options):
    con, retriever, matcher, linker = page
    return open_curate(con, retriever, matcher, linker, PO, values, **options)


def test_open_form_has_the_schema_and_its_slots_choices(page, tmp_path):
    con = page[0]
    form = open_form(con, None)  # before a choice in the sidebar: the default schema
    assert form.schema is PO and form.abstracts == 4 and not form.in_team
    assert list(form.known) == ["Gene", "Variant"] and "BRAF" in form.known["Gene"]
    assert form.annotator_note  # what the highlights come from: the dictionaries, no recogniser yet
    empty = open_store(tmp_path / "empty.duckdb")
    assert (open_form(empty, "PO").abstracts, open_form(empty, "PO").known) == (0, {})
    empty.close()


def test_open_curate_holds_the_ranking_its_concepts_and_the_suggestions(page):
    view = _open(page, mode="hybrid", depth=5)
    assert view.error == "" and view.values == BRAF and view.schema is PO
    # No dense index: BM25 serves whatever mode was asked, and the view says so.
    assert (view.result.mode, view.result.version) == ("bm25", "v-test")
    assert view.result.query == "Treatment for gene BRAF and variant V600E?"
    assert [(c.slot, c.status) for c in view.result.concepts] == [("Gene", "linked"), ("Variant", "linked")]
    groups = {row.pmid: row.group for row in view.result.rows}
    assert groups == {"1000001": "all", "1000003": "all", "1000004": "some"}
    assert view.result.groups == {"all": 2, "some": 1}
    assert view.suggestions is not None and view.suggestions.slot == "Treatment"
    assert view.row("1000003").title.text == "BRAF V600E again" and view.row("9999999") is None


def test_open_curate_says_what_stopped_a_search_instead_of_raising(page):
    view = _open(page, {"Gene": "B" * 1000})
    assert "1,000 characters typed" in view.error and view.result is None and view.suggestions is None
    assert view.arrange(RowFilter()).rows == ()


def test_decide_stores_where_the_curator_saw_the_abstract_and_what_ranked_it(page):
    con, _, matcher, _ = page
    view = _open(page, rm3=False)
    asked = []

    def lexicon():
        asked.append(True)
        return matcher.lexicon

    made = decide(con, lexicon, "ana", view, "1000003", Grade.PARTIAL, note="seen")
    assert asked == []  # a grade alone does not wait for the dictionaries
    assert made.grade is Grade.PARTIAL and made.note == "seen"
    provenance = json.loads(made.provenance)
    row = view.row("1000003")
    assert (provenance["rank"], provenance["version"], provenance["mode"], provenance["rm3"]) == (
        row.rank, "v-test", "bm25", False)
    assert provenance["group"] == "all" and "suggestion" not in provenance
    assert [(q["slot"], q["typed"]) for q in provenance["query"]] == [("Gene", "BRAF"), ("Variant", "V600E")]
    # An answer is checked against the dictionaries: a gene given as the treatment is questioned, nothing written.
    with pytest.raises(AnswerKindError):
        decide(con, lexicon, "ana", view, "1000001", Grade.COMPLETE, answer="BRAF")
    assert asked == [True] and [d.pmid for d in list_decisions(con)] == ["1000003"]
    confirmed = decide(con, lexicon, "ana", view, "1000001", Grade.COMPLETE, answer="BRAF", confirm_kind=True)
    assert confirmed.answer == "BRAF" and asked == [True]


def test_decide_records_the_suggestion_followed_only_on_its_supporting_abstracts(page):
    con, _, matcher, _ = page
    view = _open(page)
    paper = SupportingPaper("1000003", 2, 0.9, "BRAF V600E again", (), True, "BRAF V600E melanoma.")
    followed = Suggestion(1, "MESH:C000", "vemurafenib", "chemical", 0.9, (paper,), 1, scorer="scorer-1")
    on_it = decide(con, lambda: matcher.lexicon, "ana", view, "1000003", Grade.COMPLETE, suggestion=followed)
    assert json.loads(on_it.provenance)["suggestion"]["name"] == "vemurafenib"
    elsewhere = decide(con, lambda: matcher.lexicon, "ana", view, "1000001", Grade.COMPLETE, suggestion=followed)
    assert "suggestion" not in json.loads(elsewhere.provenance)
    # An abstract this search did not show: no provenance to store.
    assert decide(con, lambda: matcher.lexicon, "ana", view, "1000002", Grade.NOT_RELEVANT).provenance == ""


def test_arrange_groups_filters_and_narrows_the_rows_in_drawing_order(page):
    view = _open(page)
    shown = view.arrange(RowFilter())
    assert list(shown.groups) == ["all", "some"] and [r.pmid for r in shown.groups["some"]] == ["1000004"]
    assert [r.pmid for r in shown.rows] == [r.pmid for r in view.result.rows]  # relevance: the search's order
    newest = view.arrange(RowFilter(sort="newest"))
    assert list(newest.groups) == ["sorted"] and newest.rows[0].pmid == "1000003"
    # A saved query's new abstracts: only those; none new keeps none.
    assert [r.pmid for r in view.arrange(RowFilter(), only=["1000004"]).rows] == ["1000004"]
    nothing = view.arrange(RowFilter(), only=[])
    assert nothing.rows == () and nothing.filtered == 0 and nothing.row_filter.only == frozenset({""})
    paper = SupportingPaper("1000001", 1, 0.9, "", (), True, "")
    chosen = Suggestion(1, "MESH:C000", "vemurafenib", "chemical", 0.9, (paper,), 1)
    narrowed = view.arrange(RowFilter(), chosen=chosen)
    assert [r.pmid for r in narrowed.rows] == ["1000001"] and narrowed.filtered == 3


def test_the_worklist_panel_lists_every_item_and_the_open_ones_next_first(page):
    from curation.workflows.worklist import fill_worklist, open_worklist, take_worklist_item

    con = page[0]
    assert open_worklist(con, PO).caption == "0 open of 0"
    added = fill_worklist(con, PO, who="ana")
    listed = open_worklist(con, PO)
    assert added > 0 and len(listed.rows) == len(listed.open_items) == added
    assert set(listed.rows[0]) >= {"id", "status", "assignee", "judged", "Gene"}
    take_worklist_item(con, listed.open_items[0]["item_id"], "ana")  # in progress: still open
    set_worklist_status(con, listed.open_items[-1]["item_id"], "done", "ana")
    assert open_worklist(con, PO).caption == f"{added - 1} open of {added}"
