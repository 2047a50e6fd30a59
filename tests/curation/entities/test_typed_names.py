"""Curator spellings -> concepts, through the query linker the Curate page builds after "Load the sample".

The table is bench/_typed_names.py's (gene aliases and previous symbols, drug brand and code names, variant
notations, disease synonyms). A row that needs a vocabulary the store does not hold (its ``ingest-dict`` kind
was not loaded: the package is missing, or its loader is not in this checkout) is an expected failure that
names the vocabulary; with the vocabulary loaded it must pass.
"""

from __future__ import annotations

import pytest

from bench._typed_names import TABLE, UNREACHABLE, correct, link_row, needs_missing, sample_linker, typed_names


@pytest.fixture(scope="module")
def served(data_dir, tmp_path_factory):
    """(linker, loaded vocabulary kinds): the sample loaded (~10 s, ~50 s with the vocabularies) and its lexicon.

    The lexicon keeps the names the app's filter would measure as usually wrong in abstracts: that measurement
    runs a matcher over every annotated abstract, minutes with the gene vocabularies in, and it leaves out names
    for their use in running text, not as typed in a slot (bench/_typed_names.py measures with it).
    """
    return sample_linker(data_dir, tmp_path_factory.mktemp("typed-names"), filter_names=False)


def test_the_table_covers_every_kind_of_spelling():
    kinds = {row.kind for row in TABLE}
    assert len(TABLE) >= 60 and kinds == {"gene", "chemical", "variant", "disease"}
    assert len({(row.kind, row.typed) for row in TABLE}) == len(TABLE)  # no row twice


@pytest.mark.parametrize("row", TABLE, ids=[f"{row.kind}:{row.typed}" for row in TABLE])
def test_a_typed_name_links_to_its_concept(served, row):
    linker, loaded = served
    concept = link_row(linker, row)
    if row.typed in UNREACHABLE:
        # strict: the day the sample gives it, the row must be moved out of UNREACHABLE.
        pytest.xfail(UNREACHABLE[row.typed]) if not correct(concept, row) else pytest.fail(f"{row.typed} now links")
    if not correct(concept, row) and needs_missing(row, loaded):
        pytest.xfail(f"needs the {' or '.join(row.needs)} vocabulary, not in the store "
                     f"(linked {concept.status}: {list(concept.concept_ids)})")
    assert correct(concept, row), (concept.status, concept.concept_ids, concept.canonical, concept.how)


def test_typed_names_correct_counts_every_row_the_store_can_link(served):
    linker, loaded = served
    figures = typed_names(linker)
    reachable = [row for row in TABLE if not needs_missing(row, loaded) and row.typed not in UNREACHABLE]
    assert figures["typed_names_total"] == len(TABLE)
    assert figures["typed_names_correct"] >= len(reachable), figures["wrong"]
    print(f"typed_names_correct = {figures['typed_names_correct']}/{figures['typed_names_total']} "
          f"(vocabularies loaded: {sorted(loaded) or 'none'})")


def test_the_sample_store_links_categories_and_generic_words_as_a_curator_means(served):
    linker, _ = served
    amplification = linker.link("Variant", "amplification", "variant")
    assert amplification.concept_ids == ("Amplification",)
    assert not {"V600E", "p.V600E", "Val600Glu"} & set(amplification.forms)
    assert linker.link("Gene", "receptor", "gene").status != "linked"
    kras = linker.link("Gene", "KRAS", "gene")
    assert not {"Ras", "RAS", "G12D"} & set(kras.forms)
