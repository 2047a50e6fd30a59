"""The served fusion chosen on dev: the concept search's dense share follows how good the dense model is."""

from __future__ import annotations

import json

import pytest

from curation.learning.cross_encoder.stage import served_chooser
from curation.learning.served_fusion import choose_dense_share
from curation.learning.splits import EvalSet
from curation.retrieval.relation_search import SearchOptions, search_relation, served_share
from curation.schemas import PO
from curation.versions.manifest import Manifest, Served, read_manifest, write_manifest
from index.loading import manifest_served_share
from index.search import Retriever
from tests.curation.learning.tiny_fusion import DOCS


def _order(engine, search, share):
    found = search_relation(engine, search.linker, search.matcher, search.source, search.documents, PO,
                            {"Gene": "BRAF"}, SearchOptions(dense_share=share))
    return [h.pmid for h in found.hits]


def test_the_share_moves_the_order(setup):
    engine, search = setup
    assert _order(engine, search, 0.0) == ["A", "B"]  # lexical order; C mentions no BRAF: never shown
    assert _order(engine, search, 1.0) == ["B", "A"]


def test_a_dense_model_that_helps_on_dev_gets_a_share_and_one_that_does_not_gets_none(setup):
    engine, search = setup
    values = {"q": {"Gene": "BRAF"}}
    helps = choose_dense_share(engine, search, values, {"q": {"B": 1}})
    assert helps.dense_share > 0 and helps.queries == 1 and helps.dev_scores["0.00"] < helps.dev_scores["1.00"]
    hurts = choose_dense_share(engine, search, values, {"q": {"A": 1}})
    assert hurts.dense_share == 0.0  # ties and losses keep the lexical order


def test_no_dev_values_or_no_dense_model_chooses_nothing(setup):
    engine, search = setup
    assert choose_dense_share(engine, search, {}, {"q": {"B": 1}}) is None
    lexical_only = Retriever(lexical=engine.lexical)
    assert choose_dense_share(lexical_only, search, {"q": {"Gene": "BRAF"}}, {"q": {"B": 1}}) is None
    chooser = served_chooser(lambda: search)
    assert chooser(engine, EvalSet({"q": "BRAF"}, {"q": {"B": 1}}, None, {"q": {"Gene": "BRAF"}})).dense_share > 0


def test_the_chosen_share_is_recorded_served_and_read_back(setup, tmp_path):
    engine, search = setup
    served = Served(dense_share=0.3, dev_scores={"0.00": 0.5, "0.30": 0.7}, queries=4)
    write_manifest(tmp_path / "manifest.json", Manifest(schema="PO", served=served))
    assert read_manifest(tmp_path / "manifest.json").served == served
    assert manifest_served_share(tmp_path) == 0.3
    engine.served_dense_share = 1.0
    try:
        assert served_share(engine) == 1.0
        found = search_relation(engine, search.linker, search.matcher, search.source, search.documents, PO,
                                {"Gene": "BRAF"})
        assert [h.pmid for h in found.hits] == ["B", "A"]  # the page's default is the version's own share
    finally:
        engine.served_dense_share = None


def test_an_older_manifest_without_a_served_share_reads_and_a_bad_one_is_named(tmp_path):
    write_manifest(tmp_path / "manifest.json", Manifest(schema="PO"))
    assert manifest_served_share(tmp_path) is None
    data = json.loads((tmp_path / "manifest.json").read_text())
    data["served"] = {"dense_share": 3}
    (tmp_path / "manifest.json").write_text(json.dumps(data))
    with pytest.raises(Exception, match="served dense share 3.0 is not in"):
        manifest_served_share(tmp_path)


def test_a_built_version_records_its_served_share_and_serves_with_it(setup, tmp_path):
    from curation.learning.build import BuildRequest, build_version
    from index.loading import open_retriever

    _, search = setup
    dev = EvalSet({"q": "Treatment for gene BRAF?"}, {"q": {"B": 1}}, None, {"q": {"Gene": "BRAF"}})
    version = build_version(BuildRequest(schema=PO, version="po-served", train=False), {d.pmid: d for d in DOCS},
                            tmp_path / "models", dev=dev, served=served_chooser(lambda: search))
    served = version.manifest.served
    assert served is not None and served.queries == 1 and set(served.dev_scores) == {
        "0.00", "0.10", "0.20", "0.30", "0.50", "0.70", "1.00"}
    assert open_retriever(version.path).served_dense_share == served.dense_share
    assert version.manifest.device.split(":")[0] in ("cpu", "cuda")  # a device, not the version's name
    # Without typed dev values (an older split) nothing is chosen and the version still publishes.
    plain = build_version(BuildRequest(schema=PO, version="po-plain", train=False), {d.pmid: d for d in DOCS},
                          tmp_path / "models", dev=EvalSet({"q": "BRAF"}, {"q": {"B": 1}}),
                          served=served_chooser(lambda: search))
    assert plain.manifest.served is None and open_retriever(plain.path).served_dense_share is None


def test_a_served_cross_encoder_reorders_within_groups_and_can_be_switched_off(setup):
    from index.rerank import rerank_hits

    engine, search = setup

    class Prefers:
        """A fake cross-encoder that scores a document by whether its text says 'sequenced'."""

        def rerank(self, query, hits, texts, k):
            return rerank_hits(query, hits, texts, lambda pairs: [float("sequenced" in t) for _, t in pairs], k)

    engine.reranker, engine.rerank_k = Prefers(), 50
    try:
        found = search_relation(engine, search.linker, search.matcher, search.source, search.documents, PO,
                                {"Gene": "BRAF"}, SearchOptions(dense_share=0.0, k=1))
        assert [h.pmid for h in found.hits] == ["B"]  # re-ranked over the top 50, then cut to k
        assert found.hits[0].stages[-1].stage == "cross-encoder"
        off = search_relation(engine, search.linker, search.matcher, search.source, search.documents, PO,
                              {"Gene": "BRAF"}, SearchOptions(dense_share=0.0, rerank=False))
        assert [h.pmid for h in off.hits] == ["A", "B"]
        lexical = search_relation(engine, search.linker, search.matcher, search.source, search.documents, PO,
                                  {"Gene": "BRAF"}, SearchOptions(mode="bm25"))
        assert [h.pmid for h in lexical.hits] == ["A", "B"]  # "bm25" mode uses no model at all
    finally:
        engine.reranker, engine.rerank_k = None, 0
