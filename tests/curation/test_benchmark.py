"""The BioRED-derived benchmark builder, on a hand-written fixture and on the real data.

Fixture (tests/fixtures/bench/, laid out like the shared data folder):

* 2000001: "... with EGFR L858R. KRAS G12C tumours ..."; gefitinib relates to both variants.
  KRAS is mentioned three times and EGFR twice, but L858R touches EGFR (gap 1, KRAS is 2
  away) and G12C touches KRAS (gap 1, EGFR is 13 away): proximity, not frequency, decides.
* 2000002: TP53–cisplatin + cisplatin–ovarian cancer (join on the chemical) and
  BRCA1–ovarian cancer + cisplatin–ovarian cancer (join on the disease); TP53–doxorubicin has
  no disease relation, so it gives nothing.
* 2000003: BRCA1–ovarian carcinoma + olaparib–ovarian carcinoma; gene 6927 appears only in
  the composite mention "MODY" (3172,6927).
* 2000004: a variant related to metformin in a document without any gene.
* BC5CDR repeats 2000002 (one extra disease id) and adds 3000001 (composite D002318|D012131);
  HoC repeats 3000001 and adds 4000001.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from curation.learning.benchmark import (
    FORMS,
    SPLITS,
    BenchmarkError,
    BenchRecord,
    build_benchmark,
    concept_parts,
    nearest_gene,
    query_text,
    split_genes,
)
from curation.records import Document, Mention

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "bench"


@pytest.fixture(scope="module")
def bench():
    return build_benchmark(FIXTURE, seed=13)


def records_of(bench, kind):
    return [r for r in bench.records if r.kind == kind]


def test_type_a_variant_goes_to_the_nearest_gene(bench):
    a = {(r.gene_id, r.second_id, r.chemical_id, r.pmid) for r in records_of(bench, "A")}
    assert a == {
        ("1956", "rs121434568", "D000077156", "2000001"),  # EGFR L858R
        ("3845", "p|SUB|G|12|C", "D000077156", "2000001"),  # KRAS G12C
    }
    egfr = next(r for r in bench.records if r.second_id == "rs121434568")
    assert (egfr.gene_name, egfr.second_name) == ("EGFR", "L858R")
    # "Gefitinib" and "gefitinib" once each: the first seen wins the tie.
    assert egfr.chemical_name == "Gefitinib"
    assert bench.stats.gene_gaps == (
        ("2000001", "p|SUB|G|12|C", "3845", 1),
        ("2000001", "rs121434568", "1956", 1),
    )


def test_variant_without_gene_is_reported_not_guessed(bench):
    assert bench.stats.variants_without_gene == (("2000004", "rs999"),)
    assert bench.stats.chemical_variant_relations == 3
    assert not any(r.chemical_id == "D008687" for r in bench.records)


def test_type_b_both_join_paths(bench):
    b = {(r.gene_id, r.second_id, r.chemical_id, r.pmid) for r in records_of(bench, "B")}
    assert b == {
        ("7157", "D010051", "D002945", "2000002"),  # TP53–cisplatin + cisplatin–ovarian cancer (shared chemical)
        ("672", "D010051", "D002945", "2000002"),  # BRCA1–ovarian cancer + cisplatin–ovarian cancer (shared disease)
        ("672", "D010051", "C531550", "2000003"),  # BRCA1 + olaparib, shared disease
        ("6927", "D010051", "C531550", "2000003"),  # a gene known only from a composite mention
    }
    assert (bench.stats.b_via_chemical, bench.stats.b_via_disease) == (1, 3)
    assert not any(r.chemical_id == "D004317" for r in bench.records)  # doxorubicin has no disease relation
    names = {(r.gene_id, r.pmid): (r.gene_name, r.second_name, r.chemical_name) for r in records_of(bench, "B")}
    assert names[("672", "2000003")] == ("BRCA1", "ovarian carcinoma", "Olaparib")  # BRCA1 ×3 beats "Breast cancer 1"
    assert names[("672", "2000002")] == ("BRCA1", "ovarian cancer", "cisplatin")  # "cisplatin" ×2 beats "Cisplatin" ×1
    assert names[("6927", "2000003")][0] == "MODY"


def test_records_are_grouped_into_queries_with_qrels_and_answers(bench):
    split = bench.gene_split["672"]
    pair = bench.query_set(split, "pair")
    qid = "B:672:D010051"
    # Two records, two documents; the disease is named "ovarian cancer" once and "ovarian carcinoma"
    # once, and the tie goes to the alphabetically first name.
    assert pair.queries[qid] == "Treatment for gene BRCA1 and disease ovarian cancer?"
    assert pair.qrels[qid] == {"2000002": 1, "2000003": 1}
    assert set(pair.answer_key.answers[qid]) == {"D002945", "C531550"}
    assert set(pair.answer_key.query_concepts[qid]) == {"672"}
    gene = bench.query_set(bench.gene_split["1956"], "gene")
    assert gene.queries["G:1956"] == "Treatment for gene EGFR?"
    a_set = bench.query_set(bench.gene_split["3845"], "pair")
    assert a_set.queries["A:3845:p|SUB|G|12|C"] == "Treatment for gene KRAS and variant G12C?"


def test_gene_form_groups_every_record_of_the_gene():
    records = [
        BenchRecord("A", "1", "BRAF", "v1", "V600E", "c1", "vemurafenib", "10"),
        BenchRecord("B", "1", "B-raf", "d1", "melanoma", "c2", "dabrafenib", "11"),
        BenchRecord("B", "1", "BRAF", "d1", "melanoma", "c1", "vemurafenib", "12"),
    ]
    assert query_text(records, "gene") == "Treatment for gene BRAF?"  # BRAF 2 × B-raf 1
    assert query_text(records[1:], "pair") == "Treatment for gene B-raf and disease melanoma?"  # tie → sorted first


def test_corpus_is_distinct_pmids_with_source_precedence(bench):
    pmids = [d.pmid for d in bench.corpus]
    assert sorted(pmids) == ["2000001", "2000002", "2000003", "2000004", "3000001", "4000001"]
    by_pmid = {d.pmid: d for d in bench.corpus}
    assert by_pmid["2000002"].source == "Train"  # BioRED before BC5CDR
    assert by_pmid["3000001"].title.startswith("Cardiovascular")  # BC5CDR (titled) before HoC
    assert by_pmid["4000001"].title == ""


def test_doc_concepts_merge_sources_and_split_composites(bench):
    concepts = bench.query_set("test", "pair").answer_key.doc_concepts
    assert {"D010051", "D010049", "7157", "672"} <= set(concepts["2000002"])  # BioRED ∪ BC5CDR
    assert {"D002318", "D012131"} <= set(concepts["3000001"])  # "D002318|D012131" split
    assert {"3172", "6927"} <= set(concepts["2000003"])
    assert "p|SUB|G|12|C" in concepts["2000001"]  # a variant id keeps its "|"
    assert "4000001" not in concepts  # HoC has no gold mentions


def test_concept_parts():
    assert concept_parts("3172,3651;6927") == ("3172", "3651", "6927")
    assert concept_parts("D002318|D012131", "Disease") == ("D002318", "D012131")
    assert concept_parts("p|SUB|V|600|E", "SequenceVariant") == ("p|SUB|V|600|E",)
    assert concept_parts("-") == ()


def _doc(text: str, mentions: list[tuple[str, str, str]]) -> Document:
    out, at = [], 0
    for surface, kind, concept in mentions:
        start = text.index(surface, at)
        out.append(Mention("1", start, start + len(surface), surface, kind, concept))
        at = start + len(surface)
    return Document("1", "", text, mentions=tuple(out))


def test_nearest_gene_tie_goes_to_the_more_frequent_gene_then_the_smaller_id():
    gene, variant = "GeneOrGeneProduct", "SequenceVariant"
    # "ABCB1 C3435T ABCC1": both genes 1 character away; ABCC1 is mentioned twice.
    text = "ABCB1 C3435T ABCC1 and ABCC1."
    doc = _doc(text, [("ABCB1", gene, "5243"), ("C3435T", variant, "rs1045642"), ("ABCC1", gene, "4363"),
                      ("ABCC1", gene, "4363")])
    assert nearest_gene(doc, "rs1045642") == "4363"
    once = _doc("ABCB1 C3435T ABCC1.", [("ABCB1", gene, "5243"), ("C3435T", variant, "rs1"), ("ABCC1", gene, "4363")])
    assert nearest_gene(once, "rs1") == "4363"  # equal gap, equal count: "4363" < "5243"
    # A composite gene mention does not count; nothing else → None.
    composite = _doc("MODY C3435T.", [("MODY", gene, "3172,6927"), ("C3435T", variant, "rs1")])
    assert nearest_gene(composite, "rs1") is None


def test_split_genes_is_seeded_complete_and_about_60_20_20():
    genes = [str(i) for i in range(100)]
    split = split_genes(genes, seed=13)
    assert set(split) == set(genes)
    assert Counter(split.values()) == {"train": 60, "dev": 20, "test": 20}
    assert split_genes(reversed(genes), seed=13) == split  # input order does not matter
    assert split_genes(genes, seed=14) != split


def test_splits_never_share_a_gene(bench):
    for form in FORMS:
        seen: dict[str, str] = {}
        for split in SPLITS:
            for records in bench.query_set(split, form).records.values():
                for record in records:
                    assert seen.setdefault(record.gene_id, split) == split
                    assert bench.gene_split[record.gene_id] == split


def test_unknown_query_set_and_missing_data_are_errors(bench, tmp_path):
    with pytest.raises(BenchmarkError, match="no query set 'valid'"):
        bench.query_set("valid", "pair")
    with pytest.raises(BenchmarkError, match=r"no \*\.PubTator file in .*biored"):
        build_benchmark(tmp_path)


def test_real_data_benchmark(data_dir):
    bench = build_benchmark(data_dir, seed=13)
    assert len(bench.corpus) == 3476
    assert len({d.pmid for d in bench.corpus}) == 3476
    for form in FORMS:
        test = bench.query_set("test", form)
        assert test.queries and set(test.queries) == set(test.qrels)
        assert all(test.qrels[q] and test.answer_key.answers[q] for q in test.queries)
    assert sum(r.kind == "A" for r in bench.records) > 0 and sum(r.kind == "B" for r in bench.records) > 0
    # Gene-grouped splits: no gene in two splits, and about 60/20/20 of the genes.
    by_split = Counter(bench.gene_split.values())
    assert abs(by_split["train"] / len(bench.gene_split) - 0.6) < 0.01
    corpus = {d.pmid for d in bench.corpus}
    assert all(r.pmid in corpus for r in bench.records)
    again = build_benchmark(data_dir, seed=13)
    assert again.records == bench.records and again.gene_split == bench.gene_split
