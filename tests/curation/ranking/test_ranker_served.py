"""The learned stage rides the one served search: the Curate page's workflow, ``python -m curation search`` and the
benchmark's "served" system rank identically with it, and a version folder's ranker is attached on loading."""

from __future__ import annotations

import pytest

from bench import _concepts
from curation.entities.matching import Matcher
from curation.entities.postings import StorePostings
from curation.ranking.model import MODEL_FILE, RankerError
from curation.ranking.signals import StoreSignals
from curation.ranking.stage import RANKER_FOLDER, LearnedStage
from curation.retrieval.relation_search import SearchOptions
from curation.retrieval.result_rows import curate_search, default_linker
from curation.store.base import add_schema, transaction
from curation.store.corpus import add_documents
from curation.store.opening import open_store
from curation.versions.serving import ServingKey, serving_key, with_ranker
from curation.workflows.search import Searcher, SearchRequest
from index.lexical import LexicalIndex
from index.search import Retriever
from tests.curation.ranking.tiny_ranker import DOCS, GDT, LEXICON, QUERY, _reversing_stage


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    con = open_store(tmp_path_factory.mktemp("ranker-served") / "s.duckdb")
    add_schema(con, GDT)
    with transaction(con):
        add_documents(con, DOCS)
    yield con
    con.close()


def _orders(con, engine, matcher) -> dict[str, list[str]]:
    linker = default_linker(con, matcher)
    page = [row.pmid for row in curate_search(con, engine, matcher, GDT, QUERY, k=10, linker=linker).rows]
    cli = Searcher.__new__(Searcher)  # the CLI's searcher over this store, without loading the app's dictionaries
    cli.con, cli.notes, cli.matcher, cli.linker, cli.source = con, [], matcher, linker, StorePostings(con)
    cli._engines = {serving_key(con, GDT.name): (engine, "")}
    record = cli.search(GDT, SearchRequest(GDT.name, QUERY, top=10), "hybrid", False)
    bench = _concepts.ConceptBench(LEXICON, matcher, linker, StorePostings(con), {d.pmid: d for d in DOCS}, {}, 0)
    served = _concepts.one_search(bench, engine, SearchOptions(k=10))(GDT, QUERY)
    return {"page": page, "cli": [h["pmid"] for h in record["hits"]], "bench": [h.pmid for h in served.hits]}


def test_the_page_the_cli_and_the_benchmark_rank_identically_with_the_learned_stage(store, tmp_path):
    matcher = Matcher(LEXICON)
    lexical = LexicalIndex.build(DOCS)
    plain = _orders(store, Retriever(lexical=lexical, version="test"), matcher)
    stage = _reversing_stage(tmp_path)
    learned = Retriever(lexical=lexical, version="test", learned=LearnedStage(stage.model, StoreSignals(store, GDT)))
    orders = _orders(store, learned, matcher)
    assert len(orders["page"]) >= 3
    assert orders["page"] == orders["cli"] == orders["bench"]
    assert plain["page"] == plain["cli"] == plain["bench"]
    assert orders["page"] != plain["page"] and sorted(orders["page"]) == sorted(plain["page"])


def test_a_version_folder_with_a_ranker_serves_it_and_a_bad_one_is_named(store, tmp_path):
    _reversing_stage(tmp_path)  # writes tmp_path / RANKER_FOLDER
    key = ServingKey(len(DOCS), ("v1",), GDT.name)
    engine = with_ranker(Retriever(lexical=LexicalIndex.build(DOCS)), tmp_path, store, key)
    assert isinstance(engine.learned, LearnedStage) and isinstance(engine.learned.signals, StoreSignals)
    assert with_ranker(Retriever(), tmp_path / "elsewhere", store, key).learned is None  # no ranker/: none served
    (tmp_path / RANKER_FOLDER / MODEL_FILE).write_text("garbage")
    with pytest.raises(RankerError, match=MODEL_FILE):
        with_ranker(Retriever(), tmp_path, store, key)


def test_store_signals_read_kb_citations_and_grades_per_query(tmp_path):
    from curation.grades import Grade
    from curation.ranking.features import query_key
    from curation.records import KBRecord
    from curation.store.decisions import record_decision
    from curation.store.kb import add_kb_records

    con = open_store(tmp_path / "s.duckdb")
    add_schema(con, GDT)
    with transaction(con):
        add_documents(con, DOCS)
        add_kb_records(con, [KBRecord("GDT", (("Gene", "BRAF"), ("Disease", "melanoma"), ("Treatment", "vemurafenib")),
                                      "1", "test", "r1")], origin="test")
    record_decision(con, "ann", GDT, {"Gene": "EGFR"}, "1", Grade.PARTIAL)
    record_decision(con, "ann", GDT, {"Gene": "EGFR"}, "5", Grade.COMPLETE)
    found = StoreSignals(con, GDT).evidence(["1", "5", "3"])
    assert dict(found["1"].cited) == {query_key(QUERY): 1}
    assert dict(found["1"].grades) == {query_key({"Gene": "EGFR"}): 1}
    assert dict(found["5"].grades) == {query_key({"Gene": "EGFR"}): 2} and not found["3"].grades
    con.close()


def test_the_benchmarks_own_schema_searches_as_the_products_does(store):
    """bench/ranker.py and bench/ranker_test.py search with ``_concepts.BenchSchema``, not a RelationSchema: it
    must carry what the served search reads of a schema (its species among them)."""
    matcher = Matcher(LEXICON)
    engine = Retriever(lexical=LexicalIndex.build(DOCS), version="test")
    template = " ".join(f"{{{t}}}" for t in GDT.query_types)
    schema = _concepts.BenchSchema(GDT.name, GDT.query_types, template, GDT.answer)
    bench = _concepts.ConceptBench(LEXICON, matcher, default_linker(store, matcher), StorePostings(store),
                                   {d.pmid: d for d in DOCS}, {}, 0)
    hits = _concepts.one_search(bench, engine, SearchOptions(k=10))(schema, QUERY).hits
    assert [h.pmid for h in hits] == _orders(store, engine, matcher)["bench"] and hits
