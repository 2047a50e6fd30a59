"""The retrieval benchmark (v2): records, names, leak-free saved splits, on a hand-written fixture and the real data.

Fixture (tests/fixtures/bench/, laid out like the shared data folder):

* 2000001: "... with EGFR L858R. KRAS G12C tumours ..."; gefitinib relates to both variants.
  KRAS is mentioned three times and EGFR twice, but L858R touches EGFR (gap 1, KRAS is 2
  away) and G12C touches KRAS (gap 1, EGFR is 13 away): proximity, not frequency, decides.
* 2000002: TP53–cisplatin, cisplatin–ovarian cancer, BRCA1–ovarian cancer, TP53–doxorubicin.
* 2000003: BRCA1 (also "Breast cancer 1")–ovarian carcinoma, olaparib–ovarian carcinoma, and gene
  6927 named only in the composite mention "MODY" (3172,6927) related to ovarian carcinoma.
* 2000004: a variant (rs999) related to metformin in a document without any gene.
* BC5CDR repeats 2000002 (one extra disease id, no relation) and adds 3000001 (morphine, CID relation
  to the composite disease D002318|D012131); HoC repeats 3000001 and adds 4000001.

At seed 13 the fixture's documents hash to test (2000001, 2000002) and dev (2000003, 3000001), none to
train; behaviours that need a training split use small documents built in code (:func:`doc`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from curation.config import load_settings
from curation.entities.synonyms import drugbank_synonyms
from curation.learning.benchmark import (
    FORM_NAMES,
    KIND_NAMES,
    SPLITS,
    BenchmarkError,
    BenchRecord,
    SplitAssignment,
    assemble,
    build_benchmark,
    kind_of,
    load_corpus,
)
from curation.learning.benchmark.corpus import concept_parts, nearest_gene
from curation.learning.benchmark.names import Names, notations, variant_name
from curation.learning.benchmark.records import derive_records, merge_records
from curation.learning.benchmark.splits import assign, hash_split, pin_query_ids
from curation.records import Document, Mention, Relation, Synonym

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "bench"
GENE, VARIANT = "GeneOrGeneProduct", "SequenceVariant"
CHEMICAL, DISEASE = "ChemicalEntity", "DiseaseOrPhenotypicFeature"
# PMIDs by the split a hash of (seed 13, pmid) puts them in (checked in test_hash_split_of_the_pmids_used_here).
TRAIN_PMIDS, DEV_PMIDS, TEST_PMIDS = ("6", "8", "11", "12"), ("1", "3", "10"), ("2", "4", "5")


# --- helpers ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bench():
    return build_benchmark(FIXTURE, seed=13)


@pytest.fixture(scope="module")
def fixture_docs():
    return load_corpus(FIXTURE)


def doc(pmid: str, text: str, mentions: list[tuple[str, str, str]], relations: list[tuple[str, str]] = ()) -> Document:
    """A document whose mentions are found in ``text`` in order (each after the previous one)."""
    out, at = [], 0
    for surface, mention_type, concept in mentions:
        start = text.index(surface, at)
        out.append(Mention(pmid, start, start + len(surface), surface, mention_type, concept))
        at = start + len(surface)
    rels = tuple(Relation(pmid, "Association", a, b) for a, b in relations)
    return Document(pmid, "", text, source="code", mentions=tuple(out), relations=rels)


def derived(documents) -> list[BenchRecord]:
    """Every record of the documents before the split (copies of a PMID merged)."""
    return merge_records(r for d in documents for r in derive_records(d)[0])


def by_kind(records, kind: str) -> set[tuple]:
    return {(r.entities, r.answers, r.pmid) for r in records if r.kind == kind}


def normalised(text: str) -> str:
    return " ".join(text.casefold().split())


def parse(kind: str, text: str) -> dict[str, str]:
    """The entity names of a query text, read back through its kind's template."""
    relation = kind_of(kind)
    pattern = re.escape(relation.template)
    last = len(relation.query_types) - 1
    for position, entity_type in enumerate(relation.query_types):
        group = f"(?P<{entity_type}>.+?)" if position < last else f"(?P<{entity_type}>.+)"
        pattern = pattern.replace(re.escape("{" + entity_type + "}"), group)
    match = re.fullmatch(pattern, text)
    assert match, (kind, text)
    return match.groupdict()


def occurs(name: str, text: str) -> bool:
    """Whether ``name`` is a word sequence of the (normalised) text: no letter or digit on either side."""
    return re.search(r"(?<![^\W_])" + re.escape(normalised(name)) + r"(?![^\W_])", text) is not None


def check_reworded(benchmark) -> Counter:
    """Assert the reworded rule on every query; return the queries with no fresh name, per "kind:split".

    Rule: an entity's reworded name occurs in none of the query's evidence documents, unless no name of the
    concept avoids them all (then it is the canonical name). The concept is the one most records use.
    """
    texts = {d.pmid: normalised(d.text) for d in benchmark.corpus}
    fallbacks: Counter = Counter()
    checked = 0
    for (split, kind, form), query_set in benchmark.query_sets.items():
        if form != "reworded":
            continue
        for qid, text in query_set.queries.items():
            records = query_set.records[qid]
            evidence = [texts[p] for p in sorted({r.pmid for r in records})]
            fresh_all = True
            for position, (entity_type, name) in enumerate(parse(kind, text).items()):
                ids = Counter(r.entities[position][1] for r in records)
                concept = min(ids, key=lambda c: (-ids[c], c))
                fresh = [a for a in benchmark.names.alternatives(entity_type, concept)
                         if not any(occurs(a, t) for t in evidence)]
                if any(occurs(name, t) for t in evidence):
                    assert not fresh, f"{qid}: reworded {name!r} quotes the evidence though {fresh} do not"
                    assert name == benchmark.names.canonical(entity_type, concept), qid
                else:
                    assert name in benchmark.names.alternatives(entity_type, concept) or not fresh, (qid, name)
                fresh_all = fresh_all and bool(fresh)
                checked += 1
            fallbacks[f"{kind}:{split}"] += not fresh_all
    assert checked
    return Counter({k: v for k, v in fallbacks.items() if v})


def check_leak_free(benchmark) -> None:
    """Document-disjoint splits, one split per anchor, no dev/test text equal to a train text, forms aligned."""
    positives = {s: {r.pmid for r in benchmark.records[s]} for s in SPLITS}
    assert not positives["train"] & (positives["dev"] | positives["test"])
    assert not positives["dev"] & positives["test"]
    anchors: dict = {}
    for split in SPLITS:
        for record in benchmark.records[split]:
            assert anchors.setdefault(record.anchor, split) == split, record
            assert benchmark.assignment.documents[record.pmid] == split
            assert benchmark.assignment.concepts[f"{record.anchor[0]}:{record.anchor[1]}"] == split
    train_texts = {normalised(t) for kind in benchmark.kinds() for form in FORM_NAMES
                   for t in benchmark.query_set("train", kind, form).queries.values()}
    for split in SPLITS:
        for kind in benchmark.kinds():
            sets = [benchmark.query_set(split, kind, form) for form in FORM_NAMES]
            first = sets[0]
            for query_set in sets:
                assert (query_set.split, query_set.kind) == (split, kind)
                assert set(query_set.queries) == set(first.queries) == set(first.qrels)
                assert query_set.qrels == first.qrels
                assert query_set.answer_key.answers == first.answer_key.answers
                assert query_set.records == first.records
                for qid, relevant in query_set.qrels.items():
                    assert relevant and set(relevant) <= positives[split], qid
                    assert set(relevant) == {r.pmid for r in query_set.records[qid]}
                    if split != "train":
                        assert set(relevant).isdisjoint(positives["train"]), qid
                        assert normalised(query_set.queries[qid]) not in train_texts, qid


# --- records ------------------------------------------------------------------------------


def test_gene_variant_takes_the_nearest_gene_and_the_related_chemical(fixture_docs):
    records = derived(fixture_docs[1])
    gefitinib = (("Chemical", "D000077156"),)
    assert by_kind(records, "gene_variant") == {
        ((("Gene", "1956"), ("Variant", "rs121434568")), gefitinib, "2000001"),  # EGFR L858R
        ((("Gene", "3845"), ("Variant", "p|SUB|G|12|C")), gefitinib, "2000001"),  # KRAS G12C
    }
    egfr_l858r = [r for r in records if r.kind == "gene_variant" and r.entities[1][1] == "rs121434568"]
    assert egfr_l858r[0].anchor == ("Gene", "1956")


def test_a_variant_without_gene_is_counted_not_guessed(bench, fixture_docs):
    derivation = bench.stats["derivation"]
    assert derivation["variant_relations"] == 3
    assert derivation["variants_with_gene"] == 2
    assert derivation["variants_without_gene"] == 1
    assert derivation["variant_gene_gap_median_chars"] == 1
    stats = derive_records(next(d for d in fixture_docs[1] if d.pmid == "2000004"))[1]
    assert stats.variants_without_gene == [("2000004", "rs999")]
    assert not [r for r in derived(fixture_docs[1]) if r.pmid == "2000004"]  # no record, no guessed gene


def test_pair_kinds_and_their_answers(fixture_docs):
    records = derived(fixture_docs[1])
    ovarian, cisplatin, olaparib = ("Disease", "D010051"), ("Chemical", "D002945"), ("Chemical", "C531550")
    assert by_kind(records, "gene_disease") == {
        ((("Gene", "672"), ovarian), (cisplatin,), "2000002"),  # cisplatin treats the disease
        ((("Gene", "672"), ovarian), (olaparib,), "2000003"),
        ((("Gene", "6927"), ovarian), (olaparib,), "2000003"),  # a gene named only in a composite mention
    }
    assert by_kind(records, "gene_chemical") == {
        ((("Gene", "7157"), cisplatin), (ovarian,), "2000002"),
        ((("Gene", "7157"), ("Chemical", "D004317")), (), "2000002"),  # doxorubicin has no disease: no answer
    }
    chemical_disease = by_kind(records, "chemical_disease")
    assert ((cisplatin, ovarian), (("Gene", "672"), ("Gene", "7157")), "2000002") in chemical_disease
    assert ((olaparib, ovarian), (("Gene", "672"), ("Gene", "6927")), "2000003") in chemical_disease


def test_answers_come_from_the_query_entities_relations_only():
    braf = doc("9", "BRAF V600E responds to vemurafenib; BRAF drives melanoma.",
               [("BRAF", GENE, "673"), ("V600E", VARIANT, "p|SUB|V|600|E"), ("vemurafenib", CHEMICAL, "D000077484"),
                ("BRAF", GENE, "673"), ("melanoma", DISEASE, "D008545")],
               [("p|SUB|V|600|E", "D000077484"), ("673", "D008545")])
    records = derived([braf])
    vemurafenib, melanoma = ("Chemical", "D000077484"), ("Disease", "D008545")
    # The variant's partners, not its gene's (the melanoma relation is BRAF's).
    assert by_kind(records, "gene_variant") == {((("Gene", "673"), ("Variant", "p|SUB|V|600|E")), (vemurafenib,), "9")}
    assert by_kind(records, "gene_disease") == {((("Gene", "673"), melanoma), (), "9")}  # no chemical treats either
    assert by_kind(records, "gene") == {((("Gene", "673"),), (vemurafenib,), "9")}  # the gene's or its variants'


def test_bc5cdr_chemical_induced_disease_is_a_chemical_disease_record(fixture_docs):
    bc5cdr = [d for d in fixture_docs[1] if d.source == "CDR_Small"]
    assert {d.pmid for d in bc5cdr} == {"2000002", "3000001"}
    records = derived(bc5cdr)
    # The composite disease mention "D002318|D012131" types D002318 as a disease; BC5CDR relates no genes.
    assert [(r.kind, r.entities, r.answers, r.pmid) for r in records] == [
        ("chemical_disease", (("Chemical", "D009020"), ("Disease", "D002318")), (), "3000001"),
    ]


def test_gene_kind_groups_every_gene_of_the_pair_records(fixture_docs):
    records = derived(fixture_docs[1])
    genes = {(r.anchor, r.pmid) for r in records if r.kind != "gene" and r.anchor[0] == "Gene"}
    assert {(r.anchor, r.pmid) for r in records if r.kind == "gene"} == genes
    gene = {(r.entities[0][1], r.pmid): r.answers for r in records if r.kind == "gene"}
    assert gene[("1956", "2000001")] == (("Chemical", "D000077156"),)  # via its variant L858R
    assert gene[("7157", "2000002")] == (("Chemical", "D002945"), ("Chemical", "D004317"))
    assert gene[("672", "2000002")] == ()  # BRCA1 is related to a disease only
    assert len(gene) == 6


def test_a_pmid_annotated_twice_gives_one_record_with_united_answers():
    first = doc("7", "TP53 and cisplatin.", [("TP53", GENE, "7157"), ("cisplatin", CHEMICAL, "D002945")],
                [("7157", "D002945")])
    second = doc("7", "TP53 and cisplatin in sarcoma.",
                 [("TP53", GENE, "7157"), ("cisplatin", CHEMICAL, "D002945"), ("sarcoma", DISEASE, "D012509")],
                 [("7157", "D002945"), ("D002945", "D012509")])
    gene_chemical = [r for r in derived([first, second]) if r.kind == "gene_chemical"]
    assert [(r.entities, r.answers) for r in gene_chemical] == [
        ((("Gene", "7157"), ("Chemical", "D002945")), (("Disease", "D012509"),)),
    ]


def test_corpus_is_distinct_pmids_with_source_precedence(bench):
    pmids = [d.pmid for d in bench.corpus]
    assert sorted(pmids) == ["2000001", "2000002", "2000003", "2000004", "3000001", "4000001"]
    by_pmid = {d.pmid: d for d in bench.corpus}
    assert by_pmid["2000002"].source == "Train"  # BioRED before BC5CDR
    assert by_pmid["3000001"].title.startswith("Cardiovascular")  # BC5CDR (titled) before HoC
    assert by_pmid["4000001"].title == ""


def test_doc_concepts_merge_sources_and_split_composites(bench):
    concepts = bench.query_set("test", "gene", "canonical").answer_key.doc_concepts
    assert {"D010051", "D010049", "7157", "672"} <= set(concepts["2000002"])  # BioRED ∪ BC5CDR
    assert {"D002318", "D012131"} <= set(concepts["3000001"])  # "D002318|D012131" split
    assert {"3172", "6927"} <= set(concepts["2000003"])
    assert "p|SUB|G|12|C" in concepts["2000001"]  # a variant id keeps its "|"
    assert "4000001" not in concepts  # HoC has no gold mentions


def test_concept_parts():
    assert concept_parts("3172,3651;6927") == ("3172", "3651", "6927")
    assert concept_parts("D002318|D012131", "Disease") == ("D002318", "D012131")
    assert concept_parts("p|SUB|V|600|E", VARIANT) == ("p|SUB|V|600|E",)
    assert concept_parts("-") == ()


def test_nearest_gene_tie_goes_to_the_more_frequent_gene_then_the_smaller_id():
    # "ABCB1 C3435T ABCC1": both genes 1 character away; ABCC1 is mentioned twice.
    twice = doc("1", "ABCB1 C3435T ABCC1 and ABCC1.", [("ABCB1", GENE, "5243"), ("C3435T", VARIANT, "rs1045642"),
                                                      ("ABCC1", GENE, "4363"), ("ABCC1", GENE, "4363")])
    assert nearest_gene(twice, "rs1045642") == "4363"
    once = doc("1", "ABCC1 C3435T ABCB1.",
               [("ABCC1", GENE, "5243"), ("C3435T", VARIANT, "rs1"), ("ABCB1", GENE, "4363")])
    assert nearest_gene(once, "rs1") == "4363"  # equal gap, equal count: "4363" < "5243"
    # A composite gene mention does not count; nothing else → None.
    composite = doc("1", "MODY C3435T.", [("MODY", GENE, "3172,6927"), ("C3435T", VARIANT, "rs1")])
    assert nearest_gene(composite, "rs1") is None


# --- names --------------------------------------------------------------------------------


def test_variant_name_from_a_tmvar_id():
    assert variant_name("p|SUB|V|600|E") == "V600E"
    assert variant_name("c|SUB|C|643|T") == "c.643C>T"
    assert variant_name("c|DEL|528|T") == "c.528del"
    assert variant_name("rs121434568") is None
    assert variant_name("D000077156") is None
    assert variant_name("p|XYZ|V|600") is None


def test_notations_of_a_variant():
    assert notations("V600E") == ["V600E", "p.V600E", "Val600Glu", "p.Val600Glu"]
    assert set(notations("p.Val600Glu")) == {"V600E", "p.V600E", "Val600Glu", "p.Val600Glu"}
    assert notations("c.643C>T") == ["c.643C>T", "643C>T"]
    assert notations("BRCA1") == []


def test_an_rs_variant_is_named_by_its_most_frequent_protein_change():
    documents = [
        doc("1", "R72P in TP53.", [("R72P", VARIANT, "rs1042522")]),
        doc("2", "Arg72Pro again.", [("Arg72Pro", VARIANT, "rs1042522")]),  # the same change, three-letter
        doc("3", "A5T here.", [("A5T", VARIANT, "rs1042522")]),  # alone, "A5T" would win a 1-1 tie
        *(doc(str(p), "rs1042522 only.", [("rs1042522", VARIANT, "rs1042522")]) for p in (5, 6, 7)),
        doc("8", "rs77 only.", [("rs77", VARIANT, "rs77")]),
    ]
    names = Names(documents)
    # R72P in 2 documents (both notations) beats A5T in 1; the rs id's own text (3 documents) is no change.
    assert names.canonical("Variant", "rs1042522") == "R72P"
    assert names.canonical("Variant", "rs77") == "rs77"  # no protein change: its mention text
    assert names.canonical("Variant", "p|SUB|G|12|C") == "G12C"  # from the id, even unmentioned


def test_canonical_is_the_name_most_documents_use():
    documents = [
        doc("1", "HER2 was high.", [("HER2", GENE, "2064")]),
        doc("2", "HER2 again.", [("HER2", GENE, "2064")]),
        doc("3", "ERBB2 ERBB2 ERBB2 ERBB2.", [("ERBB2", GENE, "2064")] * 4),  # more mentions, fewer documents
        doc("4", "neu and neu.", [("neu", DISEASE, "D1"), ("neu", DISEASE, "D1")]),
        doc("5", "c-erbB-2 once.", [("c-erbB-2", DISEASE, "D1")]),  # documents tie: more mentions wins
        doc("6", "zeta.", [("zeta", CHEMICAL, "C1")]),
        doc("7", "alpha.", [("alpha", CHEMICAL, "C1")]),  # full tie: alphabetically first
        doc("8", "MODY.", [("MODY", GENE, "3172,6927")]),  # only a composite mention names it
    ]
    names = Names(documents)
    assert names.canonical("Gene", "2064") == "HER2"
    assert names.canonical("Disease", "D1") == "neu"
    assert names.canonical("Chemical", "C1") == "alpha"
    assert names.canonical("Gene", "6927") == "MODY"
    assert names.canonical("Gene", "999") == "999"


def test_drugbank_links_a_chemical_to_its_common_name(fixture_docs):
    corpus, annotated = fixture_docs
    dictionary = [
        Synonym("DB00317", "Chemical", "gefitinib", "drugbank"),
        Synonym("DB00317", "Chemical", "Iressa", "drugbank", canonical=True),
        Synonym("DB00515", "Chemical", "cisplatin", "drugbank", canonical=True),
        Synonym("DB99999", "Chemical", "Cisplatin", "drugbank", canonical=True),  # a name of two entries: no link
    ]
    linked = assemble(corpus, annotated, 13, None, KIND_NAMES, dictionary)
    assert linked.names.canonical("Chemical", "D000077156") == "Iressa"
    assert linked.names.canonical("Chemical", "D002945") == "cisplatin"
    assert linked.stats["chemicals_linked_to_drugbank"] == 1
    assert "Iressa" in linked.names.alternatives("Chemical", "D000077156")
    plain = assemble(corpus, annotated, 13)
    assert plain.names.canonical("Chemical", "D000077156") == "Gefitinib"  # 1 document each: "G" < "g"
    assert plain.stats["chemicals_linked_to_drugbank"] == 0


def test_fixture_query_texts_in_the_three_forms(bench):
    def texts(split, kind, qid):
        return {form: bench.query_set(split, kind, form).queries[qid] for form in FORM_NAMES}

    kras = texts("test", "gene_variant", "gene_variant:Gene:3845|Variant:p|SUB|G|12|C")
    assert kras["verbatim"] == kras["canonical"] == "Treatment for gene KRAS and variant G12C?"
    assert parse("gene_variant", kras["reworded"]) in [
        {"Gene": "KRAS", "Variant": name} for name in ("p.G12C", "Gly12Cys", "p.Gly12Cys")
    ]
    egfr = texts("test", "gene_variant", "gene_variant:Gene:1956|Variant:rs121434568")
    assert egfr["canonical"] == "Treatment for gene EGFR and variant L858R?"  # the rs id's protein change
    brca1 = texts("test", "gene_disease", "gene_disease:Gene:672|Disease:D010051")
    # "ovarian cancer" and "ovarian carcinoma" are in one document each; "ovarian cancer" has more mentions.
    assert brca1["verbatim"] == brca1["canonical"] == "Treatment for gene BRCA1 and disease ovarian cancer?"
    # Names of other documents (2000003), never the evidence's (2000002).
    assert brca1["reworded"] == "Treatment for gene Breast cancer 1 and disease ovarian carcinoma?"
    mody = texts("dev", "gene_disease", "gene_disease:Gene:6927|Disease:D010051")
    assert mody["verbatim"] == "Treatment for gene MODY and disease ovarian carcinoma?"  # the evidence's own name
    assert mody["canonical"] == "Treatment for gene MODY and disease ovarian cancer?"


def test_reworded_never_quotes_the_evidence_when_another_name_exists(bench):
    fallbacks = check_reworded(bench)
    assert fallbacks == Counter(bench.stats["reworded_without_fresh_name"])
    assert fallbacks["gene_variant:test"] == 2  # "EGFR" and "KRAS" have no other name


def test_reworded_falls_back_to_canonical_and_is_counted():
    documents = [
        doc("2", "XYZ1 causes heart attack.", [("XYZ1", GENE, "901"), ("heart attack", DISEASE, "D009203")],
            [("901", "D009203")]),
        doc("4", "Myocardial infarction was seen.", [("Myocardial infarction", DISEASE, "D009203")]),
    ]
    benchmark = assemble(documents, documents, 13)
    query_set = benchmark.query_set("test", "gene_disease", "reworded")
    assert query_set.queries == {
        "gene_disease:Gene:901|Disease:D009203": "Treatment for gene XYZ1 and disease Myocardial infarction?"
    }
    assert benchmark.stats["reworded_without_fresh_name"] == {"gene:test": 1, "gene_disease:test": 1}
    assert check_reworded(benchmark) == Counter(benchmark.stats["reworded_without_fresh_name"])


# --- splits -------------------------------------------------------------------------------


def test_hash_split_of_the_pmids_used_here():
    for split, pmids in zip(SPLITS, (TRAIN_PMIDS, DEV_PMIDS, TEST_PMIDS), strict=True):
        assert {hash_split(13, "document", p) for p in pmids} == {split}


def test_hash_split_is_seeded_and_about_55_15_30():
    pmids = [str(n) for n in range(3000)]
    split = {p: hash_split(13, "document", p) for p in pmids}
    shares = Counter(split.values())
    assert abs(shares["train"] / 3000 - 0.55) < 0.03 and abs(shares["test"] / 3000 - 0.30) < 0.03
    assert {p: hash_split(13, "document", p) for p in reversed(pmids)} == split
    assert {p: hash_split(14, "document", p) for p in pmids} != split


def _record(gene: str, pmid: str) -> BenchRecord:
    return BenchRecord("gene", (("Gene", gene),), (), pmid)


def test_groups_follow_the_majority_of_their_documents_and_conflicts_are_dropped():
    same_name = {"7124": "TNF", "21926": "TNF"}  # a human and a mouse gene, one canonical name
    records = [_record("7124", "6"), _record("21926", "8"), _record("21926", "2"),  # train, train, test
               _record("5", "2"), _record("5", "6")]  # test, train: a tie goes to test
    assignment, result = assign(records, lambda t, c: same_name.get(c, c), None, seed=13)
    assert assignment.concepts == {"Gene:7124": "train", "Gene:21926": "train", "Gene:5": "test"}
    assert assignment.documents == {"2": "test", "6": "train", "8": "train"}
    assert {(r.anchor[1], r.pmid) for r in result.kept["train"]} == {("7124", "6"), ("21926", "8")}
    assert {(r.anchor[1], r.pmid) for r in result.kept["test"]} == {("5", "2")}
    assert result.dropped == {"gene:test": 1, "gene:train": 1}
    assert (assignment.new_concepts, assignment.new_documents) == (3, 3)


def test_same_seed_same_assignment_other_seed_differs():
    records = [_record(str(g), str(100 + g % 37)) for g in range(120)]
    first, _ = assign(records, lambda t, c: c, None, seed=13)
    again, _ = assign(list(reversed(records)), lambda t, c: c, None, seed=13)
    other, _ = assign(records, lambda t, c: c, None, seed=14)
    assert first.to_dict() == again.to_dict()
    assert other.documents != first.documents and other.concepts != first.concepts


def test_fixture_build_is_deterministic_and_leak_free(bench):
    again = build_benchmark(FIXTURE, seed=13)
    assert again.assignment.to_dict() == bench.assignment.to_dict()
    assert again.query_sets == bench.query_sets
    check_leak_free(bench)


def test_a_tied_group_goes_to_test_and_its_other_records_are_conflicts(bench):
    # BRCA1 (672) has records in 2000002 (test) and 2000003 (dev): the tie goes to test.
    assert bench.assignment.concepts["Gene:672"] == "test"
    assert bench.assignment.documents["2000003"] == "dev"
    assert not [r for s in SPLITS for r in bench.records[s] if r.anchor == ("Gene", "672") and r.pmid == "2000003"]
    assert bench.stats["split"]["records_dropped_as_conflicts"] == {"gene:test": 1, "gene_disease:test": 1}


def test_a_grouped_query_spans_the_documents_of_every_concept_named_alike():
    documents = [
        doc("6", "TNF in arthritis.", [("TNF", GENE, "7124"), ("arthritis", DISEASE, "D001168")],
            [("7124", "D001168")]),
        doc("8", "Tnf in arthritis.", [("Tnf", GENE, "21926"), ("arthritis", DISEASE, "D001168")],
            [("21926", "D001168")]),
    ]
    benchmark = assemble(documents, documents, 13)
    query_set = benchmark.query_set("train", "gene", "canonical")
    # "TNF" and "Tnf" are one canonical name (case aside): one query; one record each, so the id first as text
    # ("21926" < "7124") gives the query its id and its name.
    assert query_set.queries == {"gene:Gene:21926": "Treatment for gene Tnf?"}
    assert query_set.qrels == {"gene:Gene:21926": {"6": 1, "8": 1}}
    assert set(query_set.answer_key.query_concepts["gene:Gene:21926"]) == {"7124", "21926"}


def test_a_dev_or_test_query_identical_to_a_train_query_is_dropped(tmp_path):
    documents = [
        doc("6", "TNF in arthritis.", [("TNF", GENE, "7124"), ("arthritis", DISEASE, "D001168")],
            [("7124", "D001168")]),
        doc("2", "TNF in arthritis.", [("TNF", GENE, "21926"), ("arthritis", DISEASE, "D001168")],
            [("21926", "D001168")]),
        doc("4", "BRAF in melanoma.", [("BRAF", GENE, "673"), ("melanoma", DISEASE, "D008545")],
            [("673", "D008545")]),
    ]
    saved = SplitAssignment(13, concepts={"Gene:7124": "train", "Gene:21926": "test"},
                            documents={"6": "train", "2": "test"})
    saved.save(tmp_path / "split.json")
    benchmark = assemble(documents, documents, 13, tmp_path / "split.json")
    assert benchmark.assignment.concepts["Gene:21926"] == "test"  # a saved place is kept, even split from its group
    assert {r.pmid for r in benchmark.records["test"]} == {"2", "4"}
    for form in FORM_NAMES:
        assert list(benchmark.query_set("test", "gene", form).queries) == ["gene:Gene:673"]
        pairs = benchmark.query_set("test", "gene_disease", form)
        assert list(pairs.queries) == ["gene_disease:Gene:673|Disease:D008545"]
    assert benchmark.stats["split"]["queries_dropped_identical_to_train"] == {"gene:test": 1, "gene_disease:test": 1}
    check_leak_free(benchmark)


def test_a_new_concept_follows_the_saved_member_of_its_group(tmp_path):
    documents = [
        doc("6", "TNF in arthritis.", [("TNF", GENE, "7124"), ("arthritis", DISEASE, "D001168")],
            [("7124", "D001168")]),
        *(doc(p, "TNF in arthritis.", [("TNF", GENE, "21926"), ("arthritis", DISEASE, "D001168")],
              [("21926", "D001168")]) for p in ("2", "4")),  # two test documents: the majority would say test
    ]
    SplitAssignment(13, concepts={"Gene:7124": "train"}, documents={"6": "train"}).save(tmp_path / "split.json")
    benchmark = assemble(documents, documents, 13, tmp_path / "split.json")
    assert benchmark.assignment.concepts["Gene:21926"] == "train"
    assert {r.pmid for s in SPLITS for r in benchmark.records[s]} == {"6"}  # 21926's test documents conflict
    assert benchmark.stats["split"]["records_dropped_as_conflicts"] == {"gene:train": 2, "gene_disease:train": 2}
    assert (benchmark.assignment.new_concepts, benchmark.assignment.new_documents) == (1, 2)
    # Without the file, the majority of the group's documents (2 test, 1 train) decides.
    assert assemble(documents, documents, 13).assignment.concepts == {"Gene:7124": "test", "Gene:21926": "test"}


def test_assignment_round_trips_through_json(bench, tmp_path):
    path = tmp_path / "split.json"
    bench.assignment.save(path)
    data = json.loads(path.read_text())
    assert data["format"] == "benchmark-split/2" and data["seed"] == 13
    loaded = SplitAssignment.load(path)
    assert loaded.concepts == bench.assignment.concepts and loaded.documents == bench.assignment.documents
    assert loaded.seed == 13


def test_a_rebuild_with_the_saved_split_never_moves_a_saved_key(fixture_docs, tmp_path):
    corpus, annotated = fixture_docs
    path = tmp_path / "split.json"
    without = [d for d in annotated if d.pmid != "2000002"]
    early = assemble([d for d in corpus if d.pmid != "2000002"], without, 13, path)
    assert early.stats["split"]["saved_file_used"] is False  # no file yet: a new assignment
    assert early.assignment.concepts["Gene:672"] == "dev"  # BRCA1's only document then is 2000003 (dev)
    early.assignment.save(path)
    later = assemble(corpus, annotated, 13, path)
    for key, split in early.assignment.concepts.items():
        assert later.assignment.concepts[key] == split, key
    for pmid, split in early.assignment.documents.items():
        assert later.assignment.documents[pmid] == split, pmid
    assert later.assignment.concepts["Gene:672"] == "dev"  # without the file, the tie would put it in test
    assert build_benchmark(FIXTURE, seed=13).assignment.concepts["Gene:672"] == "test"
    for split in ("dev", "test"):
        for kind in KIND_NAMES:
            before = early.query_set(split, kind, "canonical")
            after = later.query_set(split, kind, "canonical")
            assert set(before.queries) <= set(after.queries), (split, kind)
            for qid, records in before.records.items():
                assert set(records) <= set(after.records[qid]), qid
    for split in SPLITS:
        assert set(early.records[split]) <= set(later.records[split])
    # BRCA1's new record in 2000002 (test) conflicts with its saved place (dev).
    assert later.stats["split"]["records_dropped_as_conflicts"] == {"gene:dev": 1, "gene_disease:dev": 1}
    split_stats = later.stats["split"]
    assert split_stats["saved_file_used"] is True
    assert (split_stats["new_concepts"], split_stats["new_documents"]) == (2, 1)  # TP53, cisplatin; 2000002
    assert len(later.assignment.concepts) == len(early.assignment.concepts) + 2
    check_leak_free(later)


# --- errors -------------------------------------------------------------------------------


def test_a_data_dir_without_biored_is_an_error(tmp_path):
    with pytest.raises(BenchmarkError, match=r"no \*\.PubTator file in .*biored"):
        build_benchmark(tmp_path)


def test_documents_without_relations_are_an_error():
    plain = doc("6", "TNF in arthritis.", [("TNF", GENE, "7124"), ("arthritis", DISEASE, "D001168")])
    with pytest.raises(BenchmarkError, match="no curated relation"):
        assemble([plain], [plain], 13)


def test_an_unknown_kind_is_an_error(fixture_docs):
    with pytest.raises(BenchmarkError, match="unknown relation kind 'pair'"):
        build_benchmark(FIXTURE, kinds=("gene", "pair"))
    with pytest.raises(BenchmarkError, match="unknown relation kind 'pair'"):
        assemble(*fixture_docs, 13, None, ("gene", "pair"))


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "cannot read the saved split"),
    ('{"format": "benchmark-split/1", "concepts": {}, "documents": {}}', "not a saved split of format"),
    ('[1, 2]', "not a saved split of format"),
    ('{"format": "benchmark-split/2", "concepts": {"Gene:1": "valid"}, "documents": {}}', "has split 'valid'"),
    ('{"format": "benchmark-split/2", "concepts": {}, "documents": {"1": "valid"}}', "has split 'valid'"),
    ('{"format": "benchmark-split/2", "concepts": [], "documents": {}}', "'concepts' must be an object"),
    ('{"format": "benchmark-split/2", "seed": "x", "concepts": {}, "documents": {}}', "'seed' must be an integer"),
    ('{"format": "benchmark-split/2", "fractions": [0.5, 0.5], "concepts": {}, "documents": {}}', "three shares"),
    ('{"format": "benchmark-split/2", "fractions": 5, "concepts": {}, "documents": {}}', "three numbers"),
])
def test_a_bad_split_file_is_an_error(fixture_docs, tmp_path, content, message):
    path = tmp_path / "split.json"
    path.write_text(content)
    with pytest.raises(BenchmarkError, match=message):
        SplitAssignment.load(path)
    with pytest.raises(BenchmarkError, match=message):
        assemble(*fixture_docs, 13, path)


@pytest.mark.parametrize(("split", "kind", "form"), [
    ("valid", "gene", "canonical"), ("test", "pair", "canonical"), ("test", "gene", "paraphrased"),
])
def test_an_unknown_query_set_is_an_error(bench, split, kind, form):
    with pytest.raises(BenchmarkError, match=f"no query set '{split}'/'{kind}'/'{form}'"):
        bench.query_set(split, kind, form)


def test_a_kind_left_out_has_no_query_set(fixture_docs):
    only = assemble(*fixture_docs, 13, None, ("gene_variant",))
    assert only.kinds() == ("gene_variant",)
    assert not [r for s in SPLITS for r in only.records[s] if r.kind != "gene_variant"]
    with pytest.raises(BenchmarkError, match="no query set 'test'/'gene'/'canonical'"):
        only.query_set("test", "gene", "canonical")


# --- the real data ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_dir() -> Path:
    path = load_settings().data_dir
    if not (path / "README.md").exists():
        pytest.skip(f"real data not found at {path} (set CURATION_DATA_DIR)")
    return path


@pytest.fixture(scope="module")
def real(real_dir):
    return build_benchmark(real_dir, seed=13)


def test_real_corpus_and_query_counts(real):
    assert len(real.corpus) == len({d.pmid for d in real.corpus}) == 3476
    assert real.kinds() == KIND_NAMES
    for kind in KIND_NAMES:
        test = real.query_set("test", kind, "canonical")
        assert len(test.queries) >= 100, kind
        assert all(test.qrels[qid] for qid in test.queries), kind
    assert len(real.query_set("test", "gene_variant", "canonical").queries) >= 100
    assert real.stats["derivation"]["variants_with_gene"] > 0
    assert real.stats["chemicals_linked_to_drugbank"] > 0  # the shared data has DrugBank's vocabulary
    corpus = {d.pmid for d in real.corpus}
    assert all(r.pmid in corpus for s in SPLITS for r in real.records[s])


def test_real_splits_are_leak_free(real):
    check_leak_free(real)


def test_real_reworded_never_quotes_the_evidence_when_another_name_exists(real):
    assert check_reworded(real) == Counter(real.stats["reworded_without_fresh_name"])


def test_real_canonical_names_are_one_per_concept(real):
    for (_, kind, form), query_set in real.query_sets.items():
        if form != "canonical":
            continue
        relation = kind_of(kind)
        for qid, records in query_set.records.items():
            for record in records:
                names = {t: real.names.canonical(t, c) for t, c in record.entities}
                assert normalised(relation.render(names)) == normalised(query_set.queries[qid]), qid


def test_real_build_is_deterministic(real, real_dir):
    again = build_benchmark(real_dir, seed=13)
    assert again.assignment.to_dict() == real.assignment.to_dict()
    for key in (("test", "gene_variant", "reworded"), ("dev", "chemical_disease", "canonical")):
        assert again.query_sets[key].queries == real.query_sets[key].queries


def test_real_rebuild_from_a_saved_subset_keeps_every_saved_place(real_dir, tmp_path):
    corpus, annotated = load_corpus(real_dir)
    dictionary = drugbank_synonyms(real_dir / "dicts" / "drugbank_vocabulary.csv")
    path = tmp_path / "split.json"
    half = [d for d in annotated if int(d.pmid) % 2 == 0]
    early = assemble(corpus, half, 13, None, KIND_NAMES, dictionary)
    early.assignment.save(path)
    later = assemble(corpus, annotated, 13, path, KIND_NAMES, dictionary)
    for key, split in early.assignment.concepts.items():
        assert later.assignment.concepts[key] == split, key
    for pmid, split in early.assignment.documents.items():
        assert later.assignment.documents[pmid] == split, pmid
    for split in SPLITS:  # records are only added: every earlier one is still in its split
        assert set(early.records[split]) <= set(later.records[split]), split
    # Every earlier dev/test query whose records are all still grouped together keeps its id (its group may grow),
    # unless its group merged with another earlier query's (a concept's canonical name changed): then one of the
    # two ids survives.
    def members(bench, split):
        return {qid: {r.entities for r in rs} for kind in bench.kinds()
                for qid, rs in bench.query_set(split, kind, "canonical").records.items()}

    for split in ("dev", "test"):
        before, after = members(early, split), members(later, split)
        owner = {entities: qid for qid, group in after.items() for entities in group}
        for qid, group in before.items():
            if len({owner.get(e) for e in group}) == 1 and next(iter(group)) in owner:
                now = owner[next(iter(group))]
                merged = {q for q, g in before.items() if g & after[now]}
                assert now == qid or (len(merged) > 1 and now in merged), qid
    split_stats = later.stats["split"]
    assert split_stats["saved_file_used"] is True
    assert split_stats["new_concepts"] == len(later.assignment.concepts) - len(early.assignment.concepts) > 0
    assert split_stats["new_documents"] == len(later.assignment.documents) - len(early.assignment.documents) > 0
    check_leak_free(later)


def test_saved_query_ids_survive_a_new_concept_joining_the_group():
    """A mouse gene with a smaller id joins the human gene's query (same canonical name): the saved id stays."""
    human = BenchRecord("gene", (("Gene", "7124"),), (), "10")
    mouse = BenchRecord("gene", (("Gene", "21926"),), (), "11")
    other = BenchRecord("gene", (("Gene", "999"),), (), "12")
    saved = {"gene:Gene:7124": ["Gene:7124"]}
    pinned = pin_query_ids({"gene:Gene:21926": (human, mouse), "gene:Gene:7124": (other,)}, saved)
    assert pinned["gene:Gene:7124"] == (human, mouse)
    assert pinned["gene:Gene:7124#2"] == (other,)  # its computed id was taken by the saved query
    assert pin_query_ids({"gene:Gene:999": (other,)}, saved) == {"gene:Gene:999": (other,)}
