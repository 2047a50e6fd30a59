"""Concept search: typed names linked to concepts, every surface form searched, no filler."""

from __future__ import annotations

import pytest

from curation.entities.annotation import Annotator
from curation.entities.lexicon import Lexicon
from curation.entities.matching import Matcher
from curation.entities.normalise import Normaliser
from curation.entities.postings import MemoryPostings, concept_query
from curation.entities.query import LINKED, OFFERED, UNKNOWN, QueryLinker
from curation.entities.variants import variant_keys
from curation.records import Document, Synonym
from curation.retrieval.relation_search import SearchInputError, SearchOptions, search_relation
from curation.schemas import PO
from index.lexical import LexicalIndex
from index.search import Retriever

SYNONYMS = [
    Synonym("2064", "gene", "ERBB2", "test", True),
    Synonym("2064", "gene", "HER2", "test"),
    Synonym("673", "gene", "BRAF", "test", True),
    Synonym("1956", "gene", "EGFR", "test", True),
    Synonym("1956", "gene", "epidermal growth factor receptor", "test"),
    Synonym("238", "gene", "ALK", "test", True),
    Synonym("4893", "gene", "NRAS", "test", True),
    Synonym("613", "gene", "BCR", "test", True),
    Synonym("25", "gene", "ABL1", "test", True),
    Synonym("DB08881", "chemical", "vemurafenib", "test", True),
    Synonym("DB08881", "chemical", "PLX4032", "test"),
]

DOCS = [
    Document("1", "BRAF Val600Glu in melanoma", "Patients with BRAF p.Val600Glu responded to PLX4032."),
    Document("2", "EGFR L858R", "Lung tumours with EGFR L858R respond to erlotinib."),
    Document("3", "HER2 amplification", "HER2 amplified breast cancer treated with trastuzumab."),
    Document("4", "BRAF V600K", "A BRAF V600K mutation in a melanoma."),
    Document("5", "NRAS Q61R", "NRAS Q61R mutations in melanoma; no BRAF change."),
    Document("6", "Exon 19", "EGFR exon 19 deletions (E746_A750del) predict response."),
    Document("7", "Growth factors", "Growth factor signalling in the receptor tyrosine kinase family."),
    Document("8", "Unrelated", "Cholesterol metabolism in the liver of mice."),
    Document("9", "Fusions", "The BCR::ABL1 fusion drives chronic myeloid leukaemia; imatinib inhibits it."),
    Document("10", "Copy number", "ERBB2 amplification was found in 20% of gastric tumours."),
    Document("11", "Coding change", "The c.1799T>A transversion was seen in thyroid nodules."),
]


@pytest.fixture(scope="module")
def setup():
    lexicon = Lexicon(SYNONYMS)
    matcher = Matcher(lexicon)
    found = Annotator(matcher).annotate([d.text for d in DOCS])
    source = MemoryPostings({d.pmid: a for d, a in zip(DOCS, found, strict=True)})
    keys = {k for t in source.texts("variant") for k in variant_keys(t)}
    linker = QueryLinker(lexicon, Normaliser(lexicon), None, keys)
    engine = Retriever(lexical=LexicalIndex.build(DOCS))
    documents = {d.pmid: d for d in DOCS}

    def search(values, **options):
        return search_relation(engine, linker, matcher, source, lambda p: {x: documents[x] for x in p}, PO, values,
                               SearchOptions(mode="bm25", **options))

    return linker, search, source


def test_alias_links_to_the_concept_and_finds_its_other_names(setup):
    linker, search, _ = setup
    concept = linker.link("Gene", "her2", "gene")
    assert concept.status == LINKED and concept.concept_ids == ("2064",) and concept.canonical == "ERBB2"
    assert {"ERBB2", "HER2"} <= set(concept.forms)
    found = search({"Gene": "ERBB2"})
    assert {h.pmid for h in found.hits} == {"3", "10"}  # "3" says HER2 only
    assert found.hits[0].concepts[0].slot == "Gene"


@pytest.mark.parametrize("typed", ["B-Raf", "b raf", "Braf"])
def test_a_gene_written_with_other_dashes_or_spaces_links_to_its_name(setup, typed):
    linker, search, _ = setup
    concept = linker.link("Gene", typed, "gene")
    assert concept.status == LINKED and concept.concept_ids == ("673",) and concept.canonical == "BRAF"
    assert concept.how == ("exact" if typed == "Braf" else "spelling")
    assert {h.pmid for h in search({"Gene": typed, "Variant": "V600E"}).hits if h.group == "all"} == {"1"}


def test_spelling_links_only_whole_names(setup):
    linker, _, _ = setup
    assert linker.link("Gene", "BR-AFX", "gene").status != LINKED  # not a name once dashes are dropped
    assert linker.link("Gene", "-", "gene").status != LINKED  # nothing left to compare


@pytest.mark.parametrize(("typed", "expected"), [
    ("Val600Glu", {"1"}),  # three-letter
    ("p.V600E", {"1"}),  # with p.
    ("V600E", {"1"}),
    ("Leu858Arg", {"2"}),
    ("ex19del", {"6"}),  # exon category typed as curators shorten it
    ("exon 19 deletion", {"6"}),
    ("BCR-ABL1", {"9"}),  # a typed fusion: both sides genes
    ("amplification", {"3", "10"}),  # copy-number category: "amplified" and "amplification"
    ("c.1799T>A", {"11"}),  # coding DNA notation
])
def test_variant_notations_find_each_other(setup, typed, expected):
    _, search, _ = setup
    found = search({"Variant": typed})
    assert {h.pmid for h in found.hits} == expected
    assert found.concepts[0].status == LINKED


def test_codon_matches_every_change_there_and_says_so(setup):
    linker, search, _ = setup
    concept = linker.link("Variant", "V600", "variant")
    assert concept.codon and "codon" in concept.note
    found = search({"Gene": "BRAF", "Variant": "V600"})
    assert {h.pmid for h in found.hits if h.group == "all"} == {"1", "4"}


def test_documents_mentioning_all_concepts_rank_first_and_nothing_is_filler(setup):
    _, search, _ = setup
    found = search({"Gene": "BRAF", "Variant": "V600E"})
    groups = [h.group for h in found.hits]
    assert groups == sorted(groups)  # "all" before "some"
    assert found.hits[0].pmid == "1" and found.hits[0].group == "all"
    assert found.groups["all"] == 1
    every = {h.pmid for h in found.hits}
    assert "8" not in every and "2" not in every  # they mention neither BRAF nor V600E
    for hit in found.hits:
        assert hit.concepts, hit  # every hit mentions a query concept
        assert any(stage.stage == "fused" for stage in hit.stages)


def test_partial_words_of_a_long_name_are_no_mention(setup):
    _, search, _ = setup
    found = search({"Gene": "EGFR"})
    assert "7" not in {h.pmid for h in found.hits}  # "growth factor ... receptor" is not EGFR


def test_a_name_nobody_mentions_gives_no_results_and_says_so(setup):
    _, search, _ = setup
    found = search({"Gene": "ZZZQ9"})
    assert found.hits == () and found.groups == {"all": 0, "some": 0}
    assert found.concepts[0].status == UNKNOWN
    assert any("ZZZQ9" in p and "No abstract mentions" in p for p in found.problems)


def test_weak_link_is_offered_not_applied_until_chosen(setup):
    linker, search, _ = setup
    concept = linker.link("Gene", "BRAFF", "gene")
    assert concept.status == OFFERED and concept.concept_ids == ()
    assert concept.alternatives and concept.alternatives[0].canonical == "BRAF"
    assert search({"Gene": "BRAFF"}).hits == ()
    applied = search({"Gene": "BRAFF"}, applied={"Gene": "673"})
    assert applied.concepts[0].status == LINKED and applied.concepts[0].how == "applied by the curator"
    assert {"1", "4"} <= {h.pmid for h in applied.hits}


def test_bad_input_is_named(setup):
    _, search, _ = setup
    with pytest.raises(SearchInputError, match="Gene: 1,000 characters"):
        search({"Gene": "A" * 1000})
    with pytest.raises(SearchInputError, match="fill in at least one"):
        search({"Gene": "  "})
    with pytest.raises(SearchInputError, match="not a query slot"):
        search({"Gene": "BRAF"}, applied={"Drug": "x"})
    found = search({"Gene": "<b>BRAF'; DROP TABLE x;--</b>"})  # markup and SQL are just text
    assert all(h.concepts for h in found.hits)


def test_concept_query_weights_typed_and_canonical_above_aliases(setup):
    linker, _, source = setup
    query = concept_query(linker.link("Chemical", "PLX4032", "chemical"), source, alternative_weight=0.25)
    weights = dict(query.forms)
    assert weights["PLX4032"] == 1.0 and weights["vemurafenib"] == 1.0  # typed and canonical
    assert "1" in query.postings  # the concept index lists the document that names PLX4032
