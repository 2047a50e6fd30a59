from __future__ import annotations

import html
import json

import pytest
from streamlit.testing.v1 import AppTest

from curation.config import PROJECT_ROOT
from curation.grades import Grade
from curation.records import Document, Synonym
from curation.store.annotations import replace_annotations
from curation.store.base import transaction
from curation.store.corpus import add_documents, add_synonyms
from curation.store.kb import add_kb_records
from curation.store.opening import open_store

APP = str(PROJECT_ROOT / "app.py")


def _decisions(at: AppTest):
    from pages.parts.common import connection

    return (
        connection().execute("SELECT curator, pmid, grade, answer, superseded_by FROM decisions ORDER BY 1").fetchall()
    )


def test_type_search_decide_undo(loaded_db):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    assert at.title[0].value == "Curate"
    # The sidebar's Curator field stores the name under "curator" (its on_change callback).
    at.session_state["curator"] = "ana"
    at.selectbox(key="pick_Gene").set_value("BRAF")
    at.selectbox(key="pick_Variant").set_value("V600E")
    at.run()
    assert not at.exception
    assert any("Query: Treatment for gene BRAF and variant V600E?" in t.value for t in at.text)
    assert any("PMID 1000001" in m.value for m in at.markdown)
    at.selectbox(key="answer_1000001").set_value("Vemurafenib")
    at.run()
    at.button(key="complete_1000001").click()
    at.run()
    assert not at.exception
    assert _decisions(at) == [("ana", "1000001", Grade.COMPLETE, "Vemurafenib", None)]
    assert any("ana: Complete evidence" in c.value for c in at.caption)
    # The decision keeps how the search found the abstract: its group, stages and the concepts it mentions.
    from pages.parts.common import connection

    (stored,) = connection().execute("SELECT provenance FROM decisions").fetchone()
    provenance = json.loads(stored)
    assert provenance["group"] == "all"
    assert [c["slot"] for c in provenance["concepts"]] == ["Gene", "Variant"]
    assert [s["stage"] for s in provenance["stages"]][:2] == ["concepts", "lexical"]
    # ... where the curator saw it, what ranked it, and the query as typed and as linked
    assert provenance["rank"] == 1 and provenance["version"] == "bm25-only" and provenance["rm3"] is False
    assert [(q["slot"], q["typed"], q["status"]) for q in provenance["query"]] == [
        ("Gene", "BRAF", "linked"), ("Variant", "V600E", "linked")]
    # ... shown in the card's history
    history = [t.value for t in at.text if "ana · Complete evidence" in t.value]
    assert history and "answer Vemurafenib · rank 1 · model bm25-only" in history[0]
    undo = next(b for b in at.button if b.label == "Undo my last decision")
    undo.click()
    at.run()
    (row,) = _decisions(at)
    assert row[4] is not None  # kept, marked withdrawn
    assert not any("ana: Complete evidence" in c.value for c in at.caption)


def test_decisions_need_a_curator(loaded_db):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.selectbox(key="pick_Gene").set_value("BRAF")
    at.run()
    assert any("Enter your name" in w.value for w in at.warning)
    assert at.button(key="complete_1000001").disabled


def test_empty_store_opens_on_the_knowledge_base_page(tmp_path, monkeypatch):
    monkeypatch.setenv("CURATION_DB", str(tmp_path / "empty.duckdb"))
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception
    assert at.title[0].value == "Knowledge base"


def _search(**state) -> AppTest:
    """The Curate page run once with ``state`` (typed slots go in before the first run: AppTest cannot type
    an option a selectbox does not list yet)."""
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception
    return at


def _shown(at: AppTest, element: str = "markdown") -> list[str]:
    return [html.unescape(e.value) for e in getattr(at, element)]


def _results(at: AppTest) -> list[str]:
    return [m for m in _shown(at) if "PMID " in m and "pubmed.ncbi" in m]


def test_a_three_letter_variant_is_linked_shown_as_a_chip_and_finds_the_canonical_one(loaded_db):
    at = _search(pick_Gene="BRAF", pick_Variant="Val600Glu")
    assert at.selectbox(key="pick_Variant").value == "Val600Glu"
    assert ":green-badge[:material/link: V600E]" in _shown(at)
    assert "variant · V600E · confidence 1.00 · notation" in _shown(at, "caption")
    assert any("Query: Treatment for gene BRAF and variant V600E?" in t.value for t in at.text)
    assert any("PMID 1000001" in m for m in _results(at))
    assert "Gene BRAF — text: BRAF · Variant V600E — text: V600E" in _shown(at, "caption")
    assert any(c.startswith("concepts 2.000 · lexical ") and " #1 · fused " in c for c in _shown(at, "caption"))


def test_a_gene_alias_is_linked_to_its_gene(loaded_db):
    con = open_store(loaded_db)
    add_synonyms(con, [Synonym("673", "gene", "RAFB1", "hgnc")])
    con.close()
    at = _search(pick_Gene="rafb1", pick_Variant="V600E")
    assert ":green-badge[:material/link: BRAF]" in _shown(at)
    assert "gene · 673 · confidence 1.00 · exact" in _shown(at, "caption")
    assert any("PMID 1000001" in m for m in _results(at))


def test_a_gene_two_species_share_links_the_human_one_and_offers_the_other(loaded_db):
    con = open_store(loaded_db)
    add_synonyms(con, [Synonym("673", "gene", "BRAF", "ensembl:human", True, "human"),
                       Synonym("109880", "gene", "Braf", "ensembl:mouse", True, "mouse")])
    con.close()
    at = _search(pick_Gene="BRAF")
    assert ":green-badge[:material/link: BRAF (human)]" in _shown(at)
    assert "gene · 673 · confidence 1.00 · exact" in _shown(at, "caption")
    assert html.unescape(at.button(key="species_Gene_0").label) == "Braf (mouse)"
    at.button(key="species_Gene_0").click().run()
    assert not at.exception
    assert ":green-badge[:material/link: Braf (mouse)]" in _shown(at)
    assert "gene · 109880 · confidence 1.00 · applied by the curator" in _shown(at, "caption")


def test_an_offered_link_is_applied_by_a_click_and_can_be_removed(loaded_db):
    at = _search(pick_Gene="BRAFF")
    # Never applied silently: searched as typed, nothing found, the suggestions are buttons.
    assert ":orange-badge[:material/link_off: not linked — did you mean]" in _shown(at)
    assert not _results(at)
    assert any("No abstract mentions Gene 'BRAFF'" in w and "Close names: 'BRAF'" in w for w in _shown(at, "warning"))
    at.button(key="apply_Gene_0").click().run()
    assert not at.exception
    assert ":green-badge[:material/link: BRAF]" in _shown(at)
    assert any("applied by the curator" in c for c in _shown(at, "caption"))
    assert any("PMID 1000001" in m for m in _results(at))
    assert any("Query: Treatment for gene BRAF?" in t.value for t in at.text)
    # The other BRAF concept (its Entrez id) stays one click away; the name both share shows the id.
    assert html.unescape(at.button(key="apply_Gene_0").label) == "BRAF (673)"
    at.button(key="unlink_Gene").click().run()
    assert not at.exception
    assert not _results(at) and any("BRAFF" in w for w in _shown(at, "warning"))


def test_an_applied_link_is_dropped_when_the_slot_changes(loaded_db):
    at = _search(pick_Gene="BRAFF")
    at.button(key="apply_Gene_0").click().run()
    assert any("PMID 1000001" in m for m in _results(at))
    at.selectbox(key="pick_Gene").set_value("BRAF").run()
    assert not at.exception
    assert "gene · BRAF, 673 · confidence 1.00 · exact" in _shown(at, "caption")
    assert not any("applied by the curator" in c for c in _shown(at, "caption"))


def test_a_gene_no_abstract_mentions_is_named_and_nothing_is_padded(loaded_db):
    at = _search(pick_Gene="KRAS")
    assert any("No abstract mentions Gene 'KRAS'" in w for w in _shown(at, "warning"))
    assert not _results(at)
    assert any("No abstract was found for the query's concepts" in i for i in _shown(at, "info"))


@pytest.fixture
def grouped_db(loaded_db):
    """The fixture store plus an abstract that mentions BRAF but no V600E."""
    con = open_store(loaded_db)
    with transaction(con):
        add_documents(con, [Document("1000005", "BRAF amplification in glioma.", "BRAF was amplified.")])
    con.close()
    return loaded_db


def test_results_are_grouped_by_the_concepts_they_mention(grouped_db):
    at = _search(pick_Gene="BRAF", pick_Variant="V600E")
    headers = [h.value for h in at.subheader]
    assert headers == ["Mentions all query concepts (1)", "Mentions some (1)"]
    results = _results(at)
    assert "PMID 1000001" in results[0] and "PMID 1000005" in results[1]
    assert "Gene BRAF — text: BRAF · not mentioned: Variant V600E" in _shown(at, "caption")
    # The focus (▶, keys 1-3) walks the groups' order.
    assert results[0].startswith("▶ ")
    at.button[[b.label for b in at.button].index("Next")].click().run()
    assert _results(at)[1].startswith("▶ ")


@pytest.mark.parametrize(
    "typed",
    ["<b>bold</b> **x** [link](http://127.0.0.1:9/) $y$", "V600E'; DROP TABLE decisions; --", "x\\\" OR 1=1 -- %_"],
    ids=["markup", "sql", "quotes"],
)
def test_markup_and_sql_in_a_slot_are_plain_text(loaded_db, typed):
    at = _search(curator="ana", pick_Gene="BRAF", pick_Variant=typed)
    said = [w.value for w in at.warning] + [c.value for c in at.caption] + [m.value for m in at.markdown]
    assert any(typed in html.unescape(s) for s in said)  # named, as typed
    assert not any(typed in s for s in said)  # but never as markup
    assert any("PMID 1000001" in m for m in _results(at))  # BRAF alone still finds it, under "some"
    assert "Mentions some (1)" in [h.value for h in at.subheader]
    assert _decisions(at) == []  # the decisions table is still there


def test_a_1000_character_name_is_a_message_not_a_search(loaded_db):
    at = _search(curator="ana", pick_Gene="BRAF", pick_Variant="V" * 1000)
    (error,) = [html.unescape(e.value) for e in at.error]
    assert "Variant: 1,000 characters typed; a name has at most 200" in error
    assert not _results(at)


def test_a_filled_answer_is_linked_and_checked_against_the_abstract(loaded_db):
    at = _search(curator="ana", pick_Gene="BRAF", pick_Variant="V600E", answer_1000001="vemurafenib")
    assert any(c.startswith("→ Vemurafenib (") and "exact" in c for c in _shown(at, "caption"))
    assert not at.warning
    at = _search(curator="ana", pick_Gene="BRAF", pick_Variant="V600E", answer_1000001="Dabrafenib")
    assert any("does not mention 'Dabrafenib'" in w and "PMID 1000001" in w for w in _shown(at, "warning"))


def test_rm3_feedback_is_a_toggle_off_by_default(loaded_db):
    at = _search(pick_Gene="BRAF", pick_Variant="V600E")
    assert at.toggle(key="rm3").value is False
    at.toggle(key="rm3").set_value(True).run()
    assert not at.exception
    assert any(c.startswith("concepts ") and "rm3 " in c for c in _shown(at, "caption"))


def test_a_corrupted_active_version_is_reported_and_search_goes_on(loaded_db, tmp_path):
    from curation.store.base import content_counts
    from curation.store.opening import open_store
    from curation.versions import catalog, registry
    from curation.versions.manifest import Manifest

    models = tmp_path / "models"
    con = open_store(loaded_db)
    documents = content_counts(con)[0]
    tmp = registry.staging(models, "po-broken")
    for part in ("model", "dense", "lexical"):
        (tmp / part).mkdir()
    (tmp / "dense" / "index.faiss").write_bytes(b"not a faiss index")
    version = registry.publish(models, "po-broken", Manifest(schema="PO", documents=documents))
    catalog.register_version(con, version)
    catalog.activate_version(con, "po-broken")
    con.close()

    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["pick_Gene"] = "BRAF"
    at.session_state["pick_Variant"] = "V600E"
    at.run()
    assert not at.exception
    assert any("active model version po-broken is not serving" in w.value and "bm25-only" in w.value
               for w in at.warning)
    assert any("PMID 1000001" in m.value for m in at.markdown)  # BM25 still serves


def test_entity_types_can_be_hidden_and_the_choice_is_remembered(loaded_db):
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["highlight_kinds"] = ["variant"]  # as the Entity types toggle leaves it
    at.session_state["pick_Gene"] = "BRAF"
    at.session_state["pick_Variant"] = "V600E"
    at.run()
    assert not at.exception
    marked = " ".join(m.value for m in at.markdown if "PMID 1000001" in m.value or "<mark" in m.value)
    assert 'title="query: Variant: V600E"' in marked
    assert "Gene: BRAF" not in marked and "chemical:" not in marked
    toggle = at.pills(key="kinds_input")
    assert toggle.value == ["variant"]
    toggle.set_value(["gene", "variant", "chemical"]).run()
    assert not at.exception
    assert at.session_state["highlight_kinds"] == ["gene", "variant", "chemical"]
    marked = " ".join(m.value for m in at.markdown if "<mark" in m.value)
    assert "Gene: BRAF" in marked and "chemical: " in marked


def test_filters_sort_and_the_in_the_kb_badge(loaded_db):
    from curation.records import KBRecord

    con = open_store(loaded_db)
    with transaction(con):  # CIViC evidence 777 cites the first BRAF abstract
        add_kb_records(con, [KBRecord("PO", (("Gene", "BRAF"), ("Variant", "V600E"), ("Treatment", "Dabrafenib")),
                                      "1000001", "civic", "EID777:Dabrafenib")], origin="test")
    con.close()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.session_state["curator"] = "ana"
    at.selectbox(key="pick_Gene").set_value("BRAF")
    at.run()
    assert not at.exception
    shown = lambda: [m.value for m in at.markdown if "pubmed.ncbi.nlm.nih.gov" in m.value]  # noqa: E731
    assert any("PMID 1000001" in m for m in shown())
    links = [m.value for m in at.markdown if "civicdb.org/evidence/777/summary" in m.value]
    assert links and "CIViC EID777" in links[0] and "Dabrafenib" in html.unescape(links[0])
    # the fixture corpus (PubTator) has no year, journal or authors: said once, not per card
    assert sum("are not available for these abstracts" in c.value for c in at.caption) == 1
    at.radio(key="filter_in_kb").set_value("not in the KB").run()
    assert not at.exception and not any("PMID 1000001" in m for m in shown())
    at.radio(key="filter_in_kb").set_value("in the KB").run()
    assert [m for m in shown() if "PMID" in m] and all("PMID 1000001" in m for m in shown())
    at.radio(key="filter_decided").set_value("decided by me").run()
    assert not shown() and any("passes the filters" in i.value for i in at.info)


def test_a_saved_query_says_what_is_new_and_opens_on_it(loaded_db):
    import time

    from curation.store.annotations import AnnotationRow

    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["curator"] = "ana"
    at.run()
    at.selectbox(key="pick_Gene").set_value("BRAF")
    at.selectbox(key="pick_Variant").set_value("V600E")
    at.run()
    at.button(key="save_query").click().run()
    assert not at.exception
    from pages.parts.common import connection

    (concepts,) = connection().execute("SELECT concepts FROM saved_queries").fetchone()
    linked = json.loads(concepts)
    assert linked["Gene"] and linked["Variant"]  # what the search linked each slot to
    time.sleep(0.01)
    con = connection()  # a new abstract arrives (as an ingest would add it, with its concept index)
    con.execute("BEGIN TRANSACTION")
    add_documents(con, [Document("1000077", "BRAF V600E again", "Dabrafenib in BRAF V600E melanoma.")])
    replace_annotations(con, "t", {"1000077": 60}, [
        AnnotationRow("1000077", 0, 4, "BRAF", "gene", linked["Gene"][0], "BRAF", 1.0, "dictionary", "t"),
        AnnotationRow("1000077", 5, 10, "V600E", "variant", linked["Variant"][0], "V600E", 1.0, "dictionary", "t")])
    con.execute("COMMIT")

    fresh = AppTest.from_file(APP, default_timeout=120)  # the next visit
    fresh.session_state["curator"] = "ana"
    fresh.run()
    assert any("1 with new abstracts" in e.label for e in fresh.expander)
    assert any("Gene = BRAF · Variant = V600E — 1 new since your last look" in t.value for t in fresh.text)
    fresh.button(key="open_saved_1").click().run()
    assert not fresh.exception
    assert any("1 abstract added since your last look" in i.value for i in fresh.info)
    shown = [m.value for m in fresh.markdown if "pubmed.ncbi.nlm.nih.gov" in m.value]
    assert shown and all("PMID 1000077" in m for m in shown)
    (seen,) = connection().execute("SELECT last_seen_at > created_at FROM saved_queries").fetchone()
    assert seen


def test_suggested_treatments_filter_to_supporting_abstracts_prefill_and_record(loaded_db):
    """The panel's chips: one chosen keeps only its supporting abstracts, fills their answer, and a decision
    made then records the suggestion in its provenance."""
    from curation.entities.annotation import Annotator
    from curation.workflows.entities import dictionary_matcher, reannotate

    con = open_store(loaded_db)
    with transaction(con):
        add_documents(con, [
            Document("2000001", "BRAF V600E melanoma.", "BRAF V600E melanoma responded to sotorasib in mice."),
            Document("2000002", "BRAF V600E tumours.", "We sequenced BRAF V600E tumours. Osimertinib was not used."),
        ])
    reannotate(con, Annotator(dictionary_matcher(con)), stale_only=False)
    con.close()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.session_state["curator"] = "ana"
    at.selectbox(key="pick_Gene").set_value("BRAF")
    at.selectbox(key="pick_Variant").set_value("V600E")
    at.run()
    assert not at.exception
    panel = at.button_group(key="suggestion_pick")
    labels = list(panel.options)
    assert any(label.startswith("Sotorasib") and "new to the KB" in label for label in labels), labels
    assert any(label.startswith("Vemurafenib") and "new to the KB" not in label for label in labels), labels
    sotorasib = next(label for label in labels if label.startswith("Sotorasib"))
    panel.set_value(sotorasib)
    at.run()
    assert not at.exception
    shown = {m.value.split("]")[0] for m in at.markdown if "[PMID" in m.value}
    assert any("PMID 2000001" in s for s in shown) and not any("PMID 1000001" in s for s in shown)
    assert any("relate Sotorasib to the query" in i.value for i in at.info)
    assert at.selectbox(key="answer_2000001").value == "Sotorasib"
    at.button(key="complete_2000001").click()
    at.run()
    from pages.parts.common import connection

    (stored,) = connection().execute("SELECT provenance FROM decisions WHERE pmid = '2000001'").fetchone()
    suggestion = json.loads(stored)["suggestion"]
    assert suggestion["name"] == "Sotorasib" and suggestion["rank"] >= 1 and suggestion["in_kb"] is False


def test_the_worklist_fills_and_its_next_open_relation_fills_the_slots(loaded_db):
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["curator"] = "ana"
    at.run()
    next(b for b in at.button if b.label == "Add the KB's relations without an answer").click()
    at.run()
    assert not at.exception
    (caption,) = [c.value for c in at.caption if " open of " in c.value]
    opened, total = caption.split(" open of ")
    assert int(opened) == int(total) > 0
    next(b for b in at.button if b.label == "Next open relation").click()
    at.run()
    assert not at.exception
    assert at.selectbox(key="pick_Gene").value  # the relation taken fills the slots and searches
    assert any(t.value.startswith("Query: ") for t in at.text)


def test_switched_on_a_grade_re_ranks_the_ungraded_results_and_off_it_does_not(grouped_db):
    at = _search(curator="ana", pick_Gene="BRAF", pick_Variant="V600E")
    assert at.toggle(key="session_rerank").value is False  # off by default: not yet shown to help on the benchmark
    at.toggle(key="session_rerank").set_value(True).run()
    assert not any(c.startswith("Re-ranked after") for c in _shown(at, "caption"))  # nothing graded yet
    at.button(key="complete_1000001").click()
    at.run()
    assert not at.exception
    assert any(c.startswith("Re-ranked after your 1 grade:") for c in _shown(at, "caption"))
    assert any("PMID 1000001" in m for m in _shown(at, "markdown"))  # the graded one keeps its place
    at.toggle(key="session_rerank").set_value(False).run()
    assert not any(c.startswith("Re-ranked after") for c in _shown(at, "caption"))


def test_the_address_keeps_the_name_the_schema_and_the_slots_through_reloads_and_page_switches(loaded_db):
    # A reload, or the address opened in a new tab: a new session takes back what the address holds.
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in {"curator": "ana", "schema": "PO", "Gene": "BRAF", "Variant": "V600E"}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception
    assert at.session_state["curator"] == "ana" and at.text_input(key="curator_input").value == "ana"
    assert at.selectbox(key="schema_input").value == "PO"
    assert at.selectbox(key="pick_Gene").value == "BRAF" and at.selectbox(key="pick_Variant").value == "V600E"
    assert any("Query: Treatment for gene BRAF and variant V600E?" in t.value for t in at.text)
    # What is typed goes back into the address at once, so the next reload keeps it.
    variant = next(v for v in at.selectbox(key="pick_Variant").options if v != "V600E")
    at.selectbox(key="pick_Variant").set_value(variant).run()
    assert dict(at.query_params) == {"curator": "ana", "schema": "PO", "Gene": "BRAF", "Variant": variant}
    # Another page and back: the slots are still filled (a widget's own key does not survive the other page).
    at.switch_page("pages/knowledge_base.py").run()
    assert not at.exception and dict(at.query_params)["Variant"] == variant
    at.switch_page("pages/curate.py").run()
    assert at.selectbox(key="pick_Gene").value == "BRAF" and at.selectbox(key="pick_Variant").value == variant
    # A schema the store does not have, in an address, falls back to the store's first.
    other = AppTest.from_file(APP, default_timeout=120)
    other.query_params["schema"] = "NOPE"
    other.run()
    assert not other.exception and other.selectbox(key="schema_input").value == "PO"
