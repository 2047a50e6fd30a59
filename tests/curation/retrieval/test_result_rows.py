from __future__ import annotations

import pytest

from curation.entities.dictionaries import build_lexicon
from curation.entities.matching import Matcher
from curation.grades import Grade
from curation.records import Document
from curation.retrieval.result_rows import curate_search
from curation.schemas import PO
from curation.store.base import transaction
from curation.store.corpus import add_documents, iter_documents
from curation.store.decisions import record_decision
from curation.workflows.ingestion import ingest_corpus, ingest_kb
from index.lexical import LexicalIndex
from index.search import Retriever
from pages.parts.highlight import marked_html, title_html

BRAF = {"Gene": "BRAF", "Variant": "V600E"}


@pytest.fixture
def setup(con, fixtures):
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    with transaction(con):
        add_documents(
            con,
            [
                Document(
                    "1000003",
                    "A <script>alert(1)</script> title",
                    "BRAF V600E & <img src=x onerror=alert(2)> vemurafenib.",
                )
            ],
        )
    docs = list(iter_documents(con))
    return con, Retriever(lexical=LexicalIndex.build(docs)), Matcher(build_lexicon(con))


def test_rows_are_ranked_highlighted_escaped_and_prefilled(setup):
    con, retriever, matcher = setup
    result = curate_search(con, retriever, matcher, PO, BRAF, mode="bm25", k=5)
    assert result.query == "Treatment for gene BRAF and variant V600E?"
    pmids = [row.pmid for row in result.rows]
    assert set(pmids) == {"1000001", "1000003"}
    nasty = next(r for r in result.rows if r.pmid == "1000003")
    assert "<script>" in nasty.title.text  # handed over as stored: the page escapes it
    assert "<script>" not in title_html(nasty.title) and "&lt;script&gt;" in title_html(nasty.title)
    assert "<img" not in marked_html(nasty.abstract) and "&lt;img" in marked_html(nasty.abstract)
    braf = next(r for r in result.rows if r.pmid == "1000001")
    assert '<mark class="ent-query"' in marked_html(braf.abstract)
    assert all(braf.abstract.text[s.start:s.end] == s.text for s in braf.abstract.spans)
    assert "Vemurafenib" in braf.answers
    assert braf.best and braf.bm25 is not None and braf.dense is None


def test_prior_decisions_are_attached(setup):
    con, retriever, matcher = setup
    record_decision(con, "ana", PO, BRAF, "1000001", Grade.COMPLETE, answer="Vemurafenib")
    result = curate_search(con, retriever, matcher, PO, BRAF, mode="bm25", k=5)
    braf = next(r for r in result.rows if r.pmid == "1000001")
    assert [(d.curator, d.grade) for d in braf.decisions] == [("ana", Grade.COMPLETE)]


def test_hidden_types_are_not_marked(setup):
    con, retriever, matcher = setup
    result = curate_search(con, retriever, matcher, PO, BRAF, mode="bm25", k=5, shown={"answer"})
    braf = next(r for r in result.rows if r.pmid == "1000001")
    assert {s.entity_type for s in braf.abstract.spans} == {"answer"}
    assert "ent-query" not in marked_html(braf.abstract) and "ent-answer" in marked_html(braf.abstract)


def test_a_document_without_a_title_says_so(con, fixtures):
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    with transaction(con):
        add_documents(con, [Document("1000009", "", "BRAF V600E in melanoma, treated with vemurafenib.")])
    docs = list(iter_documents(con))
    retriever, matcher = Retriever(lexical=LexicalIndex.build(docs)), Matcher(build_lexicon(con))
    (row,) = curate_search(con, retriever, matcher, PO, BRAF, mode="bm25", k=5).rows
    assert row.title.text == "" and title_html(row.title) == "<em>(no title in the source)</em>"


def test_filters_and_sorts_keep_the_search_ranks():
    from dataclasses import replace

    from curation.errors import CurationError
    from curation.records import Decision, KBRecord, MarkedText
    from curation.retrieval.result_rows import ResultRow
    from curation.retrieval.row_filter import RowFilter, filter_rows

    def row(rank, group="all", year=None, types=(), in_kb=False, by=()):
        record = KBRecord("PO", (("Gene", "BRAF"),), str(rank), "civic", f"EID{rank}")
        decisions = tuple(Decision(rank, who, "PO", "q", (), str(rank), "complete", "", "", "t", None) for who in by)
        return ResultRow(rank, str(rank), MarkedText(""), MarkedText(""), (), 0.0, None, None, (), decisions, group,
                         year=year, pub_types=tuple(types), in_kb=(record,) if in_kb else ())

    rows = [row(1, year=2015, in_kb=True, by=("ana",)), row(2, "some", year=2021, types=("Clinical Trial",)),
            row(3, year=2019, types=("Review",), by=("bo",)), row(4, "some")]
    pmids = lambda view: [r.pmid for r in filter_rows(rows, view)]  # noqa: E731
    assert pmids(RowFilter()) == ["1", "2", "3", "4"]
    assert pmids(RowFilter(groups=frozenset({"some"}))) == ["2", "4"]
    assert pmids(RowFilter(years=(2016, 2021))) == ["2", "3"]  # a row without a year is left out of a range
    assert pmids(RowFilter(pub_types=frozenset({"Review", "Letter"}))) == ["3"]
    assert pmids(RowFilter(in_kb="not in the KB")) == ["2", "3", "4"] and pmids(RowFilter(in_kb="in the KB")) == ["1"]
    assert pmids(RowFilter(decided="undecided")) == ["2", "4"]
    assert pmids(RowFilter(decided="decided by me", curator=" ana ")) == ["1"]
    assert pmids(RowFilter(decided="decided by anyone")) == ["1", "3"]
    assert pmids(RowFilter(sort="newest")) == ["2", "3", "1", "4"]  # no year last; ties keep the search's order
    assert pmids(RowFilter(sort="new to the KB first")) == ["2", "3", "4", "1"]
    assert [r.rank for r in filter_rows(rows, RowFilter(sort="newest"))] == [2, 3, 1, 4]  # ranks are the search's
    assert RowFilter(years=(2016, 2021), in_kb="in the KB").describe() == "2016–2021; in the KB"
    assert replace(rows[1], journal="J Clin Oncol", authors="Smith J, et al.").meta == (
        "2021 · J Clin Oncol · Smith J, et al. · Clinical Trial")
    with pytest.raises(CurationError, match="unknown filter"):
        filter_rows(rows, RowFilter(sort="random"))
