"""Update the ranker: KB + decisions → a saved ranker with the gate's dev evidence; dev genes never trained on."""

from __future__ import annotations

import pytest

from curation.entities.annotation import Annotator
from curation.entities.lexicon import Lexicon
from curation.entities.matching import Matcher
from curation.grades import Grade
from curation.learning.ranker.build import update_ranker
from curation.learning.served_fusion import served_search_for
from curation.learning.splits import gene_part
from curation.ranking.model import RankerModel
from curation.records import Decision, Document, KBRecord, Synonym
from index.lexical import LexicalIndex
from index.search import Retriever
from tests.curation.ranking.tiny_ranker import GDT

TRAIN_GENES = ("TP53", "PTEN", "MYC", "ALK", "RET", "MET", "KIT", "FLT3")  # train genes of the seed-13 gene hash
DEV_GENES = ("BRAF", "EGFR")


def _corpus() -> tuple[list[Document], list[KBRecord], Lexicon]:
    documents, records, synonyms = [], [], [Synonym("D1", "disease", "carcinoma", "test", True),
                                            Synonym("C1", "chemical", "cisplatin", "test", True)]
    for i, gene in enumerate(TRAIN_GENES + DEV_GENES):
        synonyms.append(Synonym(f"G{i}", "gene", gene, "test", True))
        # the evidence: both concepts in one sentence with a treatment; the others mention them apart or once
        documents += [
            Document(f"{i}a", f"{gene} and carcinoma", f"Cisplatin treats {gene} mutant carcinoma in patients."),
            Document(f"{i}b", f"Carcinoma registry {gene}", f"{gene} {gene} {gene} was sequenced. Carcinoma is "
                     "frequent. Carcinoma carcinoma."),
            Document(f"{i}c", f"{gene} carcinoma review", f"A review of {gene}. Carcinoma was not studied."),
        ]
        records.append(KBRecord("GDT", (("Gene", gene), ("Disease", "carcinoma"), ("Treatment", "cisplatin")),
                                f"{i}a", "test", f"r{i}"))
    return documents, records, Lexicon(synonyms)


def test_an_update_trains_on_train_genes_measures_on_dev_genes_and_saves(tmp_path):
    assert all(gene_part(g.casefold()) == "train" for g in TRAIN_GENES)
    assert all(gene_part(g.casefold()) == "dev" for g in DEV_GENES)
    documents, records, lexicon = _corpus()
    matcher = Matcher(lexicon)
    annotations = dict(zip([d.pmid for d in documents], Annotator(matcher).annotate([d.text for d in documents]),
                           strict=True))
    by_pmid = {d.pmid: d for d in documents}
    search = served_search_for(matcher, annotations, by_pmid, GDT)
    engine = Retriever(lexical=LexicalIndex.build(documents), version="test")
    dev_decision = Decision(1, "ann", "GDT", "q", (("Gene", "BRAF"), ("Disease", "carcinoma")), "8b",
                            Grade.COMPLETE)
    train_decision = Decision(2, "ann", "GDT", "q", (("Gene", "TP53"), ("Disease", "carcinoma")), "0b",
                              Grade.NOT_RELEVANT)
    update = update_ranker(GDT, records, [dev_decision, train_decision], by_pmid, matcher, search, engine, None,
                           folder=tmp_path / "ranker", depth=10)
    trained = update.model.manifest.trained_on
    assert trained["kb_records"] == len(TRAIN_GENES) and trained["decisions_held_out"] == 1
    # The decision on a dev gene joins the KB's dev query it shares (BRAF + carcinoma): dev reads both.
    assert trained["decisions_trained_on"] == 1 and trained["dev_source"] == "kb+decisions"
    assert update.evidence.queries == len(DEV_GENES) and update.evidence.baseline == "concept search alone"
    assert update.evidence.verdict.startswith("not shown")  # two dev queries: too few for an interval
    loaded = RankerModel.load(tmp_path / "ranker")
    assert loaded.manifest.dev["queries"] == len(DEV_GENES) and loaded.manifest.depth == 10
    assert set(update.seconds) == {"candidates", "train", "dev"}
    assert loaded.manifest.changed == update.model.manifest.changed  # the changed queries travel in the manifest


def test_changed_queries_name_the_documents_that_moved_with_their_ranks():
    from curation.learning.ranker.build import changed_queries
    from curation.learning.ranker.training import LabelledQuery

    before = {"q1": {"a": 1.0, "b": 0.5, "c": 1 / 3}, "q2": {"x": 1.0, "y": 0.5}}
    after = {"q1": {"c": 1.0, "a": 0.5, "b": 1 / 3}, "q2": {"x": 1.0, "y": 0.5}}
    queries = {"q1": LabelledQuery({"Gene": "BRAF"}, {"c": 2}), "q2": LabelledQuery({"Gene": "EGFR"}, {"x": 2})}
    changed = changed_queries(before, after, queries, ({"q1": 0.5, "q2": 1.0}, {"q1": 1.0, "q2": 1.0}))
    assert len(changed) == 1 and changed[0]["values"] == {"Gene": "BRAF"}  # q2 kept its order
    assert changed[0]["documents"][0] == {"pmid": "c", "before": 3, "after": 1, "gain": 2}
    assert (changed[0]["ndcg10_before"], changed[0]["ndcg10_after"]) == (0.5, 1.0)


def test_updates_are_kept_and_one_is_served_by_name(tmp_path):
    from curation.ranking.history import activate_update, list_updates, save_update, served_origin
    from curation.ranking.stage import RANKER_FOLDER
    from tests.curation.ranking.tiny_ranker import _reversing_stage

    model = _reversing_stage(tmp_path / "built").model
    assert model.gain_per_feature() == {"served_rank": pytest.approx(1.0)}  # the one feature carries it all
    first = save_update(tmp_path, model)
    second = save_update(tmp_path, model)
    assert served_origin(tmp_path) == "" and [u.name for u in list_updates(tmp_path)[0]] == [second.name, first.name]
    activate_update(tmp_path, first.name)
    assert served_origin(tmp_path) == first.name and RankerModel.load(tmp_path / RANKER_FOLDER)
    updates, problems = list_updates(tmp_path)
    assert [u.active for u in updates] == [False, True] and not problems
    (second / "ranker.txt").write_text("garbage")
    assert len(list_updates(tmp_path)[1]) == 1  # a damaged update is named, not served


def test_the_workflow_keeps_an_update_beside_a_bm25_store_and_serves_it_only_through_the_gate(tmp_path):
    from curation.retrieval.result_rows import default_linker
    from curation.store.base import add_schema, transaction
    from curation.store.corpus import add_documents
    from curation.store.decisions import record_decision
    from curation.store.kb import add_kb_records
    from curation.store.opening import open_store
    from curation.workflows import ranker_update

    documents, records, lexicon = _corpus()
    con = open_store(tmp_path / "s.duckdb")
    add_schema(con, GDT)
    with transaction(con):
        add_documents(con, documents)
        add_kb_records(con, records, origin="test")
    record_decision(con, "ann", GDT, {"Gene": "TP53", "Disease": "carcinoma"}, "0b", Grade.NOT_RELEVANT)
    matcher = Matcher(lexicon)
    engine = Retriever(lexical=LexicalIndex.build(documents), version="bm25")
    models = tmp_path / "models"
    outcome = ranker_update.update_and_activate(con, engine, matcher, default_linker(con, matcher), GDT, models)
    assert not outcome.activated and outcome.verdict.startswith("not shown")  # two dev genes: no interval
    assert getattr(engine, "learned", None) is None  # not through the gate: the concept search alone still serves
    panel = ranker_update.ranker_panel(con, engine.version, GDT, models)
    assert [u.name for u in panel.updates] == [outcome.name] and not panel.updates[0].active
    assert (models / ".rankers" / "GDT" / "rankers" / outcome.name / "ranker.txt").is_file()
    assert "1 decisions" in panel.updates[0].trained_on
    con.close()


def _topic_store(relevant: int = 5, other: int = 30):
    """Per gene: ``relevant`` abstracts stating gene and carcinoma in one sentence, below ``other`` that repeat both
    apart (the served order puts the repeats first)."""
    genes = TRAIN_GENES[:5]
    documents, synonyms = [], [Synonym("D1", "disease", "carcinoma", "test", True)]
    for i, gene in enumerate(genes):
        synonyms.append(Synonym(f"G{i}", "gene", gene, "test", True))
        documents += [Document(f"{gene}-r{j}", f"Study {j}", f"In carcinoma we found that {gene} drives growth of "
                               f"carcinoma cells {j}.") for j in range(relevant)]
        documents += [Document(f"{gene}-n{j}", f"{gene} {gene} carcinoma {j}", f"{gene} {gene} {gene} was sequenced in "
                               f"cohort {j}. Separately, carcinoma carcinoma carcinoma incidence rose.")
                      for j in range(other)]
    matcher = Matcher(Lexicon(synonyms))
    annotations = dict(zip([d.pmid for d in documents], Annotator(matcher).annotate([d.text for d in documents]),
                           strict=True))
    by_pmid = {d.pmid: d for d in documents}
    search = served_search_for(matcher, annotations, by_pmid, GDT)
    return genes, by_pmid, matcher, search, Retriever(lexical=LexicalIndex.build(documents), version="test")


def _screened(genes, by_pmid, shuffled: bool) -> list[Decision]:
    """Every candidate of each gene's topic graded: from the text (one-sentence statement: complete), or shuffled
    within the topic (labels that teach nothing another topic can use)."""
    import random

    decisions = []
    for gene in genes:
        pmids = sorted(p for p in by_pmid if p.startswith(f"{gene}-"))
        labels = [p.split("-")[1].startswith("r") for p in pmids]
        if shuffled:
            random.Random(gene).shuffle(labels)
        values = (("Gene", gene), ("Disease", "carcinoma"))
        decisions += [Decision(len(decisions) + 1, "ann", "GDT", "q", values, p,
                               Grade.COMPLETE if good else Grade.NOT_RELEVANT)
                      for p, good in zip(pmids, labels, strict=True)]
    return decisions


def test_graded_topics_are_judged_leave_topic_out_and_activate_only_what_carries_over(tmp_path):
    genes, by_pmid, matcher, search, engine = _topic_store()
    taught = _screened(genes[:4], by_pmid, shuffled=False)
    update = update_ranker(GDT, [], taught, by_pmid, matcher, search, engine, None, folder=tmp_path / "r", depth=50)
    found = update.evidence
    assert found.dev_source == "topics" and found.queries == 4 and found.improved, found
    assert found.baseline_mean == 0.0 and found.new_mean > 0.5  # the statements sat below the repeats; now on top
    assert update.model.manifest.trained_on["topics"] == 4 and "held-out topic" in found.describe()
    noise = update_ranker(GDT, [], _screened(genes[:4], by_pmid, shuffled=True), by_pmid, matcher, search, engine,
                          None, depth=50)
    assert noise.evidence.dev_source == "topics" and not noise.evidence.improved  # nothing carries over
    two = update_ranker(GDT, [], _screened(genes[:2], by_pmid, shuffled=False), by_pmid, matcher, search, engine,
                        None, depth=50)
    assert two.evidence.dev_source != "topics"  # fewer than MIN_TOPICS topics: the gene-hashed dev as before


def test_topic_folds_hold_every_topic_out_once():
    from curation.learning.ranker.build import topic_folds

    keys = [f"t{i}" for i in range(12)]
    folds = topic_folds(keys)
    assert len(folds) == 5 and sorted(k for f in folds for k in f) == sorted(keys)
    assert topic_folds(keys[:3]) == topic_folds(list(reversed(keys[:3]))) and len(topic_folds(keys[:3])) == 3
