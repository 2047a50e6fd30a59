"""The learned ranking stage: features of a candidate, the model folder (save, reload, refuse), and the served path."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from curation.grades import Grade
from curation.learning.ranker.training import (
    LabelledQuery,
    candidate_lists,
    decision_queries,
    kb_queries,
    merge_queries,
    ranked_runs,
    train_ranker,
)
from curation.ranking.features import (
    FEATURE_NAMES,
    PRODUCT_FEATURES,
    Evidence,
    MemorySignals,
    feature_matrix,
    feature_table,
    query_key,
)
from curation.ranking.model import MANIFEST_FILE, MODEL_FILE, RankerError, RankerModel
from curation.ranking.stage import RANKER_FOLDER, attach
from curation.records import Decision, KBRecord
from curation.store.relations import PairRow
from index.search import Retriever
from tests.curation.ranking.tiny_ranker import DOCS, GDT, QUERY, _reversing_stage, _search, _synthetic


def _column(rows: np.ndarray, name: str) -> np.ndarray:
    return rows[:, FEATURE_NAMES.index(name)]


def test_features_describe_each_candidate_from_the_hit_the_text_and_the_store(setup):
    engine, search = setup
    found = _search(engine, search)
    by_pmid = {h.pmid: i for i, h in enumerate(found.hits)}
    assert set(by_pmid) >= {"1", "2", "4"}
    other = query_key({"Gene": "EGFR"})
    here = query_key(QUERY)
    assert here == query_key({"Disease": " Melanoma ", "Gene": "braf"})  # case and spacing do not make a new query
    pair = PairRow("1", "673", "gene", "BRAF", "D008545", "disease", "melanoma", 0.9, True, 0, 40)
    answer = PairRow("1", "673", "gene", "BRAF", "C0001", "chemical", "vemurafenib", 0.7, True, 0, 40)
    signals = MemorySignals({
        "1": Evidence(pairs=(pair, answer), kinds={"chemical": 2, "gene": 1}, cited={here: 3, other: 1},
                      grades={here: 2, other: 1}),
        "2": Evidence(kinds={"gene": 3}),
    })
    rows = feature_matrix(found.concepts, found.hits, search.documents(list(by_pmid)), signals, here, "chemical")
    assert rows.shape == (len(found.hits), len(FEATURE_NAMES))
    one, two, four = by_pmid["1"], by_pmid["2"], by_pmid["4"]
    assert _column(rows, "slot1_mentions")[one] == 2 and _column(rows, "slot1_in_title")[one] == 1
    assert _column(rows, "slot1_in_title")[four] == 0 and _column(rows, "slot2_in_title")[four] == 1
    assert _column(rows, "slot2_first_offset")[one] == DOCS[0].text.index("melanoma")
    assert _column(rows, "slot1_linked")[one] == 1
    assert math.isnan(_column(rows, "slot3_mentions")[one])  # GDT has two query slots
    assert _column(rows, "shared_sentence")[one] == 2  # "Vemurafenib treats BRAF mutant melanoma."
    assert _column(rows, "shared_sentence")[two] == 1  # melanoma and BRAF in different sentences
    assert _column(rows, "pair_probability")[one] == pytest.approx(0.9)
    assert math.isnan(_column(rows, "pair_probability")[two])  # nothing stored: missing, not zero
    assert _column(rows, "answer_probability")[one] == pytest.approx(0.7)
    assert _column(rows, "answer_mentions")[one] == 2 and _column(rows, "answer_mentions")[two] == 0
    # the KB's and curators' judgements of this very query are the label, never a feature
    assert _column(rows, "kb_cited_elsewhere")[one] == 1 and _column(rows, "graded_elsewhere")[one] == 1
    assert _column(rows, "served_rank").tolist() == [h.rank for h in found.hits]
    assert _column(rows, "document_length")[one] == len(DOCS[0].text)
    assert "document_length" not in PRODUCT_FEATURES and "kb_cited_elsewhere" not in PRODUCT_FEATURES
    table = feature_table()
    assert table.count("\n") == len(FEATURE_NAMES) + 1 and "no (identifies the source)" in table
    assert table in (Path(__file__).parents[3] / "docs" / "guide" / "training.md").read_text()  # the manual's table


def test_a_trained_ranker_saved_and_reloaded_scores_identically(tmp_path):
    lists = _synthetic()
    model, seconds = train_ranker(lists, PRODUCT_FEATURES, depth=20)
    assert seconds < 30
    folder = model.save(tmp_path / "ranker")
    assert (folder / MODEL_FILE).read_text().startswith("tree")  # LightGBM's own text format
    manifest = json.loads((folder / MANIFEST_FILE).read_text())
    assert manifest["features"] == list(PRODUCT_FEATURES) and manifest["depth"] == 20
    assert manifest["trained_on"]["queries"] > 0 and manifest["library"]
    loaded = RankerModel.load(folder)
    assert np.array_equal(loaded.score(lists.rows), model.score(lists.rows))
    # it learned the signal: relevant documents first, though the served order put them anywhere
    run = ranked_runs(lists, loaded)
    top = [max(run[k], key=run[k].get) for k in lists.keys]
    relevant = {p for p, g in zip(lists.pmids, lists.gains, strict=True) if g > 0}
    assert sum(p in relevant for p in top) / len(top) > 0.9


def test_a_bad_ranker_folder_is_refused_with_the_file_and_what_to_do(tmp_path):
    model, _ = train_ranker(_synthetic(n_lists=60), PRODUCT_FEATURES, depth=20)
    folder = model.save(tmp_path / "ranker")
    (folder / MODEL_FILE).write_text("not a model\n")
    with pytest.raises(RankerError, match=rf"{MODEL_FILE} is not a LightGBM model.*train the ranker again"):
        RankerModel.load(folder)
    model.save(folder)
    (folder / MANIFEST_FILE).write_text('{"format": 1, "features": ["no_such_feature"], "depth": 5,')
    with pytest.raises(RankerError, match=rf"{MANIFEST_FILE} cannot be read \(line 1"):
        RankerModel.load(folder)
    manifest = json.loads(json.dumps({"format": 1, "features": ["no_such_feature"], "depth": 5, "library": "x"}))
    (folder / MANIFEST_FILE).write_text(json.dumps(manifest))
    with pytest.raises(RankerError, match="no_such_feature"):
        RankerModel.load(folder)
    (folder / MANIFEST_FILE).unlink()
    with pytest.raises(RankerError, match=f"{MANIFEST_FILE} is missing"):
        RankerModel.load(folder)


def test_labels_come_from_the_kb_and_decisions_and_a_decision_wins():
    kb = kb_queries(GDT, [KBRecord("GDT", (("Gene", "BRAF"), ("Disease", "melanoma"), ("Treatment", "vemurafenib")),
                                   "1", "test", "r1"),
                          KBRecord("GDT", (("Gene", "BRAF"), ("Disease", "melanoma"), ("Treatment", "dabrafenib")),
                                   "4", "test", "r2")])
    decisions = [
        Decision(1, "ann", "GDT", "q", (("Gene", "BRAF"), ("Disease", "melanoma")), "4", Grade.PARTIAL),
        Decision(2, "bob", "GDT", "q", (("Gene", "BRAF"), ("Disease", "melanoma")), "2", Grade.NOT_RELEVANT),
        Decision(3, "ann", "GDT", "q", (("Gene", "EGFR"),), "5", Grade.COMPLETE),
        # curators disagree and nobody adjudicated: the item is left out ...
        Decision(4, "ann", "GDT", "q", (("Gene", "EGFR"),), "2", Grade.COMPLETE),
        Decision(5, "bob", "GDT", "q", (("Gene", "EGFR"),), "2", Grade.NOT_RELEVANT),
        # ... until an adjudication decides it
        Decision(6, "ann", "GDT", "q", (("Gene", "KRAS"),), "2", Grade.COMPLETE),
        Decision(7, "bob", "GDT", "q", (("Gene", "KRAS"),), "2", Grade.NOT_RELEVANT),
        Decision(8, "eve", "GDT", "q", (("Gene", "KRAS"),), "2", Grade.PARTIAL, adjudication=True),
    ]
    merged = merge_queries(kb, decision_queries(GDT, decisions))
    braf = merged[query_key(QUERY)]
    assert dict(braf.gains) == {"1": 2, "4": 1, "2": 0} and braf.sources == {"kb", "decision"}
    assert dict(merged[query_key({"Gene": "EGFR"})].gains) == {"5": 2}
    assert dict(merged[query_key({"Gene": "KRAS"})].gains) == {"2": 1}


def test_candidates_are_the_served_lists_with_ungraded_documents_as_negatives(setup):
    engine, search = setup
    queries = {"q": LabelledQuery(QUERY, {"1": 2}), "none": LabelledQuery({"Gene": "NOSUCHGENE"}, {"1": 2})}
    lists = candidate_lists(search, engine, queries, None, depth=10)
    assert lists.keys == ["q"]  # a query nothing mentions has no list
    assert lists.pmids == [h.pmid for h in _search(engine, search, k=10).hits]
    assert dict(zip(lists.pmids, lists.gains.tolist(), strict=True))["1"] == 2 and lists.gains.sum() == 2


def test_the_stage_reorders_the_served_search_and_says_so(setup, tmp_path):
    engine, search = setup
    plain = _search(engine, search)
    learned = Retriever(lexical=engine.lexical, version="test", learned=_reversing_stage(tmp_path))
    found = _search(learned, search)
    assert [h.pmid for h in found.hits] != [h.pmid for h in plain.hits]
    assert sorted(h.pmid for h in found.hits) == sorted(h.pmid for h in plain.hits)
    assert [h.rank for h in found.hits] == list(range(1, len(found.hits) + 1))
    assert all(h.stages[-1].stage == "learned" for h in found.hits)
    off = _search(learned, search, learned=False)
    assert [h.pmid for h in off.hits] == [h.pmid for h in plain.hits]
    assert attach(Retriever(lexical=engine.lexical), tmp_path / RANKER_FOLDER).learned.depth == 10
