"""The annotation pipeline: how recognised, dictionary and rule spans combine, and the concept index g(e, d)."""

from __future__ import annotations

import pytest

from curation.entities.annotation import Annotation, Annotator, Link
from curation.entities.concepts import ConceptIndex
from curation.entities.lexicon import Lexicon
from curation.entities.matching import Matcher
from curation.records import Document, Synonym

TEXT = "Vemurafenib and dabrafenib target BRAF V600E in melanoma; Zelboraf-like compounds too."


@pytest.fixture(scope="module")
def matcher() -> Matcher:
    return Matcher(Lexicon([
        Synonym("DB08881", "chemical", "Vemurafenib", "drugbank", True),
        Synonym("DB08881", "chemical", "PLX4032", "drugbank"),
        Synonym("BRAF", "gene", "BRAF", "civic", True),
        Synonym("D008545", "disease", "melanoma", "corpus", True),
    ]))


class FakeRecogniser:
    name = "fake"

    def __init__(self, spans):
        self.spans = spans

    def recognise(self, texts):
        return [list(self.spans) for _ in texts]


class FakeLinker:
    name = "fake-linker"

    def __init__(self, links):
        self.links = links
        self.calls = []

    def link(self, text, kind):
        self.calls.append((text, kind))
        concept, confidence, applied = self.links.get(text, ("", 0.1, False))
        return Link(concept, text.lower(), confidence, applied, ((concept, text.lower(), confidence),))


def span(text: str, kind: str, occurrence: str | None = None) -> tuple[int, int, str]:
    start = TEXT.index(occurrence or text)
    return start, start + len(text), kind


def test_without_a_recogniser_the_dictionary_and_rules_annotate(matcher):
    found = Annotator(matcher).annotate([TEXT])[0]
    by_text = {a.text: a for a in found}
    assert by_text["Vemurafenib"].concept_id == "DB08881" and by_text["Vemurafenib"].source == "dictionary"
    assert by_text["V600E"].source == "rule" and by_text["V600E"].type == "variant"
    assert "dabrafenib" not in by_text or by_text["dabrafenib"].concept_id == ""  # shape only: never linked
    assert Annotator(matcher).version == "dictionary"


def test_recognised_spans_are_linked_only_when_the_link_is_applied(matcher):
    recogniser = FakeRecogniser([span("dabrafenib", "chemical"), span("Zelboraf", "chemical"),
                                 span("Vemurafenib", "chemical"), span("BRAF V600E", "gene")])
    linker = FakeLinker({"dabrafenib": ("DB08912", 0.99, True), "Zelboraf": ("DB08881", 0.6, False)})
    found = Annotator(matcher, recogniser, linker, combine="recogniser").annotate([TEXT])[0]
    by_text = {a.text: a for a in found}
    assert by_text["dabrafenib"] == Annotation(*span("dabrafenib", "chemical")[:2], "dabrafenib", "chemical",
                                               "DB08912", "dabrafenib", 0.99, "recogniser")
    # Below the threshold: kept as a recognised span, never given the candidate's concept.
    assert by_text["Zelboraf"].concept_id == "" and by_text["Zelboraf"].confidence == 0.6
    # A name the lexicon knows exactly is linked by the lexicon, without asking the linker.
    assert by_text["Vemurafenib"].concept_id == "DB08881"
    assert ("Vemurafenib", "chemical") not in linker.calls
    # The variant rule wins over a recognised span that overlaps it.
    assert by_text["V600E"].source == "rule" and "BRAF V600E" not in by_text


def test_union_adds_the_dictionary_spans_no_recognised_span_overlaps(matcher):
    recogniser = FakeRecogniser([span("dabrafenib", "chemical")])
    only = {a.text for a in Annotator(matcher, recogniser, combine="recogniser").annotate([TEXT])[0]}
    union = {a.text for a in Annotator(matcher, recogniser, combine="union").annotate([TEXT])[0]}
    assert "melanoma" not in only and "BRAF" not in only
    assert {"melanoma", "BRAF", "dabrafenib", "V600E"} <= union
    found = Annotator(matcher, recogniser, combine="union").annotate([TEXT])[0]
    assert all(a.end <= b.start for a, b in zip(found, found[1:], strict=False))  # no overlaps, text order


def test_bad_combinations_are_refused(matcher):
    with pytest.raises(ValueError, match="needs a recogniser"):
        Annotator(matcher, combine="union")
    with pytest.raises(ValueError, match="combine must be one of"):
        Annotator(matcher, FakeRecogniser([]), combine="both")


def test_the_version_names_recogniser_and_linker(matcher):
    annotator = Annotator(matcher, FakeRecogniser([]), FakeLinker({}), combine="union")
    assert annotator.version == "recogniser_first:fake:fake-linker"
    per_kind = Annotator(matcher, FakeRecogniser([]), None, combine={"chemical": "dictionary_first"})
    assert per_kind.version == "recogniser_first(chemical=dictionary_first):fake:lexicon"


def test_policies_per_kind_decide_which_source_wins(matcher):
    text = "Vemurafenib and dabrafenib target BRAF V600E in melanoma; Zelboraf-like compounds too."
    recogniser = FakeRecogniser([(0, 15, "chemical"),  # "Vemurafenib and": overlaps the dictionary's name
                                 span("Zelboraf", "variant"), span("melanoma", "disease")])
    dictionary_first = Annotator(matcher, recogniser, combine={"chemical": "dictionary_first", "variant": "dictionary"})
    found = {a.text: a for a in dictionary_first.annotate([text])[0]}
    assert found["Vemurafenib"].source == "dictionary" and "Vemurafenib and" not in found
    assert "Zelboraf" not in found  # variants: the rules and dictionary only
    assert found["melanoma"].source == "recogniser"  # other kinds: recogniser first
    recogniser_first = {a.text for a in Annotator(matcher, recogniser, combine="union").annotate([text])[0]}
    assert "Vemurafenib and" in recogniser_first and "Zelboraf" in recogniser_first
    with pytest.raises(ValueError, match="unknown combine policies"):
        Annotator(matcher, recogniser, combine={"gene": "both"})


def test_concept_index_counts_a_stored_concept_the_text_matcher_cannot_see(matcher):
    doc = Document("1", "Zelboraf in melanoma.", "", "x")
    stored = {"1": [Annotation(0, 8, "Zelboraf", "chemical", "DB08881", "Vemurafenib", 0.99, "recogniser")]}
    index = ConceptIndex(matcher, stored)
    assert not matcher.matched("PLX4032", "chemical", doc)
    assert index.matched("PLX4032", "chemical", doc)  # PLX4032 is a name of DB08881
    assert index.added([("PLX4032", "chemical", doc), ("melanoma", "disease", doc)]) == 1
    # An unlinked recognised span never counts.
    unlinked = {"1": [Annotation(0, 8, "Zelboraf", "chemical", "", "Zelboraf", 0.6, "recogniser")]}
    assert not ConceptIndex(matcher, unlinked).matched("PLX4032", "chemical", doc)


def test_concept_index_uses_only_applied_links_for_unknown_entity_names(matcher):
    doc = Document("1", "Zelboraf in melanoma.", "", "x")
    stored = {"1": [Annotation(0, 8, "Zelboraf", "chemical", "DB08881", "Vemurafenib", 0.99, "recogniser")]}
    confident = ConceptIndex(matcher, stored, FakeLinker({"vemurafinib": ("DB08881", 0.99, True)}))
    doubtful = ConceptIndex(matcher, stored, FakeLinker({"vemurafinib": ("DB08881", 0.5, False)}))
    assert confident.matched("vemurafinib", "chemical", doc)
    assert not doubtful.matched("vemurafinib", "chemical", doc)


def test_snapshots_carry_the_stored_annotations_and_training_reads_them(con, fixtures, tmp_path):
    from curation.entities.dictionaries import build_lexicon
    from curation.learning.snapshot import export_snapshot, load_snapshot
    from curation.workflows.entities import reannotate
    from curation.workflows.ingestion import ingest_corpus

    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator",
                  annotator=lambda: Annotator(Matcher(build_lexicon(con))))
    # A recogniser that finds "kinase" as a gene, linked to BRAF by an applied link.
    recogniser = FakeRecogniser([])
    recogniser.recognise = lambda texts: [[(t.find("kinase"), t.find("kinase") + 6, "gene")] if "kinase" in t
                                          else [] for t in texts]
    linker = FakeLinker({"kinase": ("BRAF-concept", 0.99, True)})
    reannotate(con, Annotator(Matcher(build_lexicon(con)), recogniser, linker, combine="union"))
    export_snapshot(con, tmp_path / "snap")
    snapshot = load_snapshot(tmp_path / "snap")
    found = [a for found in snapshot.annotations.values() for a in found]
    assert any(a.text == "kinase" and a.concept_id == "BRAF-concept" and a.source == "recogniser" for a in found)
    assert all(a.source != "gold" for a in found)  # gold mentions travel in mentions.jsonl only
    # g(e, d) of the build chain: the text matcher, or a stored concept of the entity.
    index = ConceptIndex(Matcher(Lexicon([Synonym("BRAF-concept", "gene", "B-Raf", "x", True)])), snapshot.annotations)
    document = snapshot.documents["1000001"]
    assert "B-Raf" not in document.text and index.matched("B-Raf", "gene", document)


def test_a_snapshot_written_before_annotations_were_stored_loads_with_none(con, tmp_path):
    from curation.learning.snapshot import export_snapshot, load_snapshot

    export_snapshot(con, tmp_path / "snap")
    (tmp_path / "snap" / "annotations.jsonl").unlink()
    assert load_snapshot(tmp_path / "snap").annotations == {}
