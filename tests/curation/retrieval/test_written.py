"""A name the concept index lists nowhere is looked up in the text before a search says no abstract mentions it."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.entities.annotation import Annotator
from curation.entities.lexicon import Lexicon
from curation.entities.matching import Matcher
from curation.entities.normalise import Normaliser
from curation.entities.postings import MemoryPostings
from curation.entities.query import QueryLinker
from curation.ingest.problems import Problems
from curation.ingest.pubtator import read_pubtator
from curation.records import Document, Synonym
from curation.retrieval.relation_search import SearchOptions, search_relation
from curation.retrieval.written import phrase_regex, spellings, written_in
from curation.schemas import RelationSchema
from index.lexical import LexicalIndex
from index.search import Retriever

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"
SCHEMA = RelationSchema(name="test", entity_types=("Chemical", "Disease", "Gene?"), answer="Gene?",
                        templates=("{Chemical}", "{Disease}"),
                        kinds=(("Chemical", "chemical"), ("Disease", "disease"), ("Gene?", "gene")))
DOCS = [
    Document("1", "Reye syndrome after aspirin", "Children with Reye syndrome had taken aspirin for a fever."),
    Document("2", "Blood pressure", "Calcium-channel blockers lowered blood pressure in older patients."),
    Document("3", "Adipocytes", "Serum FABP4 rose with insulin resistance."),
    Document("4", "Unrelated", "Cholesterol metabolism in the liver of mice; calcium and channel proteins."),
    Document("5", "Aspirin", "Aspirin inhibits platelet aggregation."),
]


@pytest.mark.parametrize(("name", "text", "found"), [
    ("FABP-4", "serum FABP4 levels", True),
    ("FABP4", "serum FABP-4 levels", True),
    ("calcium channel blockers", "Calcium-channel blockers were given", True),
    ("1,10-phenanthroline", "treated with 1,10-phenanthroline.", True),
    ("Spinal cord ischemia", "after spinal cord ischemia in rabbits", True),
    ("lung injury", "acute lung injuries", False),  # a phrase, not its words
    ("AChE", "AChE activity", True),
    ("AChE", "a headache and ache", False),  # a short abbreviation keeps its case: "ache" is a word
    ("CAT", "the cat was sedated", False),
    ("p53", "P53-dependent", True),
    ("CD4", "CD40 ligand", False),
])
def test_a_phrase_is_found_as_written_whatever_its_dashes_and_case(name, text, found):
    assert bool(phrase_regex(name).search(text)) is found


def test_spellings_join_and_split_letters_and_digits():
    assert set(spellings("FABP-4")) >= {"FABP-4", "FABP4", "FABP 4"}
    assert "FABP 4" in spellings("FABP4")


@pytest.fixture(scope="module")
def search():
    lexicon = Lexicon([Synonym("D012202", "disease", "Reye Syndrome", "test", True),
                       Synonym("DB00945", "chemical", "aspirin", "test", True)])
    matcher = Matcher(lexicon)
    # no annotation at all: the concept index lists none of these names, as for a new paper the annotator missed
    source = MemoryPostings({d.pmid: [] for d in DOCS})
    linker = QueryLinker(lexicon, Normaliser(lexicon), None, set())
    engine = Retriever(lexical=LexicalIndex.build(DOCS))
    documents = {d.pmid: d for d in DOCS}

    def fetch(pmids):
        return {p: documents[p] for p in pmids if p in documents}

    def run(values):
        return search_relation(engine, linker, matcher, source, fetch, SCHEMA, values, SearchOptions(mode="bm25"))

    return run


@pytest.mark.parametrize(("slot", "typed", "pmid"), [
    ("Disease", "Reye syndrome", "1"),  # linked to "Reye Syndrome", written in another case
    ("Chemical", "calcium channel blockers", "2"),  # no concept; the text writes it with a hyphen
    ("Chemical", "FABP-4", "3"),
])
def test_a_name_written_but_not_indexed_is_found_by_its_text_and_said_so(search, slot, typed, pmid):
    found = search({slot: typed})
    assert not any(p.startswith("No abstract mentions") for p in found.problems), found.problems
    assert [h.pmid for h in found.hits] == [pmid]
    assert found.hits[0].concepts[0].how == "text"
    assert any(f"{slot} '{typed}' is written in 1 abstract that the concept index does not link to" in p
               for p in found.problems), found.problems


def test_a_name_no_abstract_writes_is_still_reported_absent(search):
    found = search({"Chemical": "ibuprofen"})
    assert found.hits == ()
    assert any(p.startswith("No abstract mentions Chemical 'ibuprofen'") for p in found.problems)


@pytest.mark.parametrize("typed", ["T", "G-to-A"])
def test_a_name_too_short_to_look_up_claims_nothing_about_the_text(search, typed):
    found = search({"Chemical": typed})
    assert not any(p.startswith("No abstract mentions") for p in found.problems)
    assert any(f"No abstract is linked to Chemical '{typed}'" in p and "this short" in p for p in found.problems)


def test_the_index_narrows_candidates_to_documents_with_every_token():
    index = LexicalIndex.build(DOCS)
    assert index.containing(["calcium channel blockers"]) == ["2"]  # "4" has "calcium" and "channel" only
    assert index.containing(["FABP-4", "FABP4"]) == ["3"]
    assert index.containing(["zzzq"]) == []
    assert index.containing(["a"]) is None  # no token the index keeps: nothing can be said
    assert index.containing(["G-to-A", "GtoA"]) is None  # one spelling has none: it cannot be narrowed


# --- held-out names: BioRED Test and BC5CDR Test abstracts as plain text, no annotation ---------------------------

HELD_OUT = [("Chemical", "calcium channel blockers"), ("Disease", "Spinal cord ischemia"),
            ("Chemical", "1,10-phenanthroline"), ("Gene", "AChE"), ("Gene", "FABP-4"), ("Disease", "lung injury")]


@pytest.fixture(scope="module")
def held_out():
    files = [DATA / "biored" / "Test.PubTator", DATA / "bc5cdr" / "CDR_TestSet.PubTator.txt"]
    if not all(f.is_file() for f in files):
        pytest.skip("../shared/data with BioRED and BC5CDR Test is not here")
    docs = {}
    for path in files:
        for d in read_pubtator(path, Problems(path, lenient=True)):
            docs.setdefault(d.pmid, Document(d.pmid, d.title, d.abstract))  # plain text: the gold is not read
    return list(docs.values())


def test_held_out_names_written_in_test_abstracts_are_never_said_absent(held_out):
    lexicon = Lexicon([Synonym("DB00945", "chemical", "aspirin", "test", True)])
    matcher = Matcher(lexicon)
    annotations = Annotator(matcher).annotate([d.text for d in held_out])
    source = MemoryPostings({d.pmid: a for d, a in zip(held_out, annotations, strict=True)})
    linker = QueryLinker(lexicon, Normaliser(lexicon), None, set())
    engine = Retriever(lexical=LexicalIndex.build(held_out))
    documents = {d.pmid: d for d in held_out}

    def fetch(pmids):
        return {p: documents[p] for p in pmids if p in documents}

    schema = RelationSchema(name="held-out", entity_types=("Chemical", "Disease", "Gene", "Variant?"),
                            answer="Variant?", templates=("{Chemical}", "{Disease}", "{Gene}"),
                            kinds=(("Chemical", "chemical"), ("Disease", "disease"), ("Gene", "gene"),
                                   ("Variant?", "variant")))
    for slot, typed in HELD_OUT:
        truth = {d.pmid for d in held_out if phrase_regex(typed).search(d.text)}
        assert truth, typed  # the names: every one is written in a held-out abstract
        found = search_relation(engine, linker, matcher, source, fetch, schema, {slot: typed},
                                SearchOptions(mode="bm25", k=50))
        assert not any(p.startswith("No abstract mentions") for p in found.problems), (typed, found.problems)
        assert truth <= {h.pmid for h in found.hits}, typed
        assert written_in(engine.lexical, fetch, typed).found.keys() == truth
        said = f"is written in {len(truth)} abstract{'s' if len(truth) > 1 else ''} that"
        assert any(said in p for p in found.problems), found.problems
