"""The concept index: annotations stored at ingest, re-annotation, entity models, highlights from the store."""

from __future__ import annotations

import pytest

from curation.entities.annotation import Annotator
from curation.entities.dictionaries import build_lexicon
from curation.entities.matching import Matcher
from curation.entities.postings import documents_of, stored_annotations
from curation.grades import Grade
from curation.records import Document
from curation.relations import concept_index
from curation.retrieval.result_rows import curate_search
from curation.schemas import PO
from curation.store.annotations import (
    AnnotationRow,
    get_active_entity_model,
    insert_entity_model,
    list_annotators,
    list_concept_documents,
    list_concept_postings,
    list_entity_models,
    list_stale_documents,
    replace_annotations,
    set_active_entity_model,
    sort_concept_index,
)
from curation.store.base import stats, transaction
from curation.store.corpus import add_documents, iter_documents, list_mentions
from curation.store.decisions import record_decision
from curation.workflows import entities
from curation.workflows.entities import (
    NO_RECOGNISER,
    EntityModelError,
    activate_entity_model,
    current_annotator,
    reannotate,
)
from curation.workflows.ingestion import ingest_corpus, ingest_kb
from index.lexical import LexicalIndex
from index.search import Retriever
from pages.parts.highlight import marked_html, title_html

BRAF = {"Gene": "BRAF", "Variant": "V600E"}
UNTOUCHED = ("decisions", "kb_records", "kb_entities", "mentions", "relations", "synonyms", "worklist")


class FakeRecogniser:
    """Marks every "melanoma" as a disease and every "kinase" as a gene (a recogniser's shape, no model)."""

    name = "fake-ner"

    def recognise(self, texts):
        out = []
        for text in texts:
            spans = []
            for word, kind in (("melanoma", "disease"), ("kinase", "gene")):
                start = text.find(word)
                if start >= 0:
                    spans.append((start, start + len(word), kind))
            out.append(spans)
        return out


class Failing:
    name = "broken"

    def recognise(self, texts):
        raise RuntimeError("the model ran out of memory")


@pytest.fixture
def loaded(con, fixtures):
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator",
                  annotator=lambda: Annotator(Matcher(build_lexicon(con))))
    return con


def _table(con, sql):
    return con.execute(sql).fetchall()


def test_ingest_stores_gold_and_dictionary_annotations_once(loaded, fixtures):
    con = loaded
    found = stored_annotations(con, ["1000001", "1000002", "999"])
    assert set(found) == {"1000001", "1000002"}
    sources = {(a.text, a.type, a.source) for a in found["1000001"]}
    assert {("BRAF", "gene", "gold"), ("BRAF", "gene", "dictionary"), ("V600E", "variant", "rule"),
            ("Vemurafenib", "chemical", "gold")} <= sources
    gold = next(a for a in found["1000001"] if a.source == "gold" and a.type == "variant")
    assert gold.concept_id == "p|SUB|V|600|E" and gold.canonical  # kind mapped, canonical never empty
    assert stats(con)["annotations"] == sum(len(v) for v in found.values())
    # Predicted mentions never reach the gold mentions table (which feeds the lexicon and snapshots).
    assert {m.source for m in list_mentions(con)} == {"small"}
    assert len(list_mentions(con)) == 6
    assert list_stale_documents(con, "dictionary") == []
    again = ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator",
                          annotator=lambda: Annotator(Matcher(build_lexicon(con))))
    assert dict(again.details)["documents annotated"] == 0



def test_the_concept_order_keeps_every_posting_and_groups_each_concept(loaded, monkeypatch):
    """sort_concept_index rewrites the table in concept order (variants by text): the same postings are read, by
    concept or by text, and a large annotation run ends with it."""
    con = loaded
    asked = [("gene", ["673"], []), ("variant", [], ["V600E"]), ("chemical", [], ["Vemurafenib"])]
    before = [list_concept_postings(con, kind, ids, texts) for kind, ids, texts in asked]
    assert all(before)  # each read finds something: the comparison is not of empty lists
    count = _table(con, "SELECT count(*) FROM annotations")[0][0]
    with transaction(con):
        assert sort_concept_index(con) == count
    assert [list_concept_postings(con, kind, ids, texts) for kind, ids, texts in asked] == before
    order = _table(con, "SELECT entity_type, CASE WHEN entity_type = 'variant' THEN text ELSE concept_id END "
                        "FROM annotations")
    assert order == sorted(order)
    # A gene read by concept, or by text alone, returns each of its mentions once (the two branches of the read).
    both = list_concept_postings(con, "gene", ["673"], ["BRAF"])
    assert len(both) == len(set(both)) and set(before[0]) <= set(both)
    sorted_by = []
    monkeypatch.setattr(concept_index, "SORT_AFTER_DOCUMENTS", 1)
    monkeypatch.setattr(concept_index, "sort_concept_index", lambda c: sorted_by.append(c))
    concept_index.annotate_documents(con, Annotator(Matcher(build_lexicon(con))), ["1000001"])
    assert sorted_by == [con]

def test_the_per_document_read_matches_the_rows_aggregated_in_python(loaded):
    """list_concept_documents (SQL) gives what concept_query made of list_concept_postings: the same documents in
    the same order, the same spans in the same order, the same sources."""
    con = loaded
    asked = [("gene", ["673"], []), ("variant", [], ["V600E"]), ("chemical", [], ["Vemurafenib"]),
             ("gene", ["673"], ["BRAF"]), ("gene", [], []), ("gene", ["no such concept"], [])]
    for kind, ids, texts in asked:
        assert list_concept_documents(con, kind, ids, texts) == documents_of(list_concept_postings(con, kind, ids,
                                                                                                     texts))
    # Hand-made ties: two spans at one start (ordered by their first source, then end), one span found twice,
    # by concept and by text, and by two sources.
    row = AnnotationRow("9", 0, 0, "BRAF", "gene", "673", "BRAF", 1.0, "", "bench")
    rows = [row._replace(start=5, end=10, source="gold"), row._replace(start=5, end=8, source="dictionary"),
            row._replace(start=5, end=10, source="dictionary", concept_id="x"),
            row._replace(start=1, end=4, source="recogniser", text="B-RAF"),
            row._replace(start=20, end=24, source="rule"), row._replace(start=20, end=22, source="rule"),
            row._replace(pmid="8", start=3, end=7, source="gold")]
    with transaction(con):
        replace_annotations(con, "bench", {"8": 30, "9": 30}, rows)
    for ids, texts in ((["673"], ["BRAF"]), (["673"], []), ([], ["BRAF"])):
        old = documents_of(list_concept_postings(con, "gene", ids, texts))
        assert list_concept_documents(con, "gene", ids, texts) == old
    found = list_concept_documents(con, "gene", ["673"], ["BRAF"])
    assert found.spans["9"] == [(1, 4), (5, 8), (5, 10), (20, 22), (20, 24)]
    assert found.sources["9"] == "dictionary, gold, recogniser, rule"
    assert list(found.spans) == list(found.sources) == sorted(found.spans)  # document order


def test_new_gold_mentions_or_a_new_annotator_make_documents_stale(loaded):
    con = loaded
    assert list_stale_documents(con, "union:other:lexicon") == ["1000001", "1000002"]
    assert list_stale_documents(con, "dictionary", ["1000002"], stale_only=False) == ["1000002"]
    with transaction(con):
        add_documents(con, [Document("1000002", "Cisplatin nephrotoxicity.", "Cisplatin caused renal injury.",
                                     "other", mentions=(store_mention(),))])
    assert list_stale_documents(con, "dictionary") == ["1000002"]


def store_mention():
    from curation.records import Mention

    return Mention("1000002", 45, 52, "injury.", "DiseaseOrPhenotypicFeature", "D007674", "other")


def test_reannotate_after_activating_a_recogniser_leaves_decisions_and_kb_untouched(loaded):
    con = loaded
    record_decision(con, "ana", PO, BRAF, "1000001", Grade.COMPLETE, answer="Vemurafenib")
    before = [_table(con, f"SELECT COLUMNS(*)::VARCHAR FROM {t} ORDER BY ALL") for t in UNTOUCHED]
    annotator = Annotator(Matcher(build_lexicon(con)), recogniser=FakeRecogniser())
    report = reannotate(con, annotator)
    assert (report.annotated, report.failed) == (2, ())
    after = [_table(con, f"SELECT COLUMNS(*)::VARCHAR FROM {t} ORDER BY ALL") for t in UNTOUCHED]
    assert after == before
    found = stored_annotations(con, ["1000001"])["1000001"]
    assert ("melanoma", "disease", "recogniser") in {(a.text, a.type, a.source) for a in found}
    assert list_annotators(con) == {annotator.version: 2}
    assert reannotate(con, annotator).annotated == 0  # nothing stale any more
    assert reannotate(con, annotator, stale_only=False).annotated == 2


def test_a_failing_annotator_leaves_documents_ingested_and_says_which(con, fixtures):
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    broken = Annotator(Matcher(build_lexicon(con)), recogniser=Failing())
    report = ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator", annotator=broken)
    assert stats(con)["documents"] == 2 and stats(con)["annotations"] == 0
    assert "PMIDs 1000001 to 1000002 (2): the model ran out of memory" in report.summary()
    assert list_stale_documents(con, broken.version) == ["1000001", "1000002"]
    # A factory that fails (the dictionaries cannot be built) is reported too; the documents stay.
    report = ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator",
                           annotator=lambda: 1 / 0)
    assert "ingested but not annotated" in report.summary()


def test_without_a_recogniser_the_app_says_dictionaries_are_used(loaded, tmp_path):
    con = loaded
    matcher = Matcher(build_lexicon(con))
    chosen = current_annotator(con, None, matcher)
    assert chosen.annotator.version == "dictionary" and chosen.message == NO_RECOGNISER
    # An active recogniser whose folder has gone: dictionaries, with the reason.
    insert_entity_model(con, "recogniser", str(tmp_path / "gone"), "gone")
    set_active_entity_model(con, "recogniser", str(tmp_path / "gone"))
    chosen = current_annotator(con, None, matcher)
    assert chosen.annotator.version == "dictionary"
    assert "could not be loaded" in chosen.message and "gone" in chosen.message


def test_activation_validates_first_and_keeps_the_active_model(loaded, tmp_path, monkeypatch):
    con = loaded
    good = tmp_path / "good"
    good.mkdir()
    real_load = entities.load_entity_model

    def load(kind, path, lexicon=None):
        return FakeRecogniser() if str(path) == str(good.resolve()) else real_load(kind, path, lexicon)

    monkeypatch.setattr(entities, "load_entity_model", load)
    activated = activate_entity_model(con, "recogniser", good)
    assert activated.name == "fake-ner"
    assert get_active_entity_model(con, "recogniser").path == str(good.resolve())
    malformed = tmp_path / "malformed"
    malformed.mkdir()
    (malformed / "manifest.json").write_text("{not json")
    for bad in (malformed, tmp_path / "missing", tmp_path / "empty"):
        if bad.name == "empty":
            bad.mkdir()
        with pytest.raises(EntityModelError, match=bad.name):
            activate_entity_model(con, "recogniser", bad)
        assert get_active_entity_model(con, "recogniser").path == str(good.resolve())
    assert [m.path for m in list_entity_models(con, "recogniser")] == [str(good.resolve())]
    with pytest.raises(EntityModelError, match="unknown entity model kind"):
        activate_entity_model(con, "tagger", good)


def test_highlights_come_from_stored_annotations_and_kinds_can_be_hidden(loaded):
    con = loaded
    reannotate(con, Annotator(Matcher(build_lexicon(con)), recogniser=FakeRecogniser()))
    retriever = Retriever(lexical=LexicalIndex.build(list(iter_documents(con))))
    # A fresh matcher knows no "melanoma": the disease mark can only come from the store.
    matcher = Matcher(build_lexicon(con))
    result = curate_search(con, retriever, matcher, PO, BRAF, mode="bm25", k=5)
    braf = next(r for r in result.rows if r.pmid == "1000001")
    assert 'disease: melanoma">melanoma</mark>' in title_html(braf.title)
    assert '<mark class="ent-query"' in marked_html(braf.abstract) and "Vemurafenib" in braf.answers
    hidden = curate_search(con, retriever, matcher, PO, BRAF, mode="bm25", k=5, kinds={"gene", "variant"})
    braf = next(r for r in hidden.rows if r.pmid == "1000001")
    assert "disease:" not in title_html(braf.title) and "chemical:" not in marked_html(braf.abstract)
    assert "Vemurafenib" in braf.answers  # a hidden kind still pre-fills the answer
    assert '<mark class="ent-query"' in marked_html(braf.abstract)


def test_a_document_without_stored_annotations_is_highlighted_in_memory(con, fixtures):
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")  # no annotator
    retriever = Retriever(lexical=LexicalIndex.build(list(iter_documents(con))))
    result = curate_search(con, retriever, Matcher(build_lexicon(con)), PO, BRAF, mode="bm25", k=5)
    braf = next(r for r in result.rows if r.pmid == "1000001")
    assert "ent-answer" in marked_html(braf.abstract) and "Vemurafenib" in braf.answers
    assert stats(con)["annotations"] == 0  # a page view writes nothing
